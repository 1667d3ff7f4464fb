/**
 * /api/v2/organizations (B.11): create, list (offset or checkpoint paging), get by id or by name, update, delete.
 * Members and their roles are in organization-members.ts, enabled connections in organization-connections.ts,
 * groups and their roles inside an organization in organization-groups.ts; they share the checks exported here.
 *
 * Every change and its event (`organization.*`) are written in one transaction (the outbox).
 * Where the reference is silent:
 *  - names are unique per tenant, compared exactly; they are lower-case letters, digits, `-` and `_`,
 *    starting with a letter or digit (409 `conflict` when taken);
 *  - PATCH replaces `name`, `display_name` and `branding` (`branding: null` removes it) and merges `metadata`
 *    one level deep (a key set to null is removed), as users' metadata merges;
 *  - `enabled_connections` on create enables each (at most 10), raising `organization.connection.added` for each;
 *  - deleting an organization deletes its own groups too, raising `group.deleted` for each (memberships, roles
 *    and enabled connections go silently: their organization is gone);
 *  - `token_quota`, `third_party_client_access` and `is_app_entitlement_active` are not supported: 400.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { randomAlphanumeric } from '../crypto/ids.js';
import type { EventType } from '../events/catalogue.js';
import { eventContextFrom } from '../events/context.js';
import { emitEvent } from '../events/outbox.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';
import { listGroups } from '../store/groups.js';
import {
  deleteOrganization,
  findOrganization,
  findOrganizationByName,
  insertOrganization,
  insertOrganizationConnection,
  listOrganizations,
  updateOrganizationAsRead,
  type Organization,
  type OrganizationBranding,
  type OrganizationConnection,
  type OrganizationSortField,
} from '../store/organizations.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import type { Database } from '../store/schema.js';
import { deletedOrganizationEventObject, groupEventObject, organizationConnectionEventObject, organizationEventObject } from './event-objects.js';
import { operation } from './operation.js';
import { pageBody, pagedList, pageWindow, pagingFields } from './pagination.js';

// --- shared shapes and checks ------------------------------------------------------------------------

/** PostgreSQL text cannot hold NUL: strings that reach a query refuse it up front. */
export const NO_NUL = '^[^\\u0000]*$';
export const MAX_BATCH = 1000;

/** Path ids: bounded and NUL-free, so any malformed id is a plain 404 lookup miss, never a database error. */
export const PathId = Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL });
export const OrganizationParams = Type.Object({ id: PathId });

export const IdList = Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }), { minItems: 1, maxItems: MAX_BATCH });

export class OrganizationNotFound extends NotFound {
  constructor() {
    super('No organization found by that id or name', 'inexistent_organization');
  }
}

export async function requireOrganization(db: Kysely<Database>, tenantId: string, id: string): Promise<Organization> {
  const organization = await findOrganization(db, tenantId, id);
  if (!organization) throw new OrganizationNotFound();
  return organization;
}

/** Raises an event of the request's tenant, with the request as its context; call with the change's transaction. */
export function raise(
  trx: Kysely<Database>,
  request: FastifyRequest,
  type: EventType,
  object: Record<string, unknown>,
  previousObject?: Record<string, unknown>,
): Promise<void> {
  return emitEvent(trx, {
    tenantId: request.tenant.id,
    type,
    object,
    ...(previousObject && { previousObject }),
    context: eventContextFrom(request),
  });
}

export function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

export function listIds(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return ids.length > 10 ? `${shown} (and ${ids.length - 10} more)` : shown;
}

// --- schemas -----------------------------------------------------------------------------------------

