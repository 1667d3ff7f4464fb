/**
 * /api/v2/roles (RBAC): roles, the permissions they grant (scopes of this tenant's resource servers) and the
 * users who hold them. The user side of memberships (/users/{id}/roles, /users/{id}/permissions) is in
 * user-roles.ts and shares the checks and shapes exported here.
 *
 * Where the reference is silent:
 *  - role names are unique per tenant, compared exactly (case-sensitive), as the database constraint does;
 *  - a permission must name an existing resource server of the tenant (else 404 `inexistent_resource_server`)
 *    and one of its scopes (else 400 `invalid_body`); adding one the role has already is a no-op;
 *  - removals name entities that must exist (the role, the user, the roles: else 404) but ignore memberships
 *    and permissions that are not there, so they can be retried;
 *  - unknown users, and linked secondary identities (not users of their own), are 404 `inexistent_user`;
 *  - a permission whose resource server, or whose scope, no longer exists grants nothing and is not listed.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { newId } from '../crypto/ids.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import { listResourceServers } from '../store/resource-servers.js';
import {
  addRolePermissions,
  assignRoles,
  deleteRole,
  findMemberCandidates,
  findRole,
  findRoleByName,
  insertRole,
  listRoleMembers,
  listRolePermissions,
  listRoles,
  removeRolePermissions,
  updateRoleAsRead,
  type MemberRow,
  type PermissionRef,
  type Role,
  type RolePermission,
} from '../store/roles.js';
import { operation } from './operation.js';
import { pagedList, paginate, pagingFields } from './pagination.js';

// --- shapes shared with user-roles.ts --------------------------------------------------------------------

/** Lists of ids or permissions in one request: at least one, at most this many. */
export const MAX_BATCH = 1000;

const { from: _from, take: _take, ...offsetPaging } = pagingFields;
/** Offset paging only (`page`, `per_page`, `include_totals`), for the lists the reference pages that way. */
export const offsetPagingFields = offsetPaging;

/** PostgreSQL text cannot hold NUL: strings that reach a query refuse it up front (400, not a database error). */
const NO_NUL = '^[^\\u0000]*$';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL }) });

export const RoleBody = Type.Object({ id: Type.String(), name: Type.String(), description: Type.String() });
export type RoleBody = Static<typeof RoleBody>;

export const RoleIdList = Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }), { minItems: 1, maxItems: MAX_BATCH });

const PermissionItem = Type.Object(
  {
    resource_server_identifier: Type.String({ minLength: 1, maxLength: 600, pattern: NO_NUL }),
    permission_name: Type.String({ minLength: 1, maxLength: 280, pattern: NO_NUL }),
  },
  { additionalProperties: false },
);

const PermissionsBody = Type.Object(
  { permissions: Type.Array(PermissionItem, { minItems: 1, maxItems: MAX_BATCH }) },
  { additionalProperties: false },
);

const UsersBody = Type.Object(
  { users: Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }), { minItems: 1, maxItems: MAX_BATCH }) },
  { additionalProperties: false },
);

/** 1–50 characters, not all white space. */
const Name = Type.String({ minLength: 1, maxLength: 50, pattern: '^(?=[\\s\\S]*\\S)[^\\u0000]*$' });
const Description = Type.String({ maxLength: 255, pattern: NO_NUL });

const CreateBody = Type.Object({ name: Name, description: Type.Optional(Description) }, { additionalProperties: false });
const UpdateBody = Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }, { additionalProperties: false });

export function presentRole(role: Role): RoleBody {
  return { id: role.id, name: role.name, description: role.description };
}

export const PermissionView = Type.Object({
  permission_name: Type.String(),
  description: Type.String(),
  resource_server_identifier: Type.String(),
  resource_server_name: Type.String(),
});
export type PermissionBody = Static<typeof PermissionView>;

// --- errors ------------------------------------------------------------------------------------------

export class RoleNotFound extends NotFound {
  constructor(ids?: readonly string[]) {
    super(ids ? `One or more of the roles do not exist: ${listIds(ids)}` : 'The role does not exist.', 'inexistent_role');
  }
}

