/**
 * /api/v2/organizations/{id}/members and …/members/{user_id}/roles (B.11): who belongs to an organization and
 * which roles they hold inside it. Each membership or role that actually changes raises its event
 * (`organization.member.added/deleted`, `organization.member.role.assigned/deleted`) in the change's transaction;
 * adding what is there already, or removing what is not, changes nothing and raises nothing.
 *
 * Where the reference is silent:
 *  - members are users of the tenant that are not linked into another user (else 404 `inexistent_user`);
 *  - roles can be given only to members (else 404 `inexistent_member`), and must be roles of the tenant
 *    (else 404 `inexistent_role` naming them);
 *  - removing a member removes the roles it held in the organization, in the same transaction;
 *  - the member list shows `roles` only when `fields` names it, as the reference does.
 */
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import {
  addOrganizationMembers,
  assignOrganizationMemberRoles,
  findOrganizationMembers,
  listOrganizationMemberRoles,
  listOrganizationMembers,
  listOrganizationMembersRoles,
  removeOrganizationMembers,
  unassignOrganizationMemberRoles,
  type OrganizationMemberRow,
} from '../store/organizations.js';
import { findRoles, type Role } from '../store/roles.js';
import type { Database } from '../store/schema.js';
import { memberUserObject } from './event-objects.js';
import { operation } from './operation.js';
import { pageBody, pagedList, pageWindow, paginate, pagingFields } from './pagination.js';
import { IdList, NO_NUL, OrganizationParams, PathId, raise, requireOrganization, uniqueIds } from './organizations.js';
import { requireUsers, RoleBody, RoleNotFound } from './roles.js';

const { from: _from, take: _take, ...offsetPaging } = pagingFields;

const MembersBody = Type.Object({ members: IdList }, { additionalProperties: false });
const RolesBody = Type.Object({ roles: IdList }, { additionalProperties: false });
const MemberParams = Type.Object({ id: PathId, user_id: PathId });

