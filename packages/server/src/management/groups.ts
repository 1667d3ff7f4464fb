/**
 * /api/v2/groups (B.12): list, get, delete, members, and roles, as the reference has them, plus what the
 * reference leaves to SCIM or directory provisioning and this server offers through the API instead:
 * create (`POST /groups`), rename (`PATCH /groups/{id}`) and member changes (`POST`/`DELETE /groups/{id}/members`).
 * Each change raises its `group.*` event in the change's transaction.
 *
 * Where the reference is silent:
 *  - the extension operations need scopes of the directory-provisioning family, the catalogue having no
 *    `create:groups` or `create:group_members`: `create:directory_provisionings` to create a group,
 *    `update:directory_provisionings` to rename one or change its members;
 *  - a group belongs to the tenant, to one connection (`connection_id`) or to one organization
 *    (`organization_id`); its name is unique within that owner (409 `conflict`);
 *  - members are users of the tenant not linked into another user (else 404 `inexistent_user`); adding a member
 *    twice, or removing a non-member, changes nothing and raises nothing; the same holds for roles;
 *  - ids are `grp_` + 22 base58 characters; anything else is simply not found (404 `inexistent_group`).
 */
import { randomInt } from 'node:crypto';
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { asSent, errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import { findConnectionById } from '../store/connections.js';
import {
  addGroupMembers,
  assignGroupRoles,
  deleteGroup,
  findGroup,
  findGroupByName,
  insertGroup,
  listGroupMembers,
  listGroupRoles,
  listGroups,
  removeGroupMembers,
  unassignGroupRoles,
  updateGroupAsRead,
  type Group,
  type RoleScope,
} from '../store/groups.js';
import { findOrganization } from '../store/organizations.js';
import { findRoles, type Role } from '../store/roles.js';
import type { Database } from '../store/schema.js';
import { groupEventObject, groupRef } from './event-objects.js';
import { operation } from './operation.js';
import { IdList, NO_NUL, PathId, raise, uniqueIds } from './organizations.js';
import { checkpointList, pageBody, type PageWindow, pageWindow, pagingFields } from './pagination.js';
import { requireUsers, RoleBody, RoleNotFound } from './roles.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function newGroupId(): string {
  let id = 'grp_';
  for (let i = 0; i < 22; i++) id += BASE58[randomInt(BASE58.length)];
  return id;
}

/** 1–128 printable ASCII characters, as the reference's group names. */
const GroupName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x20-\\x7E]+$' });
const ExternalId = Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL });
const OwnerId = Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL });

const GroupParams = Type.Object({ id: PathId });
const CheckpointQuery = Type.Object({ from: pagingFields.from, take: pagingFields.take }, { additionalProperties: false });

const CreateBody = Type.Object(
  { name: GroupName, external_id: Type.Optional(ExternalId), connection_id: Type.Optional(OwnerId), organization_id: Type.Optional(OwnerId) },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  { name: Type.Optional(GroupName), external_id: Type.Optional(Type.Union([Type.Null(), ExternalId])) },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    ...pagingFields,
    connection_id: Type.Optional(OwnerId),
    organization_id: Type.Optional(OwnerId),
    name: Type.Optional(GroupName),
    external_id: Type.Optional(ExternalId),
    search: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL })),
    fields: Type.Optional(Type.String({ maxLength: 2000, pattern: NO_NUL })),
    include_fields: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const MembersBody = Type.Object({ members: IdList }, { additionalProperties: false });
export const RolesBody = Type.Object({ roles: IdList }, { additionalProperties: false });

export class GroupNotFound extends NotFound {
  constructor() {
    super('The group does not exist.', 'inexistent_group');
  }
}