export class UserNotFound extends NotFound {
  constructor(ids?: readonly string[]) {
    super(ids ? `One or more of the users do not exist: ${listIds(ids)}` : 'The user does not exist.', 'inexistent_user');
  }
}

class RoleNameTaken extends Conflict {
  constructor() {
    super('A role with the same name already exists');
  }
}

function listIds(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return ids.length > 10 ? `${shown} (and ${ids.length - 10} more)` : shown;
}

function unique<T>(items: readonly T[], key: (item: T) => string = String): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

export const uniqueIds = (ids: readonly string[]): string[] => unique(ids);

// --- checks ------------------------------------------------------------------------------------------

export async function requireRole(services: Services, tenantId: string, id: string): Promise<Role> {
  const role = await findRole(services.store.db, tenantId, id);
  if (!role) throw new RoleNotFound();
  return role;
}

/** Throws 404 naming the ids that are not users of the tenant (unknown, or linked into another user). */
export async function requireUsers(services: Services, tenantId: string, ids: readonly string[]): Promise<void> {
  const found = await findMemberCandidates(services.store.db, tenantId, ids);
  const primaries = new Set(found.filter((u) => u.linked_to === null).map((u) => u.user_id));
  const missing = ids.filter((id) => !primaries.has(id));
  if (missing.length > 0) throw new UserNotFound(missing);
}

export async function requireUser(services: Services, tenantId: string, id: string): Promise<void> {
  const [user] = await findMemberCandidates(services.store.db, tenantId, [id]);
  if (!user || user.linked_to !== null) throw new UserNotFound();
}

// --- permissions -------------------------------------------------------------------------------------

interface CatalogueEntry {
  name: string;
  scopes: Map<string, string>;
}

/** The tenant's resource servers by identifier, each with its scopes (value → description). */
async function permissionCatalogue(services: Services, tenantId: string): Promise<Map<string, CatalogueEntry>> {
  const servers = await listResourceServers(services.store.db, tenantId);
  return new Map(servers.map((rs) => [rs.identifier, { name: rs.name, scopes: new Map(rs.scopes.map((s) => [s.value, s.description ?? ''])) }]));
}

/**
 * Role permissions as the API shows them, grouped by permission (rows are ordered by it), each with the roles
 * that grant it. Permissions whose resource server or scope is gone are dropped.
 */
export async function describePermissions(
  services: Services,
  tenantId: string,
  rows: readonly RolePermission[],
): Promise<{ permission: PermissionBody; roleIds: string[] }[]> {
  if (rows.length === 0) return [];
  const catalogue = await permissionCatalogue(services, tenantId);
  const out: { permission: PermissionBody; roleIds: string[] }[] = [];
  let last: { key: string; entry: { permission: PermissionBody; roleIds: string[] } } | undefined;
  for (const row of rows) {
    const rs = catalogue.get(row.resource_server_identifier);
    const description = rs?.scopes.get(row.permission_name);
    if (!rs || description === undefined) continue;
    const key = JSON.stringify([row.resource_server_identifier, row.permission_name]);
    if (last?.key === key) {
      last.entry.roleIds.push(row.role_id);
      continue;
    }
    const entry = {
      permission: {
        permission_name: row.permission_name,
        description,
        resource_server_identifier: row.resource_server_identifier,
        resource_server_name: rs.name,
      },
      roleIds: [row.role_id],
    };
    out.push(entry);
    last = { key, entry };
  }
  return out;
}

/** Each permission must be a scope of one of the tenant's resource servers. */
async function validatePermissions(services: Services, tenantId: string, permissions: readonly PermissionRef[]): Promise<void> {
  const catalogue = await permissionCatalogue(services, tenantId);
  for (const p of permissions) {
    const rs = catalogue.get(p.resource_server_identifier);
    if (!rs) {
      throw new NotFound(`Resource server ${JSON.stringify(p.resource_server_identifier)} does not exist`, 'inexistent_resource_server');
    }
    if (!rs.scopes.has(p.permission_name)) {
      throw new InvalidInput(
        'body',
        `Permission ${JSON.stringify(p.permission_name)} is not defined by resource server ${JSON.stringify(p.resource_server_identifier)}`,
      );
    }
  }
}

