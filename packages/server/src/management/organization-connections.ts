/**
 * The connections enabled for an organization (B.11), under both paths the `auth0@7` SDK calls:
 *  - /organizations/{id}/enabled_connections (`organizations.enabledConnections`): the classic settings
 *    `assign_membership_on_login`, `show_as_button`, `is_signup_enabled`; list key `enabled_connections`;
 *  - /organizations/{id}/connections (`organizations.connections`): the same rows with `is_enabled`,
 *    `organization_access_level` and `organization_connection_name` as well; list key `connections`.
 * Add, update and remove raise `organization.connection.added/updated/removed` in the change's transaction.
 *
 * Where the reference is silent: an unknown connection is 404 `inexistent_connection`; enabling one that is
 * enabled already is 409 `conflict`; a PATCH that changes nothing still answers 200 and raises no event.
 */
import { Type, type Static, type TProperties } from '@fastify/type-provider-typebox';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { asSent, errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import { findConnectionById } from '../store/connections.js';
import {
  deleteOrganizationConnection,
  findOrganizationConnection,
  insertOrganizationConnection,
  listOrganizationConnections,
  updateOrganizationConnectionAsRead,
  type OrganizationConnection,
} from '../store/organizations.js';
import { organizationConnectionEventObject, organizationRef } from './event-objects.js';
import { operation } from './operation.js';
import { ConnectionSettings, NO_NUL, OrganizationParams, PathId, raise, requireOrganization } from './organizations.js';
import { pagedList, paginate, pagingFields } from './pagination.js';

const { from: _from, take: _take, ...offsetPaging } = pagingFields;

const AccessLevel = Type.Union([Type.Literal('none'), Type.Literal('readonly'), Type.Literal('limited'), Type.Literal('full')]);
const ConnectionName = Type.String({ minLength: 1, maxLength: 128, pattern: NO_NUL });
const ConnectionParams = Type.Object({ id: PathId, connection_id: PathId });

/** The settings only the newer `/connections` path knows. */
const extendedSettings = {
  organization_connection_name: Type.Optional(ConnectionName),
  organization_access_level: Type.Optional(AccessLevel),
  is_enabled: Type.Optional(Type.Boolean()),
};
const extendedPatch = {
  organization_connection_name: Type.Optional(Type.Union([Type.Null(), ConnectionName])),
  organization_access_level: Type.Optional(Type.Union([Type.Null(), AccessLevel])),
  // Checked in the handler: the validator's coercion would turn null into false, or false into null.
  is_enabled: Type.Optional(Type.Unknown()),
};

type Settings = Partial<{
  assign_membership_on_login: boolean;
  show_as_button: boolean;
  is_signup_enabled: boolean;
  organization_connection_name: string | null;
  organization_access_level: OrganizationConnection['organization_access_level'];
  is_enabled: boolean | null;
}>;

class ConnectionNotFound extends NotFound {
  constructor() {
    super('The connection does not exist.', 'inexistent_connection');
  }
}

class ConnectionNotEnabled extends NotFound {
  constructor() {
    super('The connection is not enabled for the organization.', 'inexistent_connection');
  }
}

/** Both variants' view; `connections` adds is_enabled and the access level and name when set. */
const OrganizationConnectionView = Type.Object({
  connection_id: Type.String(),
  assign_membership_on_login: Type.Boolean(),
  show_as_button: Type.Boolean(),
  is_signup_enabled: Type.Boolean(),
  connection: Type.Object({ name: Type.String(), strategy: Type.String() }),
  is_enabled: Type.Optional(Type.Boolean()),
  organization_access_level: Type.Optional(Type.String()),
  organization_connection_name: Type.Optional(Type.String()),
});

function presentClassic(c: OrganizationConnection) {
  return {
    connection_id: c.connection_id,
    assign_membership_on_login: c.assign_membership_on_login,
    show_as_button: c.show_as_button,
    is_signup_enabled: c.is_signup_enabled,
    connection: { name: c.connection_name, strategy: c.strategy },
  };
}

function presentExtended(c: OrganizationConnection) {
  return {
    ...presentClassic(c),
    is_enabled: c.is_enabled,
    ...(c.organization_access_level !== null && { organization_access_level: c.organization_access_level }),
    ...(c.organization_connection_name !== null && { organization_connection_name: c.organization_connection_name }),
  };
}

function applySettings(current: OrganizationConnection, settings: Settings, now: number): OrganizationConnection {
  return {
    ...current,
    assign_membership_on_login: settings.assign_membership_on_login ?? current.assign_membership_on_login,
    show_as_button: settings.show_as_button ?? current.show_as_button,
    is_signup_enabled: settings.is_signup_enabled ?? current.is_signup_enabled,
    // null resets: enabled, no access level, no organization-scoped name.
    is_enabled: settings.is_enabled === undefined ? current.is_enabled : (settings.is_enabled ?? true),
    organization_access_level: settings.organization_access_level === undefined ? current.organization_access_level : settings.organization_access_level,
    organization_connection_name:
      settings.organization_connection_name === undefined ? current.organization_connection_name : settings.organization_connection_name,
    updated_at: now,
  };
}

const SETTING_KEYS = [
  'assign_membership_on_login',
  'show_as_button',
  'is_signup_enabled',
  'is_enabled',
  'organization_access_level',
  'organization_connection_name',
] as const;

function sameSettings(a: OrganizationConnection, b: OrganizationConnection): boolean {
  return SETTING_KEYS.every((key) => a[key] === b[key]);
}

interface Variant {
  path: 'enabled_connections' | 'connections';
  collection: string;
  present: (c: OrganizationConnection) => Static<typeof OrganizationConnectionView>;
  addFields: TProperties;
  patchFields: TProperties;
  listFields: TProperties;
}

const VARIANTS: Variant[] = [
  { path: 'enabled_connections', collection: 'enabled_connections', present: presentClassic, addFields: {}, patchFields: {}, listFields: {} },
  {
    path: 'connections',
    collection: 'connections',
    present: presentExtended,
    addFields: extendedSettings,
    patchFields: extendedPatch,
    listFields: { is_enabled: Type.Optional(Type.Boolean()) },
  },
];

export function registerOrganizationConnections(api: App, services: Services): void {
  const db = services.store.db;

  for (const variant of VARIANTS) {
    const base = `/organizations/:id/${variant.path}`;
    const AddBody = Type.Object(
      { connection_id: Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }), ...ConnectionSettings, ...variant.addFields },
      { additionalProperties: false },
    );
    const PatchBody = Type.Object({ ...ConnectionSettings, ...variant.patchFields }, { additionalProperties: false });
    const ListQuery = Type.Object({ ...offsetPaging, ...variant.listFields }, { additionalProperties: false });

    api.get(base, {
      ...operation(['read:organization_connections'], {
        summary: `List the connections enabled for an organization (${variant.path})`,
        params: OrganizationParams,
        querystring: ListQuery,
        response: { 200: pagedList(OrganizationConnectionView, variant.collection), ...errorResponses('management', { 404: 'inexistent_organization' }) },
      }),
      handler: async (request) => {
        const tenantId = request.tenant.id;
        const organization = await requireOrganization(db, tenantId, request.params.id);
        const query = request.query as Static<typeof ListQuery> & { is_enabled?: boolean };
        let connections = await listOrganizationConnections(db, tenantId, organization.id);
        if (query.is_enabled !== undefined) connections = connections.filter((c) => c.is_enabled === query.is_enabled);
        return paginate(connections.map(variant.present), query, variant.collection);
      },
    });

    api.post(base, {
      ...operation(['create:organization_connections'], {
        summary: `Enable a connection for an organization (${variant.path})`,
        params: OrganizationParams,
        body: AddBody,
        response: {
          201: asSent(OrganizationConnectionView),
          ...errorResponses('management', {
            404: 'inexistent_organization or inexistent_connection',
            409: 'conflict: the connection is already enabled for the organization',
          }),
        },
      }),
      handler: async (request, reply) => {
        const tenantId = request.tenant.id;
        const body = request.body as Static<typeof AddBody> & Settings;
        const connection = await findConnectionById(db, tenantId, body.connection_id);
        if (!connection) throw new ConnectionNotFound();
        const now = Date.now();
        const added = await db.transaction().execute(async (trx) => {
          const organization = await requireOrganization(trx, tenantId, request.params.id);
          if (await findOrganizationConnection(trx, tenantId, organization.id, connection.id)) {
            throw new Conflict('The connection is already enabled for the organization');
          }
          const row = applySettings(
            {
              organization_id: organization.id,
              connection_id: connection.id,
              tenant_id: tenantId,
              assign_membership_on_login: false,
              show_as_button: true,
              is_signup_enabled: false,
              is_enabled: true,
              organization_access_level: null,
              organization_connection_name: null,
              created_at: now,
              updated_at: now,
              connection_name: connection.name,
              strategy: connection.strategy,
            },
            body,
            now,
          );
          await insertOrganizationConnection(trx, row);
          await raise(trx, request, 'organization.connection.added', organizationConnectionEventObject(organization, row));
          return row;
        });
        return reply.code(201).send(variant.present(added));
      },
    });

    api.get(`${base}/:connection_id`, {
      ...operation(['read:organization_connections'], {
        summary: `Get a connection enabled for an organization (${variant.path})`,
        params: ConnectionParams,
        response: {
          200: asSent(OrganizationConnectionView),
          ...errorResponses('management', {
            404: 'inexistent_organization, or inexistent_connection: the connection is not enabled for the organization',
          }),
        },
      }),
      handler: async (request) => {
        const tenantId = request.tenant.id;
        const organization = await requireOrganization(db, tenantId, request.params.id);
        const found = await findOrganizationConnection(db, tenantId, organization.id, request.params.connection_id);
        if (!found) throw new ConnectionNotEnabled();
        return variant.present(found);
      },
    });

    api.patch(`${base}/:connection_id`, {
      ...operation(['update:organization_connections'], {
        summary: `Update a connection enabled for an organization (${variant.path})`,
        params: ConnectionParams,
        body: PatchBody,
        response: {
          200: asSent(OrganizationConnectionView),
          ...errorResponses('management', {
            404: 'inexistent_organization, or inexistent_connection: the connection is not enabled for the organization',
            409: concurrentChangeConflict(),
          }),
        },
      }),
      handler: async (request) => {
        const tenantId = request.tenant.id;
        // A transaction alone does not order two PATCHes (read committed): the write is conditional on the link's
        // version, and the loser reads again and applies its settings to the winner's (store/concurrent-change.ts).
        const updated = await retryOnConcurrentChange('organization connection', () =>
          db.transaction().execute(async (trx) => {
            const organization = await requireOrganization(trx, tenantId, request.params.id);
            const current = await findOrganizationConnection(trx, tenantId, organization.id, request.params.connection_id);
            if (!current) throw new ConnectionNotEnabled();
            const settings = request.body as Settings & { is_enabled?: unknown };
            if (settings.is_enabled !== undefined && settings.is_enabled !== null && typeof settings.is_enabled !== 'boolean') {
              throw new InvalidInput('body', 'is_enabled: must be true, false or null');
            }
            const next = applySettings(current, settings, nextVersion(current.updated_at, Date.now()));
            if (sameSettings(current, next)) return current;
            if (!(await updateOrganizationConnectionAsRead(trx, next, current.updated_at))) throw new ConcurrentChange();
            await raise(
              trx,
              request,
              'organization.connection.updated',
              organizationConnectionEventObject(organization, next),
              organizationConnectionEventObject(organization, current),
            );
            return next;
          }),
        );
        return variant.present(updated);
      },
    });

    api.delete(`${base}/:connection_id`, {
      ...operation(['delete:organization_connections'], {
        summary: `Disable a connection for an organization (${variant.path})`,
        params: ConnectionParams,
        response: {
          204: noContent('Disabled for the organization'),
          ...errorResponses('management', {
            404: 'inexistent_organization, or inexistent_connection: the connection is not enabled for the organization',
          }),
        },
      }),
      handler: async (request, reply) => {
        const tenantId = request.tenant.id;
        await db.transaction().execute(async (trx) => {
          const organization = await requireOrganization(trx, tenantId, request.params.id);
          if (!(await deleteOrganizationConnection(trx, tenantId, organization.id, request.params.connection_id))) throw new ConnectionNotEnabled();
          await raise(trx, request, 'organization.connection.removed', {
            organization: organizationRef(organization),
            connection: { id: request.params.connection_id },
          });
        });
        return reply.code(204).send();
      },
    });
  }
}