class GroupNameTaken extends Conflict {
  constructor() {
    super('A group with this name already exists in the same connection, organization or tenant');
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

export const GroupView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  external_id: Type.Optional(Type.String()),
  type: Type.String({ description: '`connection`, `organization` or `tenant`' }),
  connection_id: Type.Optional(Type.String()),
  organization_id: Type.Optional(Type.String()),
  tenant_name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export function presentGroup(group: Group, tenantName: string): Static<typeof GroupView> {
  return {
    id: group.id,
    name: group.name,
    ...(group.external_id !== null && { external_id: group.external_id }),
    type: group.type,
    ...(group.connection_id !== null && { connection_id: group.connection_id }),
    ...(group.organization_id !== null && { organization_id: group.organization_id }),
    tenant_name: tenantName,
    created_at: iso(group.created_at),
    updated_at: iso(group.updated_at),
  };
}

export async function requireGroup(db: Kysely<Database>, tenantId: string, id: string): Promise<Group> {
  const group = await findGroup(db, tenantId, id);
  if (!group) throw new GroupNotFound();
  return group;
}

/** Throws 404 naming the ids that are not roles of the tenant; returns the roles in the order asked. */
export async function requireRoles(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Role[]> {
  const found = new Map((await findRoles(db, tenantId, ids)).map((r) => [r.id, r]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw new RoleNotFound(missing);
  return ids.map((id) => found.get(id)!);
}

/** A checkpoint page (`{ <collection>, next? }`) of a list already in memory; the default page is 50. */
export function checkpointPage<T>(items: readonly T[], query: { from?: string; take?: number }, collection: string): Record<string, unknown> {
  const window: PageWindow = pageWindow({ take: query.take ?? 50, ...(query.from !== undefined && { from: query.from }) });
  return pageBody(window, {}, items.slice(window.offset, window.offset + window.limit), items.length, collection) as Record<string, unknown>;
}

function selectFields(view: Record<string, unknown>, fields: string | undefined, include: boolean | undefined): Record<string, unknown> {
  const named = new Set((fields ?? '').split(',').map((f) => f.trim()).filter(Boolean));
  if (named.size === 0) return view;
  return Object.fromEntries(Object.entries(view).filter(([key]) => named.has(key) === (include !== false)));
}

/** Assigns or removes a group's roles (tenant-wide, or inside an organization) and raises one event per change. */
export async function changeGroupRoles(
  trx: Kysely<Database>,
  tenantId: string,
  group: Group,
  roles: readonly Role[],
  change: 'assign' | 'remove',
  scope: RoleScope,
  onChanged: (role: Role, now: number) => Promise<void>,
): Promise<void> {
  const ids = roles.map((r) => r.id);
  const now = Date.now();
  const changed = new Set(
    change === 'assign' ? await assignGroupRoles(trx, tenantId, group.id, ids, scope, now) : await unassignGroupRoles(trx, tenantId, group.id, ids, scope),
  );
  for (const role of roles) if (changed.has(role.id)) await onChanged(role, now);
}

export function registerGroups(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/groups', {
    ...operation(['read:groups'], {
      summary: 'List groups',
      querystring: ListQuery,
      response: {
        200: Type.Unsafe<unknown>(
          asSent(
            Type.Object(
              {
                groups: Type.Array(Type.Partial(GroupView, { description: 'A group, or with fields its selected fields' })),
                start: Type.Optional(Type.Integer()),
                limit: Type.Optional(Type.Integer()),
                total: Type.Optional(Type.Integer()),
                next: Type.Optional(Type.String()),
              },
              { description: 'Offset paging: the page with start, limit and total; checkpoint paging (from, take): the page and next' },
            ),
          ),
        ),
      },
    }),
    handler: async (request) => {
      const { connection_id, organization_id, name, external_id, search, fields, include_fields, ...paging } = request.query;
      const groups = await listGroups(db, request.tenant.id, {
        ...(connection_id !== undefined && { connectionId: connection_id }),
        ...(organization_id !== undefined && { organizationId: organization_id }),
        ...(name !== undefined && { name }),
        ...(external_id !== undefined && { externalId: external_id }),
        ...(search !== undefined && { search }),
      });
      const window = pageWindow(paging);
      const views = groups.slice(window.offset, window.offset + window.limit).map((g) => selectFields(presentGroup(g, request.tenant.name), fields, include_fields));
      if (window.checkpoint) return pageBody(window, paging, views, groups.length, 'groups');
      // The reference's group list is an object in either paging style.
      return { groups: views, start: window.offset, limit: window.limit, total: groups.length };
    },
  });

  api.post('/groups', {
    ...operation(['create:directory_provisionings'], {
      summary: 'Create a group (an extension of the reference)',
      body: CreateBody,
      response: {
        201: asSent(GroupView),
        ...errorResponses('management', {
          404: 'inexistent_connection or inexistent_organization',
          409: 'conflict: a group with this name exists in the same connection, organization or tenant',
        }),
      },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const body = request.body;
      if (body.connection_id !== undefined && body.organization_id !== undefined) {
        throw new InvalidInput('body', 'A group belongs to a connection or to an organization, not both');
      }
      if (body.connection_id !== undefined && !(await findConnectionById(db, tenantId, body.connection_id))) {
        throw new NotFound('The connection does not exist.', 'inexistent_connection');
      }
      if (body.organization_id !== undefined && !(await findOrganization(db, tenantId, body.organization_id))) {
        throw new NotFound('No organization found by that id', 'inexistent_organization');
      }
      const scope = body.connection_id ?? body.organization_id ?? '';
      if (await findGroupByName(db, tenantId, scope, body.name)) throw new GroupNameTaken();
      const now = Date.now();
      const group: Group = {
        id: newGroupId(),
        tenant_id: tenantId,
        name: body.name,
        external_id: body.external_id ?? null,
        type: body.connection_id !== undefined ? 'connection' : body.organization_id !== undefined ? 'organization' : 'tenant',
        connection_id: body.connection_id ?? null,
        organization_id: body.organization_id ?? null,
        scope,
        created_at: now,
        updated_at: now,
      };
      try {
        await db.transaction().execute(async (trx) => {
          await insertGroup(trx, group);
          await raise(trx, request, 'group.created', groupEventObject(group));
        });
      } catch (err) {
        if (await findGroupByName(db, tenantId, scope, body.name)) throw new GroupNameTaken();
        throw err;
      }
      return reply.code(201).send(presentGroup(group, request.tenant.name));
    },
  });

  api.get('/groups/:id', {
    ...operation(['read:groups'], {
      summary: 'Get a group',
      params: GroupParams,
      response: { 200: asSent(GroupView), ...errorResponses('management', { 404: 'inexistent_group' }) },
    }),
    handler: async (request) => presentGroup(await requireGroup(db, request.tenant.id, request.params.id), request.tenant.name),
  });

  api.patch('/groups/:id', {
    ...operation(['update:directory_provisionings'], {
      summary: 'Update a group (an extension of the reference)',
      params: GroupParams,
      body: UpdateBody,
      response: {
        200: asSent(GroupView),
        ...errorResponses('management', {
          404: 'inexistent_group',
          409: concurrentChangeConflict('conflict: a group with this name exists in the same connection, organization or tenant'),
        }),
      },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const body = request.body;
      // Read, change, conditional write; again when another request changed the group meanwhile, so that a PATCH
      // of the name and one of the external id both land (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('group', async () => {
        const current = await requireGroup(db, tenantId, request.params.id);
        const updated: Group = {
          ...current,
          name: body.name ?? current.name,
          external_id: body.external_id === undefined ? current.external_id : body.external_id,
          updated_at: nextVersion(current.updated_at, Date.now()),
        };
        const nameTaken = async () => {
          const holder = await findGroupByName(db, tenantId, current.scope, updated.name);
          return holder !== undefined && holder.id !== current.id;
        };
        if (updated.name !== current.name && (await nameTaken())) throw new GroupNameTaken();
        try {
          await db.transaction().execute(async (trx) => {
            if (!(await updateGroupAsRead(trx, updated, current.updated_at))) throw new ConcurrentChange();
            await raise(trx, request, 'group.updated', groupEventObject(updated, { withUpdatedAt: true }), groupEventObject(current, { withUpdatedAt: true }));
          });
        } catch (err) {
          if (!(err instanceof ConcurrentChange) && (await nameTaken())) throw new GroupNameTaken();
          throw err;
        }
        return updated;
      });
      return presentGroup(updated, request.tenant.name);
    },
  });

  api.delete('/groups/:id', {
    ...operation(['delete:groups'], {
      summary: 'Delete a group, with its memberships and roles',
      params: GroupParams,
      response: { 204: noContent('Deleted, with its memberships and roles'), ...errorResponses('management', { 404: 'inexistent_group' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      await db.transaction().execute(async (trx) => {
        const group = await requireGroup(trx, tenantId, request.params.id);
        await deleteGroup(trx, tenantId, group.id);
        await raise(trx, request, 'group.deleted', groupEventObject({ ...group, updated_at: Date.now() }, { withUpdatedAt: true }));
      });
      return reply.code(204).send();
    },
  });

  api.get('/groups/:id/members', {
    ...operation(['read:group_members'], {
      summary: "List a group's members",
      params: GroupParams,
      querystring: Type.Object(
        {
          from: pagingFields.from,
          take: pagingFields.take,
          fields: Type.Optional(Type.String({ maxLength: 2000, pattern: NO_NUL })),
          include_fields: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      response: {
        200: checkpointList(Type.Object({}, { additionalProperties: true, description: 'A member: a user' }), 'members'),
        ...errorResponses('management', { 404: 'inexistent_group' }),
      },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const group = await requireGroup(db, tenantId, request.params.id);
      const members = (await listGroupMembers(db, tenantId, group.id)).map((m) =>
        selectFields(
          {
            id: m.user_id,
            member_type: 'user',
            type: group.type,
            ...(group.connection_id !== null && { connection_id: group.connection_id }),
            created_at: iso(m.created_at),
          },
          request.query.fields,
          request.query.include_fields,
        ),
      );
      return checkpointPage(members, request.query, 'members');
    },
  });

  /** Adds or removes members, raising one event per membership that actually changed. */
  async function changeMembers(request: FastifyRequest, groupId: string, members: readonly string[], change: 'add' | 'remove'): Promise<void> {
    const tenantId = request.tenant.id;
    const userIds = uniqueIds(members);
    if (change === 'add') await requireUsers(services, tenantId, userIds);
    await db.transaction().execute(async (trx) => {
      const group = await requireGroup(trx, tenantId, groupId);
      const changed = change === 'add' ? await addGroupMembers(trx, tenantId, group.id, userIds) : await removeGroupMembers(trx, tenantId, group.id, userIds);
      for (const userId of changed) {
        await raise(trx, request, change === 'add' ? 'group.member.added' : 'group.member.deleted', {
          group: groupRef(group),
          member: { member_type: 'user', id: userId },
        });
      }
    });
  }

  api.post('/groups/:id/members', {
    ...operation(['update:directory_provisionings'], {
      summary: 'Add users to a group (an extension of the reference)',
      params: GroupParams,
      body: MembersBody,
      response: { 204: noContent('Added'), ...errorResponses('management', { 404: 'inexistent_group or inexistent_user' }) },
    }),
    handler: async (request, reply) => {
      await changeMembers(request, request.params.id, request.body.members, 'add');
      return reply.code(204).send();
    },
  });

  api.delete('/groups/:id/members', {
    ...operation(['update:directory_provisionings'], {
      summary: 'Remove users from a group (an extension of the reference)',
      params: GroupParams,
      body: MembersBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_group' }) },
    }),
    handler: async (request, reply) => {
      await changeMembers(request, request.params.id, request.body.members, 'remove');
      return reply.code(204).send();
    },
  });

  api.get('/groups/:id/roles', {
    ...operation(['read:group_roles'], {
      summary: "List a group's roles",
      params: GroupParams,
      querystring: CheckpointQuery,
      response: { 200: checkpointList(RoleBody, 'roles'), ...errorResponses('management', { 404: 'inexistent_group' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const group = await requireGroup(db, tenantId, request.params.id);
      return checkpointPage(await listGroupRoles(db, tenantId, group.id), request.query, 'roles');
    },
  });

  api.post('/groups/:id/roles', {
    ...operation(['create:group_roles'], {
      summary: 'Assign roles to a group',
      params: GroupParams,
      body: RolesBody,
      response: { 204: noContent('Assigned'), ...errorResponses('management', { 404: 'inexistent_group or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      await db.transaction().execute(async (trx) => {
        const group = await requireGroup(trx, tenantId, request.params.id);
        const roles = await requireRoles(trx, tenantId, uniqueIds(request.body.roles));
        await changeGroupRoles(trx, tenantId, group, roles, 'assign', {}, (role, now) =>
          raise(trx, request, 'group.role.assigned', { group: groupRef(group), role: { id: role.id, name: role.name }, created_at: iso(now) }),
        );
      });
      return reply.code(204).send();
    },
  });

  api.delete('/groups/:id/roles', {
    ...operation(['delete:group_roles'], {
      summary: 'Remove roles from a group',
      params: GroupParams,
      body: RolesBody,
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_group or inexistent_role' }) },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      await db.transaction().execute(async (trx) => {
        const group = await requireGroup(trx, tenantId, request.params.id);
        const roles = await requireRoles(trx, tenantId, uniqueIds(request.body.roles));
        await changeGroupRoles(trx, tenantId, group, roles, 'remove', {}, (role, now) =>
          raise(trx, request, 'group.role.deleted', { group: groupRef(group), role: { id: role.id }, deleted_at: iso(now) }),
        );
      });
      return reply.code(204).send();
    },
  });
}
