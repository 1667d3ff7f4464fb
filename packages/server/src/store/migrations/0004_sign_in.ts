/**
 * Signing users in: SSO sessions (the browser's cookie, stored as a hash), login transactions (one pending
 * /authorize request while the user is on the hosted pages) and the consents users gave third-party clients.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sso_sessions')
    /** Public id: the ID token's `sid`. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** SHA-256 of the cookie value; the value itself is never stored. */
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    /** Epoch ms of the last authentication (the ID token's `auth_time`). */
    .addColumn('authenticated_at', 'bigint', (c) => c.notNull())
    .addColumn('last_active_at', 'bigint', (c) => c.notNull())
    .addColumn('idle_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_sessions_user').on('sso_sessions').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('login_transactions')
    /** Random, carried in the hosted pages' URLs and forms. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    /** JSON: the validated authorization request. */
    .addColumn('request', 'text', (c) => c.notNull())
    /** SHA-256 of the browser-binding cookie set with the transaction: forms posted from another browser fail. */
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_transactions_expiry').on('login_transactions').column('expires_at').execute();

  await db.schema
    .createTable('user_consents')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    /** The API identifier, or '' for OIDC scopes alone. */
    .addColumn('audience', 'text', (c) => c.notNull())
    /** JSON array of the scopes consented to. */
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_consents_pk', ['tenant_id', 'user_id', 'client_id', 'audience'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('user_consents').execute();
  await db.schema.dropTable('login_transactions').execute();
  await db.schema.dropTable('sso_sessions').execute();
}
