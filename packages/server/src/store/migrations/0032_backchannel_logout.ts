/**
 * OpenID Connect Back-Channel Logout 1.0 (#13):
 *  - `sso_session_clients`: which clients an SSO session authorized (the RPs "that took part", §2.3), so that
 *    when the session ends each of them can be told. Its rows go with the session (cascade), so whoever ends a
 *    session reads them first (auth-api/backchannel-logout/queue.ts).
 *  - `backchannel_logout_deliveries`: the outbox of logout tokens still to POST, one row per client and session,
 *    delivered with retries by the delivery worker (events/worker.ts), never by the request that ended the
 *    session. The token itself is signed at each attempt (a fresh `iat`/`exp`); `jti` stays the row's.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_session_clients')
    .addColumn('session_id', 'text', (c) => c.notNull().references('sso_sessions.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sso_session_clients_pk', ['session_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('backchannel_logout_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    /** The client's back-channel logout URL when the session ended. */
    .addColumn('endpoint', 'text', (c) => c.notNull())
    /** The logout token's `iss` (the issuer the session's ID tokens carried: the tenant's, or a custom domain's). */
    .addColumn('issuer', 'text', (c) => c.notNull())
    /** The logout token's `sub` and `sid`. */
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    /** Why the session ended: the reference's initiator (rp-logout, password-changed, account-deactivated, …). */
    .addColumn('initiator', 'text', (c) => c.notNull())
    /** pending | delivered | failed */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_id', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('backchannel_logout_deliveries_due').on('backchannel_logout_deliveries').columns(['status', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('backchannel_logout_deliveries').execute();
  await db.schema.dropTable('sso_session_clients').execute();
}
