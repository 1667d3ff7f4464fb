/** Tenants and their domains, signing keys, clients, resource servers, client grants, connections. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('friendly_name', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('base_url', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tenant_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tenant_domains_tenant').on('tenant_domains').column('tenant_id').execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_key_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('activated_at', 'bigint')
    .addColumn('retired_at', 'bigint')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('signing_keys_tenant_status').on('signing_keys').columns(['tenant_id', 'status']).execute();

  await db.schema
    .createTable('clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('app_type', 'text', (c) => c.notNull())
    .addColumn('is_first_party', 'integer', (c) => c.notNull())
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    .addColumn('client_secret_sealed', 'text')
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('clients_tenant').on('clients').column('tenant_id').execute();

  await db.schema
    .createTable('resource_servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_system', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('resource_servers_tenant_identifier', ['tenant_id', 'identifier'])
    .execute();

  await db.schema
    .createTable('client_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('client_grants_client_audience', ['client_id', 'audience'])
    .execute();
  await db.schema.createIndex('client_grants_tenant').on('client_grants').column('tenant_id').execute();

  await db.schema
    .createTable('connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('strategy', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('connections_tenant_name', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('connection_clients')
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('connection_clients_pk', ['connection_id', 'client_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'connection_clients',
    'connections',
    'client_grants',
    'resource_servers',
    'clients',
    'signing_keys',
    'tenant_domains',
    'tenants',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