const Name = Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-z0-9][a-z0-9_-]*$' });
const DisplayName = Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL });
const HexColor = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' });
const Branding = Type.Object(
  {
    logo_url: Type.Optional(Type.String({ format: 'uri', maxLength: 2000, pattern: '^https?://' })),
    colors: Type.Optional(Type.Object({ primary: HexColor, page_background: HexColor }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
const MetadataKey = '^[A-Za-z0-9_.:-]{1,255}$';
// Values are checked by checkMetadata: the schema validator coerces scalars (1 → "1", null → ""), which would
// turn a refused number or a delete marker into a string.
const Metadata = Type.Record(Type.String({ pattern: MetadataKey }), Type.Unknown(), { maxProperties: 25, additionalProperties: false });

export const ConnectionSettings = {
  assign_membership_on_login: Type.Optional(Type.Boolean()),
  show_as_button: Type.Optional(Type.Boolean()),
  is_signup_enabled: Type.Optional(Type.Boolean()),
};
const EnabledConnection = Type.Object(
  { connection_id: Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }), ...ConnectionSettings },
  { additionalProperties: false },
);

const CreateBody = Type.Object(
  {
    name: Name,
    display_name: Type.Optional(DisplayName),
    branding: Type.Optional(Branding),
    metadata: Type.Optional(Metadata),
    enabled_connections: Type.Optional(Type.Array(EnabledConnection, { maxItems: 10 })),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    display_name: Type.Optional(DisplayName),
    branding: Type.Optional(Type.Union([Branding, Type.Null()])),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  { ...pagingFields, sort: Type.Optional(Type.String({ pattern: '^(name|display_name|created_at):(1|-1)$' })) },
  { additionalProperties: false },
);

export const OrganizationBody = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    display_name: Type.Optional(Type.String()),
    branding: Type.Optional(Type.Unknown()),
    metadata: Type.Record(Type.String(), Type.String()),
  },
  { additionalProperties: true },
);
type OrganizationBody = Static<typeof OrganizationBody>;

export function presentOrganization(organization: Organization): OrganizationBody {
  return {
    id: organization.id,
    name: organization.name,
    ...(organization.display_name !== null && { display_name: organization.display_name }),
    ...(organization.branding !== null && { branding: organization.branding }),
    metadata: organization.metadata,
  };
}

class OrganizationNameTaken extends Conflict {
  constructor() {
    super('An organization with this name already exists');
  }
}

function newOrganizationId(): string {
  return `org_${randomAlphanumeric(16)}`;
}

/** Metadata values are strings of at most 255 characters; in a PATCH, null removes the key. */
function checkMetadata(metadata: Record<string, unknown>, allowNull: boolean): Record<string, string | null> {
  for (const [key, value] of Object.entries(metadata)) {
    if (value === null && allowNull) continue;
    if (typeof value !== 'string' || value.length > 255 || value.includes('\u0000')) {
      throw new InvalidInput('body', `metadata.${key}: must be a string of at most 255 characters${allowNull ? ', or null to remove it' : ''}`);
    }
  }
  return metadata as Record<string, string | null>;
}

function mergeMetadata(current: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const merged: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  if (Object.keys(merged).length > 25) throw new InvalidInput('body', 'metadata: at most 25 properties');
  return merged;
}

function brandingOf(input: Static<typeof Branding>): OrganizationBranding | null {
  const branding: OrganizationBranding = {
    ...(input.logo_url !== undefined && { logo_url: input.logo_url }),
    ...(input.colors !== undefined && { colors: { primary: input.colors.primary, page_background: input.colors.page_background } }),
  };
  return Object.keys(branding).length > 0 ? branding : null;
}

// --- routes ------------------------------------------------------------------------------------------

export function registerOrganizations(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/organizations', {
    ...operation(['read:organizations'], {
      summary: 'List organizations',
      querystring: ListQuery,
      response: { 200: pagedList(OrganizationBody, 'organizations') },
    }),
    handler: async (request) => {
      const { sort, ...paging } = request.query;
      const window = pageWindow(paging);
      let order: { field: OrganizationSortField; descending: boolean } | undefined;
      if (sort) {
        const [field, direction] = sort.split(':') as [OrganizationSortField, string];
        order = { field, descending: direction === '-1' };
      }
      const { organizations, total } = await listOrganizations(db, request.tenant.id, window, order);
      return pageBody(window, paging, organizations.map(presentOrganization), total, 'organizations');
    },
  });

  api.post('/organizations', {
    ...operation(['create:organizations'], {
      summary: 'Create an organization',
      body: CreateBody,
      response: {
        201: OrganizationBody,
        ...errorResponses('management', {
          404: 'inexistent_connection: an enabled connection does not exist',
          409: 'conflict: an organization with this name exists',
        }),
      },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      const body = request.body;
      if (await findOrganizationByName(db, tenantId, body.name)) throw new OrganizationNameTaken();
      const now = Date.now();
      const organization: Organization = {
        id: newOrganizationId(),
        tenant_id: tenantId,
        name: body.name,
        display_name: body.display_name ?? null,
        branding: body.branding ? brandingOf(body.branding) : null,
        metadata: checkMetadata(body.metadata ?? {}, false) as Record<string, string>,
        created_at: now,
        updated_at: now,
      };
      const enabled: OrganizationConnection[] = [];
      for (const item of body.enabled_connections ?? []) {
        if (enabled.some((c) => c.connection_id === item.connection_id)) continue;
        const connection = await findConnectionById(db, tenantId, item.connection_id);
        if (!connection) throw new InvalidInput('body', `enabled_connections: the connection ${item.connection_id} does not exist`);
        enabled.push({
          organization_id: organization.id,
          connection_id: connection.id,
          tenant_id: tenantId,
          assign_membership_on_login: item.assign_membership_on_login ?? false,
          show_as_button: item.show_as_button ?? true,
          is_signup_enabled: item.is_signup_enabled ?? false,
          is_enabled: true,
          organization_access_level: null,
          organization_connection_name: null,
          created_at: now,
          updated_at: now,
          connection_name: connection.name,
          strategy: connection.strategy,
        });
      }
      try {
        await db.transaction().execute(async (trx) => {
          await insertOrganization(trx, organization);
          await raise(trx, request, 'organization.created', organizationEventObject(organization));
          for (const connection of enabled) {
            await insertOrganizationConnection(trx, connection);
            await raise(trx, request, 'organization.connection.added', organizationConnectionEventObject(organization, connection));
          }
        });
      } catch (err) {
        // Two creates racing on one name: the unique constraint decides.
        if (await findOrganizationByName(db, tenantId, body.name)) throw new OrganizationNameTaken();
        throw err;
      }
      return reply.code(201).send({
        ...presentOrganization(organization),
        ...(enabled.length > 0 && {
          enabled_connections: enabled.map((c) => ({
            connection_id: c.connection_id,
            assign_membership_on_login: c.assign_membership_on_login,
            show_as_button: c.show_as_button,
            is_signup_enabled: c.is_signup_enabled,
          })),
        }),
      });
    },
  });

  api.get('/organizations/name/:name', {
    ...operation(['read:organizations'], {
      summary: 'Get an organization by its name',
      params: Type.Object({ name: PathId }),
      response: { 200: OrganizationBody, ...errorResponses('management', { 404: 'inexistent_organization' }) },
    }),
    handler: async (request) => {
      const organization = await findOrganizationByName(db, request.tenant.id, request.params.name);
      if (!organization) throw new OrganizationNotFound();
      return presentOrganization(organization);
    },
  });

  api.get('/organizations/:id', {
    ...operation(['read:organizations'], {
      summary: 'Get an organization',
      params: OrganizationParams,
      response: { 200: OrganizationBody, ...errorResponses('management', { 404: 'inexistent_organization' }) },
    }),
    handler: async (request) => presentOrganization(await requireOrganization(db, request.tenant.id, request.params.id)),
  });

  api.patch('/organizations/:id', {
    ...operation(['update:organizations'], {
      summary: 'Update an organization',
      params: OrganizationParams,
      body: UpdateBody,
      response: {
        200: OrganizationBody,
        ...errorResponses('management', { 404: 'inexistent_organization', 409: concurrentChangeConflict('conflict: an organization with this name exists') }),
      },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const body = request.body;
      const patch = body.metadata ? checkMetadata(body.metadata, true) : undefined;
      // Read, merge, conditional write; again when another request changed it meanwhile (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('organization', async () => {
        const current = await requireOrganization(db, tenantId, request.params.id);
        const updated: Organization = {
          ...current,
          name: body.name ?? current.name,
          display_name: body.display_name ?? current.display_name,
          branding: body.branding === undefined ? current.branding : body.branding === null ? null : brandingOf(body.branding),
          metadata: patch ? mergeMetadata(current.metadata, patch) : current.metadata,
          updated_at: nextVersion(current.updated_at, Date.now()),
        };
        const nameTaken = async () => {
          const holder = await findOrganizationByName(db, tenantId, updated.name);
          return holder !== undefined && holder.id !== current.id;
        };
        if (updated.name !== current.name && (await nameTaken())) throw new OrganizationNameTaken();
        try {
          await db.transaction().execute(async (trx) => {
            if (!(await updateOrganizationAsRead(trx, updated, current.updated_at))) throw new ConcurrentChange();
            await raise(trx, request, 'organization.updated', organizationEventObject(updated), organizationEventObject(current));
          });
        } catch (err) {
          if (!(err instanceof ConcurrentChange) && (await nameTaken())) throw new OrganizationNameTaken();
          throw err;
        }
        return updated;
      });
      return presentOrganization(updated);
    },
  });

  api.delete('/organizations/:id', {
    ...operation(['delete:organizations'], {
      summary: 'Delete an organization, with its members, roles and connections',
      params: OrganizationParams,
      response: {
        204: noContent('Deleted, with its members, roles, connections and groups'),
        ...errorResponses('management', { 404: 'inexistent_organization' }),
      },
    }),
    handler: async (request, reply) => {
      const tenantId = request.tenant.id;
      await db.transaction().execute(async (trx) => {
        const organization = await requireOrganization(trx, tenantId, request.params.id);
        // The organization's own groups go with it (cascade); subscribers that mirror groups hear of each.
        const groups = await listGroups(trx, tenantId, { organizationId: organization.id });
        await deleteOrganization(trx, tenantId, organization.id);
        await raise(trx, request, 'organization.deleted', deletedOrganizationEventObject(organization));
        const now = Date.now();
        for (const group of groups) await raise(trx, request, 'group.deleted', groupEventObject({ ...group, updated_at: now }, { withUpdatedAt: true }));
      });
      return reply.code(204).send();
    },
  });
}
