/**
 * SAML single logout toward upstream identity providers (federation/saml-logout.ts, #11): what a LogoutRequest
 * must name (the NameID and SessionIndex of the assertion a user last signed in with through a samlp connection),
 * and the logouts sent upstream and not yet answered (the request's ID, which the LogoutResponse's InResponseTo
 * must be, and where the browser goes afterwards), found again by the RelayState's hash.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('saml_upstream_sessions')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.user_id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('name_id', 'text', (c) => c.notNull())
    .addColumn('name_id_format', 'text')
    .addColumn('session_index', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('saml_upstream_logouts')
    /** SHA-256 (hex) of the RelayState sent with the LogoutRequest. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('saml_upstream_logouts_expiry').on('saml_upstream_logouts').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('saml_upstream_logouts').execute();
  await db.schema.dropTable('saml_upstream_sessions').execute();
}