const permissionKey = (p: PermissionRef) => JSON.stringify([p.resource_server_identifier, p.permission_name]);

// --- members -----------------------------------------------------------------------------------------

const MemberView = Type.Object({
  user_id: Type.String(),
  email: Type.Optional(Type.String()),
  picture: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});
type MemberBody = Static<typeof MemberView>;

function presentMember(row: MemberRow): MemberBody {
  let profile: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(row.profile);
    if (parsed && typeof parsed === 'object') profile = parsed as Record<string, unknown>;
  } catch {
    // A profile that does not parse shows no name or picture.
  }
  return {
    user_id: row.user_id,
    ...(row.email !== null && { email: row.email }),
    ...(typeof profile.picture === 'string' && { picture: profile.picture }),
    ...(typeof profile.name === 'string' && { name: profile.name }),
  };
}

/**
 * Writes memberships. The role and users were checked just before; if one vanished meanwhile (a concurrent
 * delete, so a foreign key fails), the caller gets the 404 it would have got a moment earlier.
 */
export async function writeMemberships(
  services: Services,
  tenantId: string,
  memberships: readonly { user_id: string; role_id: string }[],
  recheck: () => Promise<void>,
): Promise<void> {
  try {
    await assignRoles(services.store.db, tenantId, memberships);
  } catch (err) {
    await recheck();
    throw err;
  }
}

// --- routes ------------------------------------------------------------------------------------------

