/** Connections: where users come from (a database, passwordless email or SMS, …) and which clients use them. */
import type { Kysely } from 'kysely';
import { nextVersion, updateAsRead } from './concurrent-change.js';
import type { ConnectionsTable, Database } from './schema.js';

export interface ConnectionProperties {
  display_name?: string;
  options: Record<string, unknown>;
  is_domain_connection?: boolean;
  show_as_button?: boolean;
  realms?: string[];
  metadata?: Record<string, string>;
  authentication?: { active: boolean };
  connected_accounts?: { active: boolean };
}

export interface Connection extends ConnectionProperties {
  id: string;
  tenant_id: string;
  name: string;
  strategy: string;
}

function fromRow(row: ConnectionsTable): Connection {
  return { ...(JSON.parse(row.properties) as ConnectionProperties), id: row.id, tenant_id: row.tenant_id, name: row.name, strategy: row.strategy };
}

export async function insertConnection(
  db: Kysely<Database>,
  connection: Connection,
  enabledClients: string[],
  now = Date.now(),
): Promise<void> {
  const { id, tenant_id, name, strategy, ...props } = connection;
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('connections')
      .values({ id, tenant_id, name, strategy, properties: JSON.stringify(props), created_at: now, updated_at: now })
      .execute();
    if (enabledClients.length > 0) {
      await trx
        .insertInto('connection_clients')
        .values(enabledClients.map((client_id) => ({ connection_id: id, client_id, tenant_id })))
        .execute();
    }
  });
}

export async function findConnectionByName(db: Kysely<Database>, tenantId: string, name: string): Promise<Connection | undefined> {
  const row = await db
    .selectFrom('connections')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function listEnabledClients(db: Kysely<Database>, connectionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('connection_clients')
    .select('client_id')
    .where('connection_id', '=', connectionId)
    .orderBy('client_id')
    .execute();
  return rows.map((r) => r.client_id);
}

/** Enables the connection for a client (idempotent). */
export async function enableConnectionForClient(db: Kysely<Database>, connection: Connection, clientId: string): Promise<void> {
  const existing = await db
    .selectFrom('connection_clients')
    .select('client_id')
    .where('connection_id', '=', connection.id)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (existing) return;
  await db
    .insertInto('connection_clients')
    .values({ connection_id: connection.id, client_id: clientId, tenant_id: connection.tenant_id })
    .execute();
}

export async function findConnectionById(db: Kysely<Database>, tenantId: string, id: string): Promise<Connection | undefined> {
  return (await findConnectionAsRead(db, tenantId, id))?.connection;
}

/** The connection with the version a conditional write names. */
export async function findConnectionAsRead(db: Kysely<Database>, tenantId: string, id: string): Promise<{ connection: Connection; readAt: number } | undefined> {
  const row = await db.selectFrom('connections').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? { connection: fromRow(row), readAt: row.updated_at } : undefined;
}

/** Every connection of the tenant, oldest first. */
export async function listConnections(db: Kysely<Database>, tenantId: string): Promise<Connection[]> {
  const rows = await db.selectFrom('connections').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  return rows.map(fromRow);
}

/** The enabled clients of every connection of the tenant, by connection id. */
export async function listEnabledClientsByConnection(db: Kysely<Database>, tenantId: string): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('connection_clients')
    .select(['connection_id', 'client_id'])
    .where('tenant_id', '=', tenantId)
    .orderBy('client_id')
    .execute();
  const byConnection = new Map<string, string[]>();
  for (const row of rows) byConnection.set(row.connection_id, [...(byConnection.get(row.connection_id) ?? []), row.client_id]);
  return byConnection;
}

/**
 * Replaces the connection's properties (name and strategy never change) and, when given, its whole set of
 * enabled clients, in one transaction, only while the connection is still at the version `readAt`
 * (store/concurrent-change.ts); false, and nothing written, when it changed since.
 */
export async function updateConnectionAsRead(
  db: Kysely<Database>,
  connection: Connection,
  readAt: number,
  enabledClients?: string[],
  now = Date.now(),
): Promise<boolean> {
  const { id, tenant_id, name: _name, strategy: _strategy, ...props } = connection;
  return db.transaction().execute(async (trx) => {
    const changes = { properties: JSON.stringify(props), updated_at: nextVersion(readAt, now) };
    if (!(await updateAsRead(trx, 'connections', { tenant_id, id }, readAt, changes))) return false;
    if (enabledClients === undefined) return true;
    await trx.deleteFrom('connection_clients').where('connection_id', '=', id).execute();
    const unique = [...new Set(enabledClients)];
    if (unique.length > 0) {
      await trx
        .insertInto('connection_clients')
        .values(unique.map((client_id) => ({ connection_id: id, client_id, tenant_id })))
        .execute();
    }
    return true;
  });
}

/** Enables (`status: true`) or disables clients for the connection, all in one transaction. */
export async function setConnectionClients(
  db: Kysely<Database>,
  connection: Connection,
  changes: readonly { client_id: string; status: boolean }[],
): Promise<void> {
  // The last word on a client wins when a body names it twice.
  const wanted = new Map(changes.map((c) => [c.client_id, c.status]));
  await db.transaction().execute(async (trx) => {
    const enable = [...wanted].filter(([, on]) => on).map(([clientId]) => clientId);
    const disable = [...wanted].filter(([, on]) => !on).map(([clientId]) => clientId);
    if (disable.length > 0) {
      await trx.deleteFrom('connection_clients').where('connection_id', '=', connection.id).where('client_id', 'in', disable).execute();
    }
    if (enable.length === 0) return;
    const present = new Set(
      (
        await trx
          .selectFrom('connection_clients')
          .select('client_id')
          .where('connection_id', '=', connection.id)
          .where('client_id', 'in', enable)
          .execute()
      ).map((r) => r.client_id),
    );
    const missing = enable.filter((clientId) => !present.has(clientId));
    if (missing.length > 0) {
      await trx
        .insertInto('connection_clients')
        .values(missing.map((client_id) => ({ connection_id: connection.id, client_id, tenant_id: connection.tenant_id })))
        .execute();
    }
  });
}

/**
 * Deletes the connection with its users and client links, in one transaction. Identities of other connections
 * that were linked to one of its users become separate users again. Returns false when there was no such
 * connection.
 */
export async function deleteConnection(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('connections').select('id').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    if (!existing) return false;
    const usersOfConnection = trx.selectFrom('users').select('user_id').where('tenant_id', '=', tenantId).where('connection_id', '=', id);
    await trx
      .updateTable('users')
      .set({ linked_to: null })
      .where('tenant_id', '=', tenantId)
      .where('connection_id', '!=', id)
      .where('linked_to', 'in', usersOfConnection)
      .execute();
    // Secondaries first: their primaries are deleted in the next statement.
    await trx.deleteFrom('users').where('tenant_id', '=', tenantId).where('connection_id', '=', id).where('linked_to', 'is not', null).execute();
    await trx.deleteFrom('users').where('tenant_id', '=', tenantId).where('connection_id', '=', id).execute();
    await trx.deleteFrom('connection_clients').where('connection_id', '=', id).execute();
    await trx.deleteFrom('connections').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
    return true;
  });
}
