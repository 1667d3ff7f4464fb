/**
 * Organization client grants (the reference's /api/v2/organizations/{id}/client-grants): which client grants are
 * associated with an organization. Both sides cascade: deleting the organization or the grant removes the link.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organization_client_grants')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('grant_id', 'text', (c) => c.notNull().references('client_grants.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_client_grants_pk', ['organization_id', 'grant_id'])
    .execute();
  await db.schema.createIndex('organization_client_grants_grant').on('organization_client_grants').column('grant_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('organization_client_grants').execute();
}
