/**
 * Organizations: their members, the roles members hold inside them, and the connections enabled for them.
 * Every query is scoped to a tenant. Writes take whatever Kysely they are given, so the caller can run several
 * of them and the change's event in one transaction (the outbox). Rows that link to users, roles and
 * connections go with them through ON DELETE CASCADE (migration 0007).
 */
import type { Kysely } from 'kysely';
import { updateAsRead } from './concurrent-change.js';
import type { Database, OrganizationConnectionsTable, OrganizationsTable } from './schema.js';

export interface OrganizationBranding {
  logo_url?: string;
  colors?: { primary: string; page_background: string };
}

export interface Organization {
  id: string;
  tenant_id: string;
  name: string;
  display_name: string | null;
  branding: OrganizationBranding | null;
  metadata: Record<string, string>;
  created_at: number;
  updated_at: number;
}

function fromRow(row: OrganizationsTable): Organization {
  return {
    ...row,
    branding: row.branding === null ? null : (JSON.parse(row.branding) as OrganizationBranding),
    metadata: JSON.parse(row.metadata) as Record<string, string>,
  };
}

function toRow(organization: Organization): OrganizationsTable {
  return {
    ...organization,
    branding: organization.branding === null ? null : JSON.stringify(organization.branding),
    metadata: JSON.stringify(organization.metadata),
  };
}

export async function insertOrganization(db: Kysely<Database>, organization: Organization): Promise<void> {
  await db.insertInto('organizations').values(toRow(organization)).execute();
}

/** Writes the organization only while it is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateOrganizationAsRead(db: Kysely<Database>, organization: Organization, readAt: number): Promise<boolean> {
  const { id, tenant_id, created_at: _created, ...fields } = toRow(organization);
  return updateAsRead(db, 'organizations', { tenant_id, id }, readAt, fields);
}

export async function findOrganization(db: Kysely<Database>, tenantId: string, id: string): Promise<Organization | undefined> {
  const row = await db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findOrganizationByName(db: Kysely<Database>, tenantId: string, name: string): Promise<Organization | undefined> {
  const row = await db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export type OrganizationSortField = 'name' | 'display_name' | 'created_at';

/** One window of the tenant's organizations (oldest first unless sorted), with the total count. */
export async function listOrganizations(
  db: Kysely<Database>,
  tenantId: string,
  window: { offset: number; limit: number },
  sort: { field: OrganizationSortField; descending: boolean } = { field: 'created_at', descending: false },
): Promise<{ organizations: Organization[]; total: number }> {
  const base = db.selectFrom('organizations').where('tenant_id', '=', tenantId);
  const direction = sort.descending ? 'desc' : 'asc';
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy(sort.field, direction).orderBy('id', direction).limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { organizations: rows.map(fromRow), total: Number(count.total) };
}

