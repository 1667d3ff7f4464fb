/**
 * Groups inside an organization: /api/v2/organizations/{id}/groups (the organization's own groups) and
 * /api/v2/organizations/{id}/groups/{group_id}/roles (roles a group's members hold in that organization).
 * Assigning and removing raise `organization.group.role.assigned/deleted` in the change's transaction.
 *
 * Where the reference is silent: roles can be given in an organization to its own groups and to tenant or
 * connection groups, not to another organization's groups (404 `inexistent_group`, as for unknown ids).
 */
import { Type } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { listGroupRoles, listGroups, type Group } from '../store/groups.js';
import type { Organization } from '../store/organizations.js';
import type { Database } from '../store/schema.js';
import { groupRef } from './event-objects.js';
import {
  changeGroupRoles,
  checkpointPage,
  GroupNotFound,
  GroupView,
  presentGroup,
  requireGroup,
  requireRoles,
  RolesBody,
} from './groups.js';
import { operation } from './operation.js';
import { OrganizationParams, PathId, raise, requireOrganization, uniqueIds } from './organizations.js';
import { checkpointList, pagingFields } from './pagination.js';
import { RoleBody } from './roles.js';

const GroupRoleParams = Type.Object({ id: PathId, group_id: PathId });
const CheckpointQuery = Type.Object({ from: pagingFields.from, take: pagingFields.take }, { additionalProperties: false });

async function requireGroupOfOrganization(db: Kysely<Database>, organization: Organization, groupId: string): Promise<Group> {
  const group = await requireGroup(db, organization.tenant_id, groupId);
  if (group.type === 'organization' && group.organization_id !== organization.id) throw new GroupNotFound();
  return group;
}

export function registerOrganizationGroups(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/organizations/:id/groups', {
    ...operation(['read:organization_groups'], {
      summary: "List an organization's groups",
      params: OrganizationParams,
      querystring: CheckpointQuery,
      response: { 200: checkpointList(GroupView, 'groups'), ...errorResponses('management', { 404: 'inexistent_organization' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const organization = await requireOrganization(db, tenantId, request.params.id);
      const groups = await listGroups(db, tenantId, { organizationId: organization.id });
      return checkpointPage(
        groups.map((g) => presentGroup(g, request.tenant.name)),
        request.query,
        'groups',
      );
    },
  });

  // Using `/:id` rather than the SDK's `{organization_id}`: one parameter name per path position under /organizations.
  api.get('/organizations/:id/groups/:group_id/roles', {
    ...operation(['read:organization_group_roles'], {
      summary: "List a group's roles in an organization",
      params: GroupRoleParams,
      querystring: CheckpointQuery,
      response: { 200: checkpointList(RoleBody, 'roles'), ...errorResponses('management', { 404: 'inexistent_organization or inexistent_group' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const organization = await requireOrganization(db, tenantId, request.params.id);
      const group = await requireGroupOfOrganization(db, organization, request.params.group_id);
      return checkpointPage(await listGroupRoles(db, tenantId, group.id, { organizationId: organization.id }), request.query, 'roles');
    },
  });

  api.post('/organizations/:id/groups/:group_id/roles', {
    ...operation(['create:organization_group_roles'], {
      summary: 'Assign roles to a group in an organization',
      params: GroupRoleParams,
      body: RolesBody,
      response: { 204: noContent('Assigned'), ...errorResponses('management', { 404: 'inexistent_organization, inexistent_group or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      await db.transaction().execute(async (trx) => {
        const organization = await requireOrganization(trx, tenantId, request.params.id);
        const group = await requireGroupOfOrganization(trx, organization, request.params.group_id);
        const roles = await requireRoles(trx, tenantId, uniqueIds(request.body.roles));
        await changeGroupRoles(trx, tenantId, group, roles, 'assign', { organizationId: organization.id }, (role, now) =>
          raise(trx, request, 'organization.group.role.assigned', {
            organization: { id: organization.id },
            role: { id: role.id, name: role.name },
            group: groupRef(group),
            created_at: new Date(now).toISOString(),
          }),
        );
      });
      return reply.code(204).send();
    },
  });

  api.delete('/organizations/:id/groups/:group_id/roles', {
    ...operation(['delete:organization_group_roles'], {
      summary: 'Remove roles from a group in an organization',
      params: GroupRoleParams,
      body: RolesBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_organization, inexistent_group or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      await db.transaction().execute(async (trx) => {
        const organization = await requireOrganization(trx, tenantId, request.params.id);
        const group = await requireGroupOfOrganization(trx, organization, request.params.group_id);
        const roles = await requireRoles(trx, tenantId, uniqueIds(request.body.roles));
        await changeGroupRoles(trx, tenantId, group, roles, 'remove', { organizationId: organization.id }, (role, now) =>
          raise(trx, request, 'organization.group.role.deleted', {
            organization: { id: organization.id },
            role: { id: role.id },
            group: groupRef(group),
            deleted_at: new Date(now).toISOString(),
          }),
        );
      });
      return reply.code(204).send();
    },
  });
}
