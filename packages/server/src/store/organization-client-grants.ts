/** Client grants associated with organizations (0017). */
import type { Kysely } from 'kysely';
import { findClientGrantById, type ClientGrant } from './client-grants.js';
import type { Database } from './schema.js';

/** The organization's grants, oldest association first. */
export async function listOrganizationClientGrants(db: Kysely<Database>, tenantId: string, organizationId: string): Promise<ClientGrant[]> {
  const rows = await db
    .selectFrom('organization_client_grants')
    .select('grant_id')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('grant_id')
    .execute();
  const grants = await Promise.all(rows.map((r) => findClientGrantById(db, tenantId, r.grant_id)));
  return grants.filter((g): g is ClientGrant => g !== undefined);
}

/** False when the grant was already associated. */
export async function associateOrganizationClientGrant(db: Kysely<Database>, tenantId: string, organizationId: string, grantId: string): Promise<boolean> {
  const result = await db
    .insertInto('organization_client_grants')
    .values({ organization_id: organizationId, grant_id: grantId, tenant_id: tenantId, created_at: Date.now() })
    .onConflict((oc) => oc.columns(['organization_id', 'grant_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** False when the grant was not associated. */
export async function removeOrganizationClientGrant(db: Kysely<Database>, tenantId: string, organizationId: string, grantId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('organization_client_grants')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('grant_id', '=', grantId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether the grant is associated with the organization (machine-to-machine access to it). */
export async function organizationHasClientGrant(db: Kysely<Database>, tenantId: string, organizationId: string, grantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('organization_client_grants')
    .select('grant_id')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('grant_id', '=', grantId)
    .executeTakeFirst();
  return row !== undefined;
}
