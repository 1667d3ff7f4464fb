/**
 * FAPI 2.0 building blocks:
 *  - pushed authorization requests (RFC 9126): the parameters a client pushed to /oauth/par, kept until the
 *    browser brings their `request_uri` to /authorize (single use, 60 s at most);
 *  - DPoP (RFC 9449): the JWK thumbprint an authorization code or refresh token is bound to, so that only the
 *    holder of that key redeems it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pushed_authorization_requests')
    /** SHA-256 (hex) of the random part of the request_uri; the request_uri itself is never stored. */
    .addColumn('request_uri_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** The authenticated client that pushed it: only that client_id may use it at /authorize. */
    .addColumn('client_id', 'text', (c) => c.notNull())
    /** JSON: the authorization request parameters (client credentials removed). */
    .addColumn('params', 'text', (c) => c.notNull())
    /** RFC 9449 §10: the thumbprint of the key the PAR request's DPoP proof (or `dpop_jkt`) named. */
    .addColumn('dpop_jkt', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pushed_authorization_requests_expiry').on('pushed_authorization_requests').column('expires_at').execute();

  await db.schema.alterTable('authorization_codes').addColumn('dpop_jkt', 'text').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('dpop_jkt', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('dpop_jkt').execute();
  await db.schema.dropTable('pushed_authorization_requests').execute();
}
