/**
 * Groups: named sets of users that belong to the tenant, to one connection, or to one organization; the roles
 * a group holds tenant-wide (group_roles) and inside an organization (organization_group_roles).
 * Writes take whatever Kysely they are given, so the caller can run them and the change's event in one
 * transaction. Links to users, roles, connections and organizations go with them (ON DELETE CASCADE).
 */
import type { Kysely } from 'kysely';
import { updateAsRead } from './concurrent-change.js';
import type { Database, GroupsTable } from './schema.js';

export type Group = GroupsTable;
export type GroupType = Group['type'];

export interface GroupCriteria {
  connectionId?: string;
  organizationId?: string;
  name?: string;
  externalId?: string;
  /** Substring of the name or external id, ignoring case. */
  search?: string;
}

export async function insertGroup(db: Kysely<Database>, group: Group): Promise<void> {
  await db.insertInto('groups').values(group).execute();
}

/** Writes name and external id only while the group is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateGroupAsRead(db: Kysely<Database>, group: Group, readAt: number): Promise<boolean> {
  const { tenant_id, id, name, external_id, updated_at } = group;
  return updateAsRead(db, 'groups', { tenant_id, id }, readAt, { name, external_id, updated_at });
}

export async function findGroup(db: Kysely<Database>, tenantId: string, id: string): Promise<Group | undefined> {
  return db.selectFrom('groups').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findGroupByName(db: Kysely<Database>, tenantId: string, scope: string, name: string): Promise<Group | undefined> {
  return db.selectFrom('groups').selectAll().where('tenant_id', '=', tenantId).where('scope', '=', scope).where('name', '=', name).executeTakeFirst();
}

/** The tenant's groups meeting the criteria, oldest first. Filtered in memory: group counts per tenant are small. */
export async function listGroups(db: Kysely<Database>, tenantId: string, criteria: GroupCriteria = {}): Promise<Group[]> {
  let query = db.selectFrom('groups').selectAll().where('tenant_id', '=', tenantId);
  if (criteria.connectionId !== undefined) query = query.where('connection_id', '=', criteria.connectionId);
  if (criteria.organizationId !== undefined) query = query.where('organization_id', '=', criteria.organizationId);
  if (criteria.name !== undefined) query = query.where('name', '=', criteria.name);
  if (criteria.externalId !== undefined) query = query.where('external_id', '=', criteria.externalId);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  const term = criteria.search?.toLowerCase();
  if (!term) return rows;
  return rows.filter((g) => g.name.toLowerCase().includes(term) || (g.external_id ?? '').toLowerCase().includes(term));
}

