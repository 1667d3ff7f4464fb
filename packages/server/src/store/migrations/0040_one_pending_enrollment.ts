/**
 * At most one pending (unconfirmed) enrollment per user and factor type. The enrollment page resumes a pending
 * TOTP enrollment so that every tab and reload shows the same secret; without this index two tabs opened at the
 * same moment each found none and each made one (seen on PostgreSQL with 20 tabs: three secrets), so a code from
 * the secret one tab showed could be checked against another's. Duplicates already stored are pending secrets
 * nobody confirmed: all but the oldest per user and type are dropped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DELETE FROM mfa_enrollments
    WHERE confirmed = 0 AND EXISTS (
      SELECT 1 FROM mfa_enrollments AS older
      WHERE older.tenant_id = mfa_enrollments.tenant_id AND older.user_id = mfa_enrollments.user_id
        AND older.type = mfa_enrollments.type AND older.confirmed = 0
        AND (older.created_at < mfa_enrollments.created_at OR (older.created_at = mfa_enrollments.created_at AND older.id < mfa_enrollments.id))
    )`.execute(db);
  await db.schema
    .createIndex('mfa_enrollments_one_pending')
    .on('mfa_enrollments')
    .columns(['tenant_id', 'user_id', 'type'])
    .unique()
    .where(sql.ref('confirmed'), '=', 0)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mfa_enrollments_one_pending').execute();
}
