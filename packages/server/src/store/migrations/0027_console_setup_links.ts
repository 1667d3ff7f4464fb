/**
 * The admin console (#15): `console_setup_links` holds the one-time links that make a person a console admin
 * (the first admin's link printed by `gatehouse start`, later ones from `gatehouse admin invite`). Only the
 * SHA-256 of a link's secret is kept; a link works once and until it expires.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_setup_links')
    /** SHA-256 (hex) of the secret in the link. */
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** The invited address (the form is then fixed to it); null for the first admin's link, who types one. */
    .addColumn('email', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('console_setup_links_tenant').on('console_setup_links').columns(['tenant_id', 'used_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_setup_links').execute();
}