/** Deletes the group; its memberships and role assignments go with it (cascade). */
export async function deleteGroup(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('groups').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// --- members -------------------------------------------------------------------------------------------

export interface GroupMemberRow {
  user_id: string;
  created_at: number;
}

export async function listGroupMembers(db: Kysely<Database>, tenantId: string, groupId: string): Promise<GroupMemberRow[]> {
  return db
    .selectFrom('group_members')
    .select(['user_id', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .orderBy('created_at')
    .orderBy('user_id')
    .execute();
}

/**
 * Adds members; returns the user ids that were not members before, in the order given. The database says which
 * rows it inserted (RETURNING), so two concurrent adds of one member report it once between them.
 */
export async function addGroupMembers(db: Kysely<Database>, tenantId: string, groupId: string, userIds: readonly string[], now = Date.now()): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .insertInto('group_members')
    .values(userIds.map((user_id) => ({ group_id: groupId, user_id, tenant_id: tenantId, created_at: now })))
    .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
    .returning('user_id')
    .execute();
  return inOrder(userIds, rows.map((r) => r.user_id));
}

/** Removes members; returns the user ids that were members, in the order given. */
export async function removeGroupMembers(db: Kysely<Database>, tenantId: string, groupId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .deleteFrom('group_members')
    .where('tenant_id', '=', tenantId)
    .where('group_id', '=', groupId)
    .where('user_id', 'in', [...userIds])
    .returning('user_id')
    .execute();
  return inOrder(userIds, rows.map((r) => r.user_id));
}

// --- roles (tenant-wide, or inside an organization) ----------------------------------------------------

export interface GroupRoleRow {
  id: string;
  name: string;
  description: string;
}

/** Where a group's roles apply: tenant-wide, or inside one organization. */
export type RoleScope = { organizationId?: undefined } | { organizationId: string };

export async function listGroupRoles(db: Kysely<Database>, tenantId: string, groupId: string, scope: RoleScope = {}): Promise<GroupRoleRow[]> {
  const rows =
    scope.organizationId === undefined
      ? await db
          .selectFrom('group_roles')
          .innerJoin('roles', 'roles.id', 'group_roles.role_id')
          .select(['roles.id', 'roles.name', 'roles.description'])
          .where('group_roles.tenant_id', '=', tenantId)
          .where('group_roles.group_id', '=', groupId)
          .execute()
      : await db
          .selectFrom('organization_group_roles')
          .innerJoin('roles', 'roles.id', 'organization_group_roles.role_id')
          .select(['roles.id', 'roles.name', 'roles.description'])
          .where('organization_group_roles.tenant_id', '=', tenantId)
          .where('organization_group_roles.organization_id', '=', scope.organizationId)
          .where('organization_group_roles.group_id', '=', groupId)
          .execute();
  return rows.sort((a, b) => compare(a.name, b.name) || compare(a.id, b.id));
}

/** Assigns roles; returns the ids not held before (as the database reports what it inserted). */
export async function assignGroupRoles(
  db: Kysely<Database>,
  tenantId: string,
  groupId: string,
  roleIds: readonly string[],
  scope: RoleScope = {},
  now = Date.now(),
): Promise<string[]> {
  if (roleIds.length === 0) return [];
  let rows: { role_id: string }[];
  if (scope.organizationId === undefined) {
    rows = await db
      .insertInto('group_roles')
      .values(roleIds.map((role_id) => ({ group_id: groupId, role_id, tenant_id: tenantId, created_at: now })))
      .onConflict((oc) => oc.columns(['group_id', 'role_id']).doNothing())
      .returning('role_id')
      .execute();
  } else {
    const organizationId = scope.organizationId;
    rows = await db
      .insertInto('organization_group_roles')
      .values(roleIds.map((role_id) => ({ organization_id: organizationId, group_id: groupId, role_id, tenant_id: tenantId, created_at: now })))
      .onConflict((oc) => oc.columns(['organization_id', 'group_id', 'role_id']).doNothing())
      .returning('role_id')
      .execute();
  }
  return inOrder(roleIds, rows.map((r) => r.role_id));
}

/** Removes roles; returns the ids that were held. */
export async function unassignGroupRoles(
  db: Kysely<Database>,
  tenantId: string,
  groupId: string,
  roleIds: readonly string[],
  scope: RoleScope = {},
): Promise<string[]> {
  if (roleIds.length === 0) return [];
  const rows =
    scope.organizationId === undefined
      ? await db
          .deleteFrom('group_roles')
          .where('tenant_id', '=', tenantId)
          .where('group_id', '=', groupId)
          .where('role_id', 'in', [...roleIds])
          .returning('role_id')
          .execute()
      : await db
          .deleteFrom('organization_group_roles')
          .where('tenant_id', '=', tenantId)
          .where('organization_id', '=', scope.organizationId)
          .where('group_id', '=', groupId)
          .where('role_id', 'in', [...roleIds])
          .returning('role_id')
          .execute();
  return inOrder(roleIds, rows.map((r) => r.role_id));
}

/** The ids of `asked` that are in `affected`, in the order asked (RETURNING promises no order). */
function inOrder(asked: readonly string[], affected: readonly string[]): string[] {
  const set = new Set(affected);
  return asked.filter((id) => set.has(id));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
