/**
 * SAML service provider (federation/samlp.ts, #11): the ids of the assertions a samlp connection has accepted,
 * kept until the assertion could no longer be accepted anyway (its NotOnOrAfter plus the clock skew), so the
 * same assertion is refused a second time by every node (SAML Profiles §4.1.4.5: a bearer assertion is used once).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('saml_assertion_ids')
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    /** The assertion's ID attribute, as the identity provider wrote it (bounded by the strategy). */
    .addColumn('assertion_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('saml_assertion_ids_pk', ['connection_id', 'assertion_id'])
    .execute();
  await db.schema.createIndex('saml_assertion_ids_expiry').on('saml_assertion_ids').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('saml_assertion_ids').execute();
}