export function registerRoles(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/roles', {
    ...operation(['read:roles'], {
      summary: 'List roles',
      querystring: Type.Object(
        {
          ...offsetPagingFields,
          name_filter: Type.Optional(Type.String({ maxLength: 200 })),
          // auth0-deploy-cli asks for the tenant's roles this way; every role here is a tenant role.
          type: Type.Optional(Type.Literal('tenant', { description: 'Only tenant roles: every role here is one' })),
        },
        { additionalProperties: false },
      ),
      response: { 200: pagedList(RoleBody, 'roles') },
    }),
    handler: async (request) => {
      let roles = await listRoles(db, request.tenant.id);
      const filter = request.query.name_filter?.toLowerCase();
      if (filter) roles = roles.filter((r) => r.name.toLowerCase().includes(filter));
      return paginate(roles.map(presentRole), request.query, 'roles');
    },
  });

  api.post('/roles', {
    ...operation(['create:roles'], {
      summary: 'Create a role',
      body: CreateBody,
      response: { 200: RoleBody, ...errorResponses('management', { 409: 'conflict: a role with this name exists' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const { name, description = '' } = request.body;
      if (await findRoleByName(db, tenantId, name)) throw new RoleNameTaken();
      const now = Date.now();
      const role: Role = { id: newId.role(), tenant_id: tenantId, name, description, created_at: now, updated_at: now };
      try {
        await insertRole(db, role);
      } catch (err) {
        // Two creates racing on one name: the unique constraint decides.
        if (await findRoleByName(db, tenantId, name)) throw new RoleNameTaken();
        throw err;
      }
      return presentRole(role);
    },
  });

  api.get('/roles/:id', {
    ...operation(['read:roles'], {
      summary: 'Get a role',
      params: IdParams,
      response: { 200: RoleBody, ...errorResponses('management', { 404: 'inexistent_role' }) },
    }),
    handler: async (request) => presentRole(await requireRole(services, request.tenant.id, request.params.id)),
  });

  api.patch('/roles/:id', {
    ...operation(['update:roles'], {
      summary: 'Update a role',
      params: IdParams,
      body: UpdateBody,
      response: { 200: RoleBody, ...errorResponses('management', { 404: 'inexistent_role', 409: concurrentChangeConflict('conflict: a role with this name exists') }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      // Read, change, conditional write; again when another request changed the role meanwhile, so that a PATCH
      // of the name and one of the description both land (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('role', async () => {
        const role = await requireRole(services, tenantId, request.params.id);
        const { name = role.name, description = role.description } = request.body;
        const nameTaken = async () => {
          const holder = await findRoleByName(db, tenantId, name);
          return holder !== undefined && holder.id !== role.id;
        };
        if (name !== role.name && (await nameTaken())) throw new RoleNameTaken();
        const updated: Role = { ...role, name, description, updated_at: nextVersion(role.updated_at, Date.now()) };
        let written: boolean;
        try {
          written = await updateRoleAsRead(db, updated, role.updated_at);
        } catch (err) {
          if (await nameTaken()) throw new RoleNameTaken();
          throw err;
        }
        if (!written) throw new ConcurrentChange();
        return updated;
      });
      return presentRole(updated);
    },
  });

  api.delete('/roles/:id', {
    ...operation(['delete:roles'], {
      summary: 'Delete a role, with its permissions and memberships',
      params: IdParams,
      response: { 204: noContent('Deleted, with its permissions and memberships'), ...errorResponses('management', { 404: 'inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      if (!(await deleteRole(db, request.tenant.id, request.params.id))) throw new RoleNotFound();
      return reply.code(204).send();
    },
  });

  api.get('/roles/:id/permissions', {
    ...operation(['read:roles'], {
      summary: 'List the permissions a role grants',
      params: IdParams,
      querystring: Type.Object(offsetPagingFields, { additionalProperties: false }),
      response: { 200: pagedList(PermissionView, 'permissions'), ...errorResponses('management', { 404: 'inexistent_role' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const role = await requireRole(services, tenantId, request.params.id);
      const granted = await describePermissions(services, tenantId, await listRolePermissions(db, tenantId, [role.id]));
      return paginate(
        granted.map((g) => g.permission),
        request.query,
        'permissions',
      );
    },
  });

  api.post('/roles/:id/permissions', {
    ...operation(['update:roles'], {
      summary: 'Add permissions to a role',
      params: IdParams,
      body: PermissionsBody,
      response: { 201: noContent('Added (an empty body)'), ...errorResponses('management', { 404: 'inexistent_role or inexistent_resource_server' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const role = await requireRole(services, tenantId, request.params.id);
      const permissions = unique(request.body.permissions, permissionKey);
      await validatePermissions(services, tenantId, permissions);
      try {
        await addRolePermissions(db, tenantId, role.id, permissions);
      } catch (err) {
        await requireRole(services, tenantId, role.id); // deleted meanwhile: 404, as a moment earlier
        throw err;
      }
      return reply.code(201).send();
    },
  });

  api.delete('/roles/:id/permissions', {
    ...operation(['update:roles'], {
      summary: 'Remove permissions from a role',
      params: IdParams,
      body: PermissionsBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const role = await requireRole(services, tenantId, request.params.id);
      await removeRolePermissions(db, tenantId, role.id, unique(request.body.permissions, permissionKey));
      return reply.code(204).send();
    },
  });

  api.get('/roles/:id/users', {
    ...operation(['read:users', 'read:roles', 'read:role_members'], {
      summary: 'List the users who hold a role',
      params: IdParams,
      querystring: Type.Object(pagingFields, { additionalProperties: false }),
      response: { 200: pagedList(MemberView, 'users'), ...errorResponses('management', { 404: 'inexistent_role' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const role = await requireRole(services, tenantId, request.params.id);
      const members = await listRoleMembers(db, tenantId, role.id);
      return paginate(members.map(presentMember), request.query, 'users');
    },
  });

  api.post('/roles/:id/users', {
    ...operation(['create:role_members', 'update:roles'], {
      summary: 'Assign users to a role',
      params: IdParams,
      body: UsersBody,
      response: { 200: noContent('Assigned (an empty body)'), ...errorResponses('management', { 404: 'inexistent_role or inexistent_user' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const role = await requireRole(services, tenantId, request.params.id);
      const userIds = uniqueIds(request.body.users);
      await requireUsers(services, tenantId, userIds);
      await writeMemberships(
        services,
        tenantId,
        userIds.map((user_id) => ({ user_id, role_id: role.id })),
        async () => {
          await requireRole(services, tenantId, role.id);
          await requireUsers(services, tenantId, userIds);
        },
      );
      return reply.code(200).send();
    },
  });
}
