/**
 * Remember this browser (#14): `mfa_remembered_browsers` holds the browsers where a user, after answering the
 * second factor, asked not to be asked again (the Guardian settings' "remember me"). The browser keeps a random
 * secret in a cookie; only its SHA-256 is kept here, with the user it vouches for, so that resetting the user's
 * factors (or the reference's invalidate-remember-browser) forgets every browser of theirs at once.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mfa_remembered_browsers')
    /** SHA-256 (hex) of the cookie's secret. */
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** Moved on each use: the inactivity timeout counts from here. */
    .addColumn('last_used_at', 'bigint', (c) => c.notNull())
    /** created_at plus the tenant's overall timeout at the time (30 days by default). */
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_remembered_browsers_user').on('mfa_remembered_browsers').columns(['tenant_id', 'user_id']).execute();
  await db.schema.createIndex('mfa_remembered_browsers_expiry').on('mfa_remembered_browsers').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mfa_remembered_browsers').execute();
}
