/**
 * The user side of RBAC: /api/v2/users/{id}/roles and /api/v2/users/{id}/permissions (the user resource itself
 * is users.ts). `{id}` must be a user of this tenant that is not linked into another user, else 404
 * `inexistent_user`. Role ids in a body must all exist in the tenant, else 404 `inexistent_role` naming them.
 * Permissions are those of the user's roles only (there are no permissions assigned directly to users), each
 * with the roles it comes from.
 */
import { Type } from '@fastify/type-provider-typebox';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findRoles, listRolePermissions, listUserRoles, unassignRoles } from '../store/roles.js';
import { operation } from './operation.js';
import { pagedList, paginate } from './pagination.js';
import {
  describePermissions,
  IdParams,
  offsetPagingFields,
  PermissionView,
  presentRole,
  requireUser,
  RoleBody,
  RoleIdList,
  RoleNotFound,
  uniqueIds,
  writeMemberships,
} from './roles.js';

const RolesBody = Type.Object({ roles: RoleIdList }, { additionalProperties: false });

/** A permission with the roles it comes from. */
const UserPermissionView = Type.Object({
  ...PermissionView.properties,
  sources: Type.Array(Type.Object({ source_id: Type.String(), source_name: Type.String(), source_type: Type.Literal('ROLE') })),
});

/** Throws 404 naming the ids that are not roles of the tenant. */
async function requireRoles(services: Services, tenantId: string, ids: readonly string[]): Promise<void> {
  const found = new Set((await findRoles(services.store.db, tenantId, ids)).map((r) => r.id));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw new RoleNotFound(missing);
}

export function registerUserRoles(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/users/:id/roles', {
    ...operation(['read:users', 'read:roles'], {
      summary: "List a user's roles",
      params: IdParams,
      querystring: Type.Object(offsetPagingFields, { additionalProperties: false }),
      response: { 200: pagedList(RoleBody, 'roles'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      await requireUser(services, tenantId, request.params.id);
      const roles = await listUserRoles(db, tenantId, request.params.id);
      return paginate(roles.map(presentRole), request.query, 'roles');
    },
  });

  api.post('/users/:id/roles', {
    ...operation(['create:role_members', 'update:users'], {
      summary: 'Assign roles to a user',
      params: IdParams,
      body: RolesBody,
      response: { 204: noContent('Assigned'), ...errorResponses('management', { 404: 'inexistent_user or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const userId = request.params.id;
      await requireUser(services, tenantId, userId);
      const roleIds = uniqueIds(request.body.roles);
      await requireRoles(services, tenantId, roleIds);
      await writeMemberships(
        services,
        tenantId,
        roleIds.map((role_id) => ({ user_id: userId, role_id })),
        async () => {
          await requireUser(services, tenantId, userId);
          await requireRoles(services, tenantId, roleIds);
        },
      );
      return reply.code(204).send();
    },
  });

  api.delete('/users/:id/roles', {
    ...operation(['delete:role_members', 'update:users'], {
      summary: 'Remove roles from a user',
      params: IdParams,
      body: RolesBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_user or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const userId = request.params.id;
      await requireUser(services, tenantId, userId);
      const roleIds = uniqueIds(request.body.roles);
      await requireRoles(services, tenantId, roleIds);
      await unassignRoles(db, tenantId, userId, roleIds);
      return reply.code(204).send();
    },
  });

  api.get('/users/:id/permissions', {
    ...operation(['read:users'], {
      summary: "List a user's permissions, through their roles",
      params: IdParams,
      querystring: Type.Object(offsetPagingFields, { additionalProperties: false }),
      response: { 200: pagedList(UserPermissionView, 'permissions'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      await requireUser(services, tenantId, request.params.id);
      const roles = await listUserRoles(db, tenantId, request.params.id);
      const names = new Map(roles.map((r) => [r.id, r.name]));
      const rows = await listRolePermissions(
        db,
        tenantId,
        roles.map((r) => r.id),
      );
      const permissions = (await describePermissions(services, tenantId, rows)).map(({ permission, roleIds }) => ({
        ...permission,
        sources: roleIds.map((id) => ({ source_id: id, source_name: names.get(id) ?? '', source_type: 'ROLE' as const })),
      }));
      return paginate(permissions, request.query, 'permissions');
    },
  });
}
