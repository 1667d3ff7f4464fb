/** Resource servers (APIs): what an access token's `aud` names, and which scopes it defines. */
import type { Kysely } from 'kysely';
import { nextVersion, updateAsRead } from './concurrent-change.js';
import type { Database, ResourceServersTable } from './schema.js';

export interface ResourceServerScope {
  value: string;
  description: string;
}

/** Documented fields with behaviour here, plus any other documented field, stored and echoed as sent. */
export interface ResourceServerProperties {
  [field: string]: unknown;
  scopes: ResourceServerScope[];
  signing_alg: 'RS256';
  token_lifetime: number;
  token_lifetime_for_web: number;
  allow_offline_access: boolean;
  skip_consent_for_verifiable_first_party_clients: boolean;
}

export interface ResourceServer extends ResourceServerProperties {
  id: string;
  tenant_id: string;
  identifier: string;
  name: string;
  is_system: boolean;
}

function fromRow(row: ResourceServersTable): ResourceServer {
  return {
    ...(JSON.parse(row.properties) as ResourceServerProperties),
    id: row.id,
    tenant_id: row.tenant_id,
    identifier: row.identifier,
    name: row.name,
    is_system: row.is_system === 1,
  };
}

function toRow(rs: ResourceServer, now: number): Omit<ResourceServersTable, 'created_at'> {
  const { id, tenant_id, identifier, name, is_system, ...props } = rs;
  return { id, tenant_id, identifier, name, is_system: is_system ? 1 : 0, properties: JSON.stringify(props), updated_at: now };
}

export async function insertResourceServer(db: Kysely<Database>, rs: ResourceServer, now = Date.now()): Promise<void> {
  await db.insertInto('resource_servers').values({ ...toRow(rs, now), created_at: now }).execute();
}

/** Replaces the API; role permissions for scopes it no longer defines go with them. */
export async function replaceResourceServer(db: Kysely<Database>, rs: ResourceServer, now = Date.now()): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('resource_servers').set(toRow(rs, now)).where('tenant_id', '=', rs.tenant_id).where('id', '=', rs.id).execute();
    await dropStalePermissions(trx, rs);
  });
}

/** Role permissions for scopes the API no longer defines go with them. */
async function dropStalePermissions(trx: Kysely<Database>, rs: ResourceServer): Promise<void> {
  let stale = trx.deleteFrom('role_permissions').where('tenant_id', '=', rs.tenant_id).where('resource_server_identifier', '=', rs.identifier);
  const kept = rs.scopes.map((s) => s.value);
  if (kept.length > 0) stale = stale.where('permission_name', 'not in', kept);
  await stale.execute();
}

/**
 * Replaces the API only while it is still at the version `readAt` (store/concurrent-change.ts), with the role
 * permissions for scopes it no longer defines; false, and nothing written, when it changed since.
 */
export async function replaceResourceServerAsRead(db: Kysely<Database>, rs: ResourceServer, readAt: number, now = Date.now()): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await updateAsRead(trx, 'resource_servers', { tenant_id: rs.tenant_id, id: rs.id }, readAt, toRow(rs, nextVersion(readAt, now))))) return false;
    await dropStalePermissions(trx, rs);
    return true;
  });
}

/** The API by id, else by identifier, with the version a conditional write names. */
export async function findResourceServerAsRead(
  db: Kysely<Database>,
  tenantId: string,
  idOrIdentifier: string,
): Promise<{ resourceServer: ResourceServer; readAt: number } | undefined> {
  const row =
    (await db.selectFrom('resource_servers').selectAll().where('tenant_id', '=', tenantId).where('id', '=', idOrIdentifier).executeTakeFirst()) ??
    (await db.selectFrom('resource_servers').selectAll().where('tenant_id', '=', tenantId).where('identifier', '=', idOrIdentifier).executeTakeFirst());
  return row ? { resourceServer: fromRow(row), readAt: row.updated_at } : undefined;
}

export async function findResourceServerByIdentifier(
  db: Kysely<Database>,
  tenantId: string,
  identifier: string,
): Promise<ResourceServer | undefined> {
  const row = await db
    .selectFrom('resource_servers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', identifier)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findResourceServerById(db: Kysely<Database>, tenantId: string, id: string): Promise<ResourceServer | undefined> {
  const row = await db.selectFrom('resource_servers').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function listResourceServers(db: Kysely<Database>, tenantId: string): Promise<ResourceServer[]> {
  const rows = await db.selectFrom('resource_servers').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  return rows.map(fromRow);
}

/** Deletes the API with the client grants and role permissions for it, together. */
export async function deleteResourceServer(db: Kysely<Database>, rs: ResourceServer): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('client_grants').where('tenant_id', '=', rs.tenant_id).where('audience', '=', rs.identifier).execute();
    await trx
      .deleteFrom('role_permissions')
      .where('tenant_id', '=', rs.tenant_id)
      .where('resource_server_identifier', '=', rs.identifier)
      .execute();
    await trx.deleteFrom('resource_servers').where('tenant_id', '=', rs.tenant_id).where('id', '=', rs.id).execute();
  });
}

export async function findSystemResourceServer(db: Kysely<Database>, tenantId: string): Promise<ResourceServer | undefined> {
  const row = await db
    .selectFrom('resource_servers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('is_system', '=', 1)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}
