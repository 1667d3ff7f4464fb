/** Client grants: which scopes of which API a client may get with client credentials. */
import type { Kysely, Selectable } from 'kysely';
import { nextVersion, updateAsRead } from './concurrent-change.js';
import type { ClientGrantsTable, Database } from './schema.js';

/** Documented grant options (B.10), kept in the JSON `properties` column. */
export interface ClientGrantProperties {
  organization_usage?: 'deny' | 'allow' | 'require';
  allow_any_organization?: boolean;
  /** `client` (the default): the client's own access, client credentials. `user`: access on behalf of users. */
  subject_type?: 'client' | 'user';
  authorization_details_types?: string[];
  /** Every scope the API defines now or later, instead of the `scope` list. */
  allow_all_scopes?: boolean;
}

export interface ClientGrant extends ClientGrantProperties {
  id: string;
  tenant_id: string;
  client_id: string;
  audience: string;
  scope: string[];
}

function fromRow(row: Selectable<ClientGrantsTable>): ClientGrant {
  return {
    ...(JSON.parse(row.properties || '{}') as ClientGrantProperties),
    id: row.id,
    tenant_id: row.tenant_id,
    client_id: row.client_id,
    audience: row.audience,
    scope: JSON.parse(row.scope) as string[],
  };
}

function toRow(grant: ClientGrant) {
  const { id, tenant_id, client_id, audience, scope, ...properties } = grant;
  return { id, tenant_id, client_id, audience, scope: JSON.stringify(scope), properties: JSON.stringify(properties) };
}

export async function insertClientGrant(db: Kysely<Database>, grant: ClientGrant, now = Date.now()): Promise<void> {
  await db
    .insertInto('client_grants')
    .values({ ...toRow(grant), created_at: now, updated_at: now })
    .execute();
}

/** Replaces audience, scope and options (the Management API never changes a grant's client or audience). */
export async function updateClientGrant(db: Kysely<Database>, grant: ClientGrant, now = Date.now()): Promise<void> {
  const { scope, properties } = toRow(grant);
  await db
    .updateTable('client_grants')
    .set({ audience: grant.audience, scope, properties, updated_at: now })
    .where('tenant_id', '=', grant.tenant_id)
    .where('id', '=', grant.id)
    .execute();
}

/** As updateClientGrant, only while the grant is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateClientGrantAsRead(db: Kysely<Database>, grant: ClientGrant, readAt: number, now = Date.now()): Promise<boolean> {
  const { tenant_id, id, audience } = grant;
  const { scope, properties } = toRow(grant);
  return updateAsRead(db, 'client_grants', { tenant_id, id }, readAt, { audience, scope, properties, updated_at: nextVersion(readAt, now) });
}

/**
 * The grant a client holds for itself at `audience`, as the client credentials grant uses it: a grant with
 * `subject_type: 'user'` gives access on behalf of users only and is not returned, and one with
 * `allow_all_scopes` carries the API's current scopes.
 */
export async function findClientGrant(
  db: Kysely<Database>,
  tenantId: string,
  clientId: string,
  audience: string,
): Promise<ClientGrant | undefined> {
  const grant = await findClientGrantForPair(db, tenantId, clientId, audience);
  if (!grant || grant.subject_type === 'user') return undefined;
  if (!grant.allow_all_scopes) return grant;
  const api = await db
    .selectFrom('resource_servers')
    .select('properties')
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', audience)
    .executeTakeFirst();
  const scopes = api ? ((JSON.parse(api.properties) as { scopes?: { value: string }[] }).scopes ?? []) : [];
  return { ...grant, scope: scopes.map((s) => s.value) };
}

/** The one grant (of any subject type) for a client and audience, as stored. */
export async function findClientGrantForPair(
  db: Kysely<Database>,
  tenantId: string,
  clientId: string,
  audience: string,
): Promise<ClientGrant | undefined> {
  const row = await db
    .selectFrom('client_grants')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('client_id', '=', clientId)
    .where('audience', '=', audience)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findClientGrantById(db: Kysely<Database>, tenantId: string, id: string): Promise<ClientGrant | undefined> {
  return (await findClientGrantAsRead(db, tenantId, id))?.grant;
}

/** The grant with the version a conditional write names (store/concurrent-change.ts). */
export async function findClientGrantAsRead(db: Kysely<Database>, tenantId: string, id: string): Promise<{ grant: ClientGrant; readAt: number } | undefined> {
  const row = await db.selectFrom('client_grants').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? { grant: fromRow(row), readAt: row.updated_at } : undefined;
}

export async function listClientGrants(db: Kysely<Database>, tenantId: string, clientId?: string): Promise<ClientGrant[]> {
  let query = db.selectFrom('client_grants').selectAll().where('tenant_id', '=', tenantId);
  if (clientId !== undefined) query = query.where('client_id', '=', clientId);
  return (await query.orderBy('created_at').orderBy('id').execute()).map(fromRow);
}

export async function deleteClientGrant(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('client_grants').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
