/**
 * Single-use client assertions; users (database and passwordless identities, with linking); roles and their
 * permissions and members; user blocks from attack protection.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A `jti` seen once is refused until its assertion would have expired anyway (RFC 7523 §3, replay).
  await db.schema
    .createTable('used_client_assertions')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('used_client_assertions_pk', ['tenant_id', 'client_id', 'jti'])
    .execute();
  await db.schema.createIndex('used_client_assertions_expiry').on('used_client_assertions').column('expires_at').execute();

  await db.schema
    .createTable('users')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('email', 'text')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('username', 'text')
    .addColumn('phone_number', 'text')
    .addColumn('phone_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('password_hash', 'text')
    .addColumn('blocked', 'integer', (c) => c.notNull().defaultTo(0))
    /** JSON: name, given_name, family_name, nickname, picture and other root profile fields. */
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('user_metadata', 'text', (c) => c.notNull())
    .addColumn('app_metadata', 'text', (c) => c.notNull())
    /** Set on a secondary identity: the primary user it was linked to (library rule 8). */
    .addColumn('linked_to', 'text', (c) => c.references('users.user_id').onDelete('cascade'))
    .addColumn('logins_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_login', 'bigint')
    .addColumn('last_ip', 'text')
    .addColumn('last_password_reset', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_tenant_created').on('users').columns(['tenant_id', 'created_at']).execute();
  await db.schema.createIndex('users_linked_to').on('users').column('linked_to').execute();
  // One account per email (and per username) in a connection; stored lower case.
  await db.schema.createIndex('users_connection_email').unique().on('users').columns(['connection_id', 'email']).execute();
  await db.schema.createIndex('users_connection_username').unique().on('users').columns(['connection_id', 'username']).execute();
  await db.schema.createIndex('users_connection_phone').unique().on('users').columns(['connection_id', 'phone_number']).execute();

  await db.schema
    .createTable('roles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('roles_tenant_name', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('role_permissions')
    .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('resource_server_identifier', 'text', (c) => c.notNull())
    .addColumn('permission_name', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('role_permissions_pk', ['role_id', 'resource_server_identifier', 'permission_name'])
    .execute();

  await db.schema
    .createTable('user_roles')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_roles_pk', ['user_id', 'role_id'])
    .execute();
  await db.schema.createIndex('user_roles_role').on('user_roles').column('role_id').execute();

  // Attack protection writes these; the Management API reads and deletes them.
  await db.schema
    .createTable('user_blocks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.references('users.user_id').onDelete('cascade'))
    /** The login identifier (email, username or phone) as typed, lower case. */
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_blocks_tenant_identifier').on('user_blocks').columns(['tenant_id', 'identifier']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['user_blocks', 'user_roles', 'role_permissions', 'roles', 'users', 'used_client_assertions']) {
    await db.schema.dropTable(table).execute();
  }
}
