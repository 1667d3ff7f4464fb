/**
 * MFA enrollment tickets (#14): the reference's POST /api/v2/guardian/enrollments/ticket. A ticket is a link that
 * lets one user enroll a second factor without their password, so only the SHA-256 of its secret is kept, with
 * the user and tenant it is for, what it allows (a factor, more than one enrollment), when it expires and when it
 * was spent. `id` is the reference's `ticket_id`, an identifier that opens nothing.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mfa_enrollment_tickets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    /** SHA-256 (hex) of the secret in the ticket's URL. */
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    /** The factor the user must enroll (the reference's `factor`), or null: the tenant's choice. */
    .addColumn('factor', 'text')
    /** 1: a user who has a factor already may add one (the reference's `allow_multiple_enrollments`). */
    .addColumn('allow_multiple', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('mfa_enrollment_tickets_user').on('mfa_enrollment_tickets').columns(['tenant_id', 'user_id']).execute();
  await db.schema.createIndex('mfa_enrollment_tickets_expiry').on('mfa_enrollment_tickets').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mfa_enrollment_tickets').execute();
}
