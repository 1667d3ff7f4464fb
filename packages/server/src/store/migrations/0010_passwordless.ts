/**
 * Passwordless: one pending code or magic link per connection and identifier (a new start replaces it).
 * Codes and link tokens are stored as salted SHA-256 only; the values exist just in the message sent.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passwordless_codes')
    /** Random; also the `_id` of the /passwordless/start response. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    /** The email (lower case) or the phone number (E.164) the code was sent to. */
    .addColumn('identifier', 'text', (c) => c.notNull())
    /** SHA-256 of `<id>:<code>`; null when only a link was sent. */
    .addColumn('code_hash', 'text')
    /** SHA-256 of the link token; null when only a code was sent. */
    .addColumn('link_token_hash', 'text', (c) => c.unique())
    /** JSON: the validated authParams of the start request, finished by the link or verify_redirect. */
    .addColumn('auth_params', 'text', (c) => c.notNull())
    /** Code checks spent (right or wrong); the code is dead at the limit. */
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    /** Set by POST /passwordless/verify: the code was right, and GET /passwordless/verify_redirect may use it once. */
    .addColumn('verified_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('passwordless_codes_identifier')
    .on('passwordless_codes')
    .columns(['connection_id', 'identifier'])
    .unique()
    .execute();
  await db.schema.createIndex('passwordless_codes_expiry').on('passwordless_codes').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('passwordless_codes').execute();
}
