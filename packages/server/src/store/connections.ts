/** Connections: where users come from (a database, passwordless email or SMS, …) and which clients use them. */
import type { Kysely } from 'kysely';
import type { ConnectionsTable, Database } from './schema.js';

export interface ConnectionProperties {
  display_name?: string;
  options: Record<string, unknown>;
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