const MembersQuery = Type.Object(
  {
    ...pagingFields,
    fields: Type.Optional(Type.String({ maxLength: 2000, pattern: NO_NUL })),
    include_fields: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

class MemberNotFound extends NotFound {
  constructor() {
    super('The user is not a member of the organization.', 'inexistent_member');
  }
}

/** A member; with `fields`, only the fields asked for (or all but those, with include_fields=false). */
const MemberView = Type.Object({
  user_id: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  picture: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  roles: Type.Optional(Type.Array(Type.Object({ id: Type.String(), name: Type.String() }))),
});
interface MemberBody {
  user_id: string;
  email?: string;
  picture?: string;
  name?: string;
  roles?: { id: string; name: string }[];
}

function profileOf(json: string): { name?: string; picture?: string } {
  try {
    const parsed: unknown = JSON.parse(json);
    if (!parsed || typeof parsed !== 'object') return {};
    const { name, picture } = parsed as Record<string, unknown>;
    return { ...(typeof name === 'string' && { name }), ...(typeof picture === 'string' && { picture }) };
  } catch {
    return {};
  }
}

function presentMember(row: OrganizationMemberRow): MemberBody {
  const profile = profileOf(row.profile);
  // Users show their email as their name when they have none (management/users.ts does the same).
  const name = profile.name ?? row.email;
  return {
    user_id: row.user_id,
    ...(row.email !== null && { email: row.email }),
    ...(profile.picture !== undefined && { picture: profile.picture }),
    ...(name !== null && { name }),
  };
}

/** What member events carry of each of these users, read in the change's transaction. */
async function memberObjects(db: Kysely<Database>, tenantId: string, userIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['user_id', 'email', 'profile'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', 'in', [...userIds])
    .execute();
  return new Map(rows.map((r) => [r.user_id, memberUserObject({ user_id: r.user_id, email: r.email, ...profileOf(r.profile) })]));
}

/** Throws 404 naming the ids that are not roles of the tenant; returns the roles in the order asked. */
async function requireRoles(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Role[]> {
  const found = new Map((await findRoles(db, tenantId, ids)).map((r) => [r.id, r]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw new RoleNotFound(missing);
  return ids.map((id) => found.get(id)!);
}

async function requireMember(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string): Promise<void> {
  const members = await findOrganizationMembers(db, tenantId, organizationId, [userId]);
  if (!members.has(userId)) throw new MemberNotFound();
}

/**
 * Assigns or removes a member's roles in one transaction, raising one event per role that really changed
 * (assigning a role the member has, or removing one it lacks, raises nothing).
 */
async function changeMemberRoles(
  db: Kysely<Database>,
  request: FastifyRequest,
  params: { id: string; user_id: string },
  requested: readonly string[],
  change: 'assign' | 'remove',
): Promise<void> {
  const tenantId = request.tenant.id;
  const roleIds = uniqueIds(requested);
  await db.transaction().execute(async (trx) => {
    const organization = await requireOrganization(trx, tenantId, params.id);
    const userId = params.user_id;
    await requireMember(trx, tenantId, organization.id, userId);
    const roles = await requireRoles(trx, tenantId, roleIds);
    const write = change === 'assign' ? assignOrganizationMemberRoles : unassignOrganizationMemberRoles;
    const changed = new Set(await write(trx, tenantId, organization.id, userId, roleIds));
    const user = (await memberObjects(trx, tenantId, [userId])).get(userId) ?? { user_id: userId };
    const type = change === 'assign' ? 'organization.member.role.assigned' : 'organization.member.role.deleted';
    for (const role of roles.filter((r) => changed.has(r.id))) {
      await raise(trx, request, type, { organization: { id: organization.id }, user, role: { id: role.id, name: role.name } });
    }
  });
}

export function registerOrganizationMembers(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/organizations/:id/members', {
    ...operation(['read:organization_members'], {
      summary: "List an organization's members",
      params: OrganizationParams,
      querystring: MembersQuery,
      response: { 200: pagedList(MemberView, 'members'), ...errorResponses('management', { 404: 'inexistent_organization' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const organization = await requireOrganization(db, tenantId, request.params.id);
      const { fields, include_fields, ...paging } = request.query;
      const window = pageWindow(paging);
      const { members, total } = await listOrganizationMembers(db, tenantId, organization.id, window);
      let views = members.map(presentMember);
      const named = new Set((fields ?? '').split(',').map((f) => f.trim()).filter(Boolean));
      if (named.size > 0) {
        const include = include_fields !== false;
        if (include && named.has('roles')) {
          const roles = await listOrganizationMembersRoles(db, tenantId, organization.id, members.map((m) => m.user_id));
          views = views.map((v) => ({ ...v, roles: roles.get(v.user_id) ?? [] }));
        }
        views = views.map((v) => Object.fromEntries(Object.entries(v).filter(([key]) => named.has(key) === include)) as MemberBody);
      }
      return pageBody(window, paging, views, total, 'members');
    },
  });

  api.post('/organizations/:id/members', {
    ...operation(['create:organization_members'], {
      summary: 'Add members to an organization',
      params: OrganizationParams,
      body: MembersBody,
      response: { 204: noContent('Added'), ...errorResponses('management', { 404: 'inexistent_organization or inexistent_user' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const userIds = uniqueIds(request.body.members);
      await requireUsers(services, tenantId, userIds);
      await db.transaction().execute(async (trx) => {
        const organization = await requireOrganization(trx, tenantId, request.params.id);
        const added = await addOrganizationMembers(trx, tenantId, organization.id, userIds);
        const users = await memberObjects(trx, tenantId, added);
        for (const userId of added) {
          await raise(trx, request, 'organization.member.added', {
            organization: { id: organization.id, name: organization.name },
            user: users.get(userId) ?? { user_id: userId },
          });
        }
      });
      return reply.code(204).send();
    },
  });

  api.delete('/organizations/:id/members', {
    ...operation(['delete:organization_members'], {
      summary: 'Remove members from an organization',
      params: OrganizationParams,
      body: MembersBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_organization' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const userIds = uniqueIds(request.body.members);
      await db.transaction().execute(async (trx) => {
        const organization = await requireOrganization(trx, tenantId, request.params.id);
        const users = await memberObjects(trx, tenantId, userIds);
        const removed = await removeOrganizationMembers(trx, tenantId, organization.id, userIds);
        for (const userId of removed) {
          await raise(trx, request, 'organization.member.deleted', {
            organization: { id: organization.id, name: organization.name },
            user: users.get(userId) ?? { user_id: userId },
          });
        }
      });
      return reply.code(204).send();
    },
  });

  api.get('/organizations/:id/members/:user_id/roles', {
    ...operation(['read:organization_member_roles'], {
      summary: "List a member's roles in an organization",
      params: MemberParams,
      querystring: Type.Object(offsetPaging, { additionalProperties: false }),
      response: { 200: pagedList(RoleBody, 'roles'), ...errorResponses('management', { 404: 'inexistent_organization or inexistent_member' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const organization = await requireOrganization(db, tenantId, request.params.id);
      await requireMember(db, tenantId, organization.id, request.params.user_id);
      const roles = await listOrganizationMemberRoles(db, tenantId, organization.id, request.params.user_id);
      return paginate(roles, request.query, 'roles');
    },
  });

  api.post('/organizations/:id/members/:user_id/roles', {
    ...operation(['create:organization_member_roles'], {
      summary: 'Assign roles to a member of an organization',
      params: MemberParams,
      body: RolesBody,
      response: { 204: noContent('Assigned'), ...errorResponses('management', { 404: 'inexistent_organization, inexistent_member or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      await changeMemberRoles(db, request, request.params, request.body.roles, 'assign');
      return reply.code(204).send();
    },
  });

  api.delete('/organizations/:id/members/:user_id/roles', {
    ...operation(['delete:organization_member_roles'], {
      summary: 'Remove roles from a member of an organization',
      params: MemberParams,
      body: RolesBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_organization, inexistent_member or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      await changeMemberRoles(db, request, request.params, request.body.roles, 'remove');
      return reply.code(204).send();
    },
  });
}
