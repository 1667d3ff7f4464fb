/**
 * Organizations (members, member roles, enabled connections) and groups (members, roles, and the roles a group
 * holds inside an organization). Every link row references both ends with ON DELETE CASCADE, so deleting a
 * user, role, connection, organization or group never leaves a dangling membership, whichever code path
 * deletes it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    /** JSON: { logo_url?, colors?{primary, page_background} }, or null. */
    .addColumn('branding', 'text')
    /** JSON: string values. */
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('organizations_tenant_name', ['tenant_id', 'name'])
    .execute();
  await db.schema.createIndex('organizations_tenant_created').on('organizations').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('organization_members_user').on('organization_members').column('user_id').execute();

  await db.schema
    .createTable('organization_member_roles')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_member_roles_pk', ['organization_id', 'user_id', 'role_id'])
    .execute();
  await db.schema.createIndex('organization_member_roles_user').on('organization_member_roles').column('user_id').execute();
  await db.schema.createIndex('organization_member_roles_role').on('organization_member_roles').column('role_id').execute();

  await db.schema
    .createTable('organization_connections')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('assign_membership_on_login', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('show_as_button', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('is_signup_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('organization_access_level', 'text')
    .addColumn('organization_connection_name', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_connections_pk', ['organization_id', 'connection_id'])
    .execute();
  await db.schema.createIndex('organization_connections_connection').on('organization_connections').column('connection_id').execute();

  await db.schema
    .createTable('groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    /** tenant | connection | organization */
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.references('connections.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    /** The owner id (connection or organization), '' for tenant groups: names are unique within it, nulls never collide. */
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('groups_tenant_scope_name', ['tenant_id', 'scope', 'name'])
    .execute();
  await db.schema.createIndex('groups_tenant_created').on('groups').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('group_members')
    .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('group_members_user').on('group_members').column('user_id').execute();

  await db.schema
    .createTable('group_roles')
    .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_roles_pk', ['group_id', 'role_id'])
    .execute();
  await db.schema.createIndex('group_roles_role').on('group_roles').column('role_id').execute();

  await db.schema
    .createTable('organization_group_roles')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('role_id', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_group_roles_pk', ['organization_id', 'group_id', 'role_id'])
    .execute();
  await db.schema.createIndex('organization_group_roles_group').on('organization_group_roles').column('group_id').execute();
  await db.schema.createIndex('organization_group_roles_role').on('organization_group_roles').column('role_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'organization_group_roles',
    'group_roles',
    'group_members',
    'groups',
    'organization_connections',
    'organization_member_roles',
    'organization_members',
    'organizations',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
