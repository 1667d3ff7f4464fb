/**
 * What the user grants leave behind: authorization codes (single use, kept a while after redemption so a replay
 * is recognised), refresh tokens (in families, for rotation and reuse detection) and the ids of access tokens
 * revoked before their expiry. Tokens are stored as SHA-256 hashes only. Rows go with their user, client or
 * tenant (ON DELETE CASCADE), so deleting one leaves none of its tokens usable.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('authorization_codes')
    /** SHA-256 (hex) of the code. */
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    /** The S256 PKCE challenge, if one was sent. */
    .addColumn('code_challenge', 'text')
    /** JSON: scopes, audience, nonce, auth_time, session_id. */
    .addColumn('authorization', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('redeemed_at', 'bigint')
    /** What the redemption issued, so that a replay can revoke it. */
    .addColumn('access_token_jti', 'text')
    .addColumn('access_token_expires_at', 'bigint')
    .addColumn('refresh_token_family', 'text')
    .addColumn('replayed_at', 'bigint')
    .execute();
  await db.schema.createIndex('authorization_codes_expiry').on('authorization_codes').column('expires_at').execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    /** SHA-256 (hex) of the token. */
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** Every token descended from one grant shares the family of the first. */
    .addColumn('family_id', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'text')
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('audience', 'text')
    /** JSON array of the granted scopes. */
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    /** Epoch ms of the user's authentication (the ID token's auth_time). */
    .addColumn('authenticated_at', 'bigint', (c) => c.notNull())
    /** 1 when issued under rotation; a client switching rotation type leaves the other kind unusable. */
    .addColumn('rotating', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('rotated_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    /** Absolute expiry (the family's), null when it never expires. */
    .addColumn('expires_at', 'bigint')
    /** Expiry for inactivity, moved on every use; null when it never expires. */
    .addColumn('idle_expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family_id').execute();
  await db.schema.createIndex('refresh_tokens_user').on('refresh_tokens').columns(['tenant_id', 'user_id', 'client_id']).execute();
  await db.schema.createIndex('refresh_tokens_client').on('refresh_tokens').column('client_id').execute();

  // Access tokens are JWTs checked without a lookup; the few revoked early are listed until they expire.
  await db.schema
    .createTable('revoked_access_tokens')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('revoked_access_tokens_pk', ['tenant_id', 'jti'])
    .execute();
  await db.schema.createIndex('revoked_access_tokens_expiry').on('revoked_access_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['revoked_access_tokens', 'refresh_tokens', 'authorization_codes']) {
    await db.schema.dropTable(table).execute();
  }
}
