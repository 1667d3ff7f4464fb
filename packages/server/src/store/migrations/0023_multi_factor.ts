/**
 * Multi-factor authentication (#14):
 *  - `mfa_enrollments`: a user's second factors (the Management API's authentication methods). A TOTP
 *    enrollment keeps its secret sealed (crypto/sealing.ts) and the last time step it accepted, so a code is
 *    never accepted twice; a recovery code is kept as a hash only. An enrollment is pending until its first
 *    code proves the authenticator holds the secret.
 *  - `mfa_challenges`: a first factor passed, the second still owed: bound to the hosted login transaction
 *    that is waiting for it. Holds the recovery code to show once, sealed, until the person has seen it.
 *  - `sso_sessions.amr`: how the session's user authenticated (the ID token's `amr`), e.g. ["pwd","mfa"].
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mfa_enrollments')
    /** `totp|dev_<16>` or `recovery-code|dev_<16>`, the reference's authentication method ids. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    /** totp | recovery-code */
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('confirmed', 'integer', (c) => c.notNull().defaultTo(0))
    /** TOTP: the base32 secret, sealed with the context `mfa-totp:<tenant>:<id>`. */
    .addColumn('secret_sealed', 'text')
    /** Recovery code: SHA-256 of `<id>:<code>`. */
    .addColumn('code_hash', 'text')
    /** TOTP: the newest time step a code was accepted for; codes of that step and earlier are refused. */
    .addColumn('last_time_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('confirmed_at', 'bigint')
    .addColumn('last_auth_at', 'bigint')
    .execute();
  await db.schema.createIndex('mfa_enrollments_user').on('mfa_enrollments').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('mfa_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    /** The hosted login transaction waiting for the second factor (one challenge per transaction). */
    .addColumn('transaction_id', 'text', (c) => c.notNull().unique())
    /** JSON array: the first factor's `amr` values (["pwd"]). */
    .addColumn('amr', 'text', (c) => c.notNull())
    /** A new recovery code to show once before the login finishes, sealed; null when there is none to show. */
    .addColumn('recovery_code_sealed', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_challenges_expiry').on('mfa_challenges').column('expires_at').execute();

  await db.schema.alterTable('sso_sessions').addColumn('amr', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sso_sessions').dropColumn('amr').execute();
  await db.schema.dropTable('mfa_challenges').execute();
  await db.schema.dropTable('mfa_enrollments').execute();
}
