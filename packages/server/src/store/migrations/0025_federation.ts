/**
 * Federation (#11): signing in through an upstream identity provider (an `oidc` or `oauth2` connection).
 *  - `federation_transactions`: one trip to the upstream and back. Keyed by the SHA-256 of the `state` sent
 *    upstream, bound to the browser (the hash of its browser cookie) and to the hosted login transaction it
 *    completes; deleted by the callback that consumes it, so a callback is accepted once. Holds the PKCE
 *    verifier (sealed) and the nonce the upstream's ID token must carry.
 *  - `federated_identities`: which local user an upstream subject of a connection is, so the next login finds
 *    the same user; the upstream's access, refresh and ID tokens, sealed.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('federation_transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('login_transaction_id', 'text', (c) => c.notNull())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    /** Sealed with the context `federation_pkce:<id>`. */
    .addColumn('code_verifier_sealed', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('federation_transactions_expiry').on('federation_transactions').column('expires_at').execute();

  await db.schema
    .createTable('federated_identities')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.user_id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    /** The upstream's subject (OIDC `sub`, or the mapped `user_id` of an OAuth 2.0 profile). */
    .addColumn('subject', 'text', (c) => c.notNull())
    /** Sealed with the context `federated_token:<user_id>:access_token` (…:refresh_token). */
    .addColumn('access_token_sealed', 'text')
    .addColumn('refresh_token_sealed', 'text')
    /** The upstream's last ID token (…:id_token): the `id_token_hint` of a federated logout. */
    .addColumn('id_token_sealed', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('federated_identities_subject').unique().on('federated_identities').columns(['connection_id', 'subject']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('federated_identities').execute();
  await db.schema.dropTable('federation_transactions').execute();
}
