/**
 * Roles (RBAC): named sets of permissions (resource server scopes) that users are members of.
 * Every query is scoped to a tenant. Multi-row writes run in one transaction; assigning what is already
 * assigned, or removing what is not, is a no-op, so retries are safe.
 */
import type { Kysely } from 'kysely';
import { updateAsRead } from './concurrent-change.js';
import type { Database, RolesTable } from './schema.js';

export type Role = RolesTable;

export interface PermissionRef {
  resource_server_identifier: string;
  permission_name: string;
}

export interface RolePermission extends PermissionRef {
  role_id: string;
}

/** What role-member listings show of a user: the id, the email column and the JSON profile. */
export interface MemberRow {
  user_id: string;
  email: string | null;
  profile: string;
}

/** Enough of a user to decide whether roles may be assigned to it (a linked secondary may not). */
export interface MemberCandidate {
  user_id: string;
  linked_to: string | null;
}

/**
 * By name ignoring case, then exact name, then id: sorted here rather than in SQL, so both dialects agree
 * whatever the database collation.
 */
function byNameThenId(a: Role, b: Role): number {
  return compare(a.name.toLowerCase(), b.name.toLowerCase()) || compare(a.name, b.name) || compare(a.id, b.id);
}

export async function insertRole(db: Kysely<Database>, role: Role): Promise<void> {
  await db.insertInto('roles').values(role).execute();
}

/** Writes name and description only while the role is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateRoleAsRead(db: Kysely<Database>, role: Role, readAt: number): Promise<boolean> {
  const { tenant_id, id, name, description, updated_at } = role;
  return updateAsRead(db, 'roles', { tenant_id, id }, readAt, { name, description, updated_at });
}

export async function findRole(db: Kysely<Database>, tenantId: string, id: string): Promise<Role | undefined> {
  return db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findRoleByName(db: Kysely<Database>, tenantId: string, name: string): Promise<Role | undefined> {
  return db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
}

/** The tenant's roles of these ids (unknown ids are simply absent). */
export async function findRoles(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Role[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', [...ids]).execute();
}

/** All roles of the tenant, by name. */
export async function listRoles(db: Kysely<Database>, tenantId: string): Promise<Role[]> {
  const rows = await db.selectFrom('roles').selectAll().where('tenant_id', '=', tenantId).execute();
  return rows.sort(byNameThenId);
}

/** Deletes the role with its permissions and memberships, together. False when there was no such role. */
export async function deleteRole(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom('role_permissions').where('tenant_id', '=', tenantId).where('role_id', '=', id).execute();
    await trx.deleteFrom('user_roles').where('tenant_id', '=', tenantId).where('role_id', '=', id).execute();
    const result = await trx.deleteFrom('roles').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

// --- permissions ---------------------------------------------------------------------------------------

/** The permissions granted by these roles, ordered by resource server identifier, then permission name. */
export async function listRolePermissions(db: Kysely<Database>, tenantId: string, roleIds: readonly string[]): Promise<RolePermission[]> {
  if (roleIds.length === 0) return [];
  const rows = await db
    .selectFrom('role_permissions')
    .select(['role_id', 'resource_server_identifier', 'permission_name'])
    .where('tenant_id', '=', tenantId)
    .where('role_id', 'in', [...roleIds])
    .execute();
  return rows.sort(
    (a, b) =>
      compare(a.resource_server_identifier, b.resource_server_identifier) || compare(a.permission_name, b.permission_name) || compare(a.role_id, b.role_id),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Grants the permissions to the role; those it already has are left as they are. */
export async function addRolePermissions(db: Kysely<Database>, tenantId: string, roleId: string, permissions: readonly PermissionRef[]): Promise<void> {
  if (permissions.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('role_permissions')
      .values(permissions.map((p) => ({ role_id: roleId, tenant_id: tenantId, ...pick(p) })))
      .onConflict((oc) => oc.columns(['role_id', 'resource_server_identifier', 'permission_name']).doNothing())
      .execute();
  });
}

/** Takes the permissions away from the role; those it does not have are ignored. */
export async function removeRolePermissions(
  db: Kysely<Database>,
  tenantId: string,
  roleId: string,
  permissions: readonly PermissionRef[],
): Promise<void> {
  if (permissions.length === 0) return;
  await db
    .deleteFrom('role_permissions')
    .where('tenant_id', '=', tenantId)
    .where('role_id', '=', roleId)
    .where((eb) =>
      eb.or(
        permissions.map((p) =>
          eb.and([eb('resource_server_identifier', '=', p.resource_server_identifier), eb('permission_name', '=', p.permission_name)]),
        ),
      ),
    )
    .execute();
}

function pick(p: PermissionRef): PermissionRef {
  return { resource_server_identifier: p.resource_server_identifier, permission_name: p.permission_name };
}

// --- memberships ---------------------------------------------------------------------------------------

/** The tenant's users of these ids, with their link state (unknown ids are simply absent). */
export async function findMemberCandidates(db: Kysely<Database>, tenantId: string, userIds: readonly string[]): Promise<MemberCandidate[]> {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('users')
    .select(['user_id', 'linked_to'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', 'in', [...userIds])
    .execute();
}

/** The users holding the role, in the order they got it. Linked secondaries are not users of their own, so left out. */
export async function listRoleMembers(db: Kysely<Database>, tenantId: string, roleId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('user_roles')
    .innerJoin('users', 'users.user_id', 'user_roles.user_id')
    .select(['users.user_id', 'users.email', 'users.profile'])
    .where('user_roles.tenant_id', '=', tenantId)
    .where('user_roles.role_id', '=', roleId)
    .where('users.tenant_id', '=', tenantId)
    .where('users.linked_to', 'is', null)
    .orderBy('user_roles.created_at')
    .orderBy('users.user_id')
    .execute();
}

/** The roles a user holds, by name. */
export async function listUserRoles(db: Kysely<Database>, tenantId: string, userId: string): Promise<Role[]> {
  const rows = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .selectAll('roles')
    .where('user_roles.tenant_id', '=', tenantId)
    .where('user_roles.user_id', '=', userId)
    .where('roles.tenant_id', '=', tenantId)
    .execute();
  return rows.sort(byNameThenId);
}

/** Records the memberships; those that exist already are left as they are (and keep their date). */
export async function assignRoles(
  db: Kysely<Database>,
  tenantId: string,
  memberships: readonly { user_id: string; role_id: string }[],
  now = Date.now(),
): Promise<void> {
  if (memberships.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('user_roles')
      .values(memberships.map((m) => ({ user_id: m.user_id, role_id: m.role_id, tenant_id: tenantId, created_at: now })))
      .onConflict((oc) => oc.columns(['user_id', 'role_id']).doNothing())
      .execute();
  });
}

/** Removes the user from these roles; roles the user does not hold are ignored. */
export async function unassignRoles(db: Kysely<Database>, tenantId: string, userId: string, roleIds: readonly string[]): Promise<void> {
  if (roleIds.length === 0) return;
  await db
    .deleteFrom('user_roles')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('role_id', 'in', [...roleIds])
    .execute();
}