/** Deletes the organization; members, roles, connections and its groups go with it (cascade). */
export async function deleteOrganization(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('organizations').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// --- members -------------------------------------------------------------------------------------------

export interface OrganizationMemberRow {
  user_id: string;
  email: string | null;
  profile: string;
}

/** The organization's members, in the order they joined. */
export async function listOrganizationMembers(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  window: { offset: number; limit: number },
): Promise<{ members: OrganizationMemberRow[]; total: number }> {
  const base = db
    .selectFrom('organization_members')
    .innerJoin('users', 'users.user_id', 'organization_members.user_id')
    .where('organization_members.tenant_id', '=', tenantId)
    .where('organization_members.organization_id', '=', organizationId);
  const [members, count] = await Promise.all([
    base
      .select(['users.user_id', 'users.email', 'users.profile'])
      .orderBy('organization_members.created_at')
      .orderBy('users.user_id')
      .limit(window.limit)
      .offset(window.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { members, total: Number(count.total) };
}

/** Which of these users are members already. */
export async function findOrganizationMembers(db: Kysely<Database>, tenantId: string, organizationId: string, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('organization_members')
    .select('user_id')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', 'in', [...userIds])
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

/** Adds members; returns the user ids that were not members before (as the database reports what it inserted). */
export async function addOrganizationMembers(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  userIds: readonly string[],
  now = Date.now(),
): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .insertInto('organization_members')
    .values(userIds.map((user_id) => ({ organization_id: organizationId, user_id, tenant_id: tenantId, created_at: now })))
    .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
    .returning('user_id')
    .execute();
  return inOrder(userIds, rows.map((r) => r.user_id));
}

/**
 * Removes the members with the roles they held in the organization (run inside a transaction); returns the
 * user ids that were members.
 */
export async function removeOrganizationMembers(db: Kysely<Database>, tenantId: string, organizationId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  await db
    .deleteFrom('organization_member_roles')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', 'in', [...userIds])
    .execute();
  const rows = await db
    .deleteFrom('organization_members')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', 'in', [...userIds])
    .returning('user_id')
    .execute();
  return inOrder(userIds, rows.map((r) => r.user_id));
}

// --- member roles --------------------------------------------------------------------------------------

export interface RoleRef {
  id: string;
  name: string;
  description: string;
}

/** The roles a member holds in the organization, by name. */
export async function listOrganizationMemberRoles(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string): Promise<RoleRef[]> {
  const rows = await db
    .selectFrom('organization_member_roles')
    .innerJoin('roles', 'roles.id', 'organization_member_roles.role_id')
    .select(['roles.id', 'roles.name', 'roles.description'])
    .where('organization_member_roles.tenant_id', '=', tenantId)
    .where('organization_member_roles.organization_id', '=', organizationId)
    .where('organization_member_roles.user_id', '=', userId)
    .execute();
  return rows.sort((a, b) => compare(a.name, b.name) || compare(a.id, b.id));
}

/** The roles of several members at once, for member listings. */
export async function listOrganizationMembersRoles(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  userIds: readonly string[],
): Promise<Map<string, { id: string; name: string }[]>> {
  const byUser = new Map<string, { id: string; name: string }[]>();
  if (userIds.length === 0) return byUser;
  const rows = await db
    .selectFrom('organization_member_roles')
    .innerJoin('roles', 'roles.id', 'organization_member_roles.role_id')
    .select(['organization_member_roles.user_id', 'roles.id', 'roles.name'])
    .where('organization_member_roles.tenant_id', '=', tenantId)
    .where('organization_member_roles.organization_id', '=', organizationId)
    .where('organization_member_roles.user_id', 'in', [...userIds])
    .execute();
  for (const row of rows.sort((a, b) => compare(a.name, b.name) || compare(a.id, b.id))) {
    byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), { id: row.id, name: row.name }]);
  }
  return byUser;
}

/**
 * Assigns roles; returns the ids that were not held before, as the database reports what it inserted
 * (RETURNING), so only real changes raise events, even when two requests race.
 */
export async function assignOrganizationMemberRoles(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  userId: string,
  roleIds: readonly string[],
  now = Date.now(),
): Promise<string[]> {
  if (roleIds.length === 0) return [];
  const rows = await db
    .insertInto('organization_member_roles')
    .values(roleIds.map((role_id) => ({ organization_id: organizationId, user_id: userId, role_id, tenant_id: tenantId, created_at: now })))
    .onConflict((oc) => oc.columns(['organization_id', 'user_id', 'role_id']).doNothing())
    .returning('role_id')
    .execute();
  return inOrder(roleIds, rows.map((r) => r.role_id));
}

/** Removes roles; returns the ids that were held (and are now gone). */
export async function unassignOrganizationMemberRoles(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  userId: string,
  roleIds: readonly string[],
): Promise<string[]> {
  if (roleIds.length === 0) return [];
  const rows = await db
    .deleteFrom('organization_member_roles')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .where('role_id', 'in', [...roleIds])
    .returning('role_id')
    .execute();
  return inOrder(roleIds, rows.map((r) => r.role_id));
}

// --- enabled connections -------------------------------------------------------------------------------

export type OrganizationAccessLevel = 'none' | 'readonly' | 'limited' | 'full';

export interface OrganizationConnection {
  organization_id: string;
  connection_id: string;
  tenant_id: string;
  assign_membership_on_login: boolean;
  show_as_button: boolean;
  is_signup_enabled: boolean;
  is_enabled: boolean;
  organization_access_level: OrganizationAccessLevel | null;
  organization_connection_name: string | null;
  created_at: number;
  updated_at: number;
  /** Joined from the connection. */
  connection_name: string;
  strategy: string;
}

type OrganizationConnectionJoined = OrganizationConnectionsTable & { connection_name: string; strategy: string };

function connectionFromRow(row: OrganizationConnectionJoined): OrganizationConnection {
  return {
    ...row,
    assign_membership_on_login: row.assign_membership_on_login === 1,
    show_as_button: row.show_as_button === 1,
    is_signup_enabled: row.is_signup_enabled === 1,
    is_enabled: row.is_enabled === 1,
    organization_access_level: row.organization_access_level as OrganizationAccessLevel | null,
  };
}

function selectConnections(db: Kysely<Database>, tenantId: string, organizationId: string) {
  return db
    .selectFrom('organization_connections')
    .innerJoin('connections', 'connections.id', 'organization_connections.connection_id')
    .selectAll('organization_connections')
    .select(['connections.name as connection_name', 'connections.strategy'])
    .where('organization_connections.tenant_id', '=', tenantId)
    .where('organization_connections.organization_id', '=', organizationId);
}

/** The connections enabled for the organization, in the order they were added. */
export async function listOrganizationConnections(db: Kysely<Database>, tenantId: string, organizationId: string): Promise<OrganizationConnection[]> {
  const rows = await selectConnections(db, tenantId, organizationId)
    .orderBy('organization_connections.created_at')
    .orderBy('organization_connections.connection_id')
    .execute();
  return rows.map(connectionFromRow);
}

export async function findOrganizationConnection(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  connectionId: string,
): Promise<OrganizationConnection | undefined> {
  const row = await selectConnections(db, tenantId, organizationId).where('organization_connections.connection_id', '=', connectionId).executeTakeFirst();
  return row ? connectionFromRow(row) : undefined;
}

function connectionToRow(c: OrganizationConnection): OrganizationConnectionsTable {
  return {
    organization_id: c.organization_id,
    connection_id: c.connection_id,
    tenant_id: c.tenant_id,
    assign_membership_on_login: c.assign_membership_on_login ? 1 : 0,
    show_as_button: c.show_as_button ? 1 : 0,
    is_signup_enabled: c.is_signup_enabled ? 1 : 0,
    is_enabled: c.is_enabled ? 1 : 0,
    organization_access_level: c.organization_access_level,
    organization_connection_name: c.organization_connection_name,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

export async function insertOrganizationConnection(db: Kysely<Database>, connection: OrganizationConnection): Promise<void> {
  await db.insertInto('organization_connections').values(connectionToRow(connection)).execute();
}

/** Writes the link's settings only while it is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateOrganizationConnectionAsRead(db: Kysely<Database>, connection: OrganizationConnection, readAt: number): Promise<boolean> {
  const { organization_id, connection_id, tenant_id, created_at: _created, ...fields } = connectionToRow(connection);
  return updateAsRead(db, 'organization_connections', { tenant_id, organization_id, connection_id }, readAt, fields);
}

export async function deleteOrganizationConnection(db: Kysely<Database>, tenantId: string, organizationId: string, connectionId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('organization_connections')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The ids of `asked` that are in `affected`, in the order asked (RETURNING promises no order). */
function inOrder(asked: readonly string[], affected: readonly string[]): string[] {
  const set = new Set(affected);
  return asked.filter((id) => set.has(id));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One window of the organizations a user is a member of (by name), with the total count. */
export async function listUserOrganizations(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  window: { offset: number; limit: number },
): Promise<{ organizations: Organization[]; total: number }> {
  const base = db
    .selectFrom('organization_members')
    .innerJoin('organizations', 'organizations.id', 'organization_members.organization_id')
    .where('organization_members.tenant_id', '=', tenantId)
    .where('organization_members.user_id', '=', userId);
  const [rows, count] = await Promise.all([
    base.selectAll('organizations').orderBy('organizations.name').orderBy('organizations.id').limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { organizations: rows.map(fromRow), total: Number(count.total) };
}
