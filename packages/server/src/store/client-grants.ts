/** Client grants: which scopes of which API a client may get with client credentials. */
import type { Kysely } from 'kysely';
import type { ClientGrantsTable, Database } from './schema.js';

export interface ClientGrant {
  id: string;
  tenant_id: string;
  client_id: string;
  audience: string;
  scope: string[];
}

function fromRow(row: ClientGrantsTable): ClientGrant {
  return { id: row.id, tenant_id: row.tenant_id, client_id: row.client_id, audience: row.audience, scope: JSON.parse(row.scope) as string[] };
}

export async function insertClientGrant(db: Kysely<Database>, grant: ClientGrant, now = Date.now()): Promise<void> {
  await db
    .insertInto('client_grants')
    .values({ ...grant, scope: JSON.stringify(grant.scope), created_at: now, updated_at: now })
    .execute();
}

export async function updateClientGrant(db: Kysely<Database>, grant: ClientGrant, now = Date.now()): Promise<void> {
  await db
    .updateTable('client_grants')
    .set({ audience: grant.audience, scope: JSON.stringify(grant.scope), updated_at: now })
    .where('tenant_id', '=', grant.tenant_id)
    .where('id', '=', grant.id)
    .execute();
}

export async function findClientGrant(
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

export async function listClientGrants(db: Kysely<Database>, tenantId: string, clientId?: string): Promise<ClientGrant[]> {
  let query = db.selectFrom('client_grants').selectAll().where('tenant_id', '=', tenantId);
  if (clientId !== undefined) query = query.where('client_id', '=', clientId);
  return (await query.orderBy('created_at').orderBy('id').execute()).map(fromRow);
}
