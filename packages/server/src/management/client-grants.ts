/**
 * /api/v2/client-grants (B.10): which scopes of which API (`audience`) a client may obtain. One grant per
 * client and audience. Scopes must be ones the API defines; a `subject_type: 'user'` grant to the Management
 * API may hold only the current_user scopes of the contract (library rule 7). The admin client's grant to the
 * Management API is a system grant (`is_system`): bootstrap keeps it, the API shows it but does not change it.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { newId } from '../crypto/ids.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import {
  deleteClientGrant,
  findClientGrantAsRead,
  findClientGrantById,
  findClientGrantForPair,
  insertClientGrant,
  listClientGrants,
  updateClientGrantAsRead,
  type ClientGrant,
} from '../store/client-grants.js';
import { findClient, listClients } from '../store/clients.js';
import { ConcurrentChange, concurrentChangeConflict, retryOnConcurrentChange } from '../store/concurrent-change.js';
import { findResourceServerByIdentifier, findSystemResourceServer, type ResourceServer } from '../store/resource-servers.js';
import { ClientIdString, ClientNotFound, OperationNotSupported } from './clients.js';
import { operation } from './operation.js';
import { pagedList, paginate, pagingFields } from './pagination.js';
import { ResourceServerNotFound } from './resource-servers.js';

/** The scopes a user-subject grant to the Management API may carry (contract, library rule 7). */
export const CURRENT_USER_SCOPES: readonly string[] = [
  'read:current_user',
  'update:current_user_identities',
  'create:current_user_metadata',
  'update:current_user_metadata',
  'delete:current_user_metadata',
  'create:current_user_device_credentials',
  'delete:current_user_device_credentials',
];

export class ClientGrantNotFound extends NotFound {
  constructor() {
    super('The client grant does not exist', 'inexistent_client_grant');
  }
}

class ClientGrantConflict extends Conflict {
  constructor() {
    super('A client grant for this client and audience already exists', 'conflict');
  }
}

const invalidBody = (message: string) => new InvalidInput('body', message);

function oneOf<const V extends string>(values: readonly V[]) {
  return Type.Unsafe<V>({ type: 'string', enum: [...values] });
}

/** A type list, not anyOf: with coercion on (app.ts), anyOf would turn null into "" or false first. */
function orNull<T>(schema: Record<string, unknown> & { type: string }) {
  const { type, ...rest } = schema;
  return Type.Unsafe<T | null>({ ...rest, type: [type, 'null'] });
}

const ORGANIZATION_USAGE = ['deny', 'allow', 'require'] as const;
const ScopeList = Type.Array(Type.String({ minLength: 1, maxLength: 280 }), { maxItems: 1000 });
const DetailsTypes = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 });
const GrantIdParams = Type.Object({ id: Type.String({ pattern: '^cgr_[A-Za-z0-9]{16}$' }) });

const CreateBody = Type.Object(
  {
    client_id: ClientIdString,
    audience: Type.String({ minLength: 1, maxLength: 600 }),
    scope: Type.Optional(ScopeList),
    organization_usage: Type.Optional(oneOf(ORGANIZATION_USAGE)),
    allow_any_organization: Type.Optional(Type.Boolean()),
    subject_type: Type.Optional(oneOf(['client', 'user'])),
    authorization_details_types: Type.Optional(DetailsTypes),
    allow_all_scopes: Type.Optional(Type.Boolean()),
    // Documented, but a grant here always belongs to one client (see the handler).
    default_for: Type.Optional(oneOf(['third_party_clients'])),
    // What a read shows, sent back by tools that copy grants (auth0-deploy-cli): only a system grant is true,
    // and only bootstrap makes those.
    is_system: Type.Optional(Type.Literal(false)),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  {
    scope: Type.Optional(orNull<string[]>({ ...ScopeList })),
    organization_usage: Type.Optional(Type.Unsafe<(typeof ORGANIZATION_USAGE)[number] | null>({ type: ['string', 'null'], enum: [...ORGANIZATION_USAGE, null] })),
    allow_any_organization: Type.Optional(orNull<boolean>({ type: 'boolean' })),
    authorization_details_types: Type.Optional(DetailsTypes),
    allow_all_scopes: Type.Optional(orNull<boolean>({ type: 'boolean' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
type UpdateInput = Static<typeof UpdateBody>;

const ListQuery = Type.Object(
  {
    ...pagingFields,
    audience: Type.Optional(Type.String({ maxLength: 600 })),
    client_id: Type.Optional(Type.String({ maxLength: 64 })),
    allow_any_organization: Type.Optional(Type.Boolean()),
    subject_type: Type.Optional(oneOf(['client', 'user'])),
    default_for: Type.Optional(oneOf(['third_party_clients'])),
  },
  { additionalProperties: false },
);

const GrantBody = Type.Object(
  {
    id: Type.String(),
    client_id: Type.String(),
    audience: Type.String(),
    scope: Type.Array(Type.String()),
    subject_type: Type.String(),
    allow_any_organization: Type.Boolean(),
    is_system: Type.Boolean(),
    organization_usage: Type.Optional(Type.String()),
    authorization_details_types: Type.Optional(Type.Array(Type.String())),
    allow_all_scopes: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
type GrantBody = Static<typeof GrantBody>;

/**
 * Recognises the admin client's Management API grant, which bootstrap recreates and the operator's access
 * hangs on: a grant of a system client to the system API.
 */
async function systemGrantTest(services: Services, tenantId: string): Promise<(grant: ClientGrant) => boolean> {
  const db = services.store.db;
  const [clients, managementApi] = await Promise.all([listClients(db, tenantId), findSystemResourceServer(db, tenantId)]);
  const systemClients = new Set(clients.filter((c) => c.is_system).map((c) => c.client_id));
  return (grant) => grant.audience === managementApi?.identifier && systemClients.has(grant.client_id);
}

async function isSystemGrant(services: Services, grant: ClientGrant): Promise<boolean> {
  return (await systemGrantTest(services, grant.tenant_id))(grant);
}

function present(grant: ClientGrant, isSystem: boolean): GrantBody {
  return {
    id: grant.id,
    client_id: grant.client_id,
    audience: grant.audience,
    scope: grant.scope,
    subject_type: grant.subject_type ?? 'client',
    allow_any_organization: grant.allow_any_organization ?? false,
    is_system: isSystem,
    ...(grant.organization_usage !== undefined && { organization_usage: grant.organization_usage }),
    ...(grant.authorization_details_types !== undefined && { authorization_details_types: grant.authorization_details_types }),
    ...(grant.allow_all_scopes !== undefined && { allow_all_scopes: grant.allow_all_scopes }),
  };
}

/** Each scope must be defined by the API; user grants to the Management API only carry current_user scopes. */
function checkScopes(api: ResourceServer, grant: Pick<ClientGrant, 'scope' | 'subject_type' | 'allow_all_scopes'>): void {
  const defined = new Set(api.scopes.map((s) => s.value));
  const undefinedScope = grant.scope.find((s) => !defined.has(s));
  if (undefinedScope !== undefined) throw invalidBody(`scope: ${JSON.stringify(undefinedScope)} is not a scope of the API ${api.identifier}`);
  if (api.is_system && grant.subject_type === 'user') {
    const notSelf = grant.scope.find((s) => !CURRENT_USER_SCOPES.includes(s));
    if (notSelf !== undefined) {
      throw invalidBody(
        `scope: ${JSON.stringify(notSelf)} cannot be granted to users of the Management API; allowed: ${CURRENT_USER_SCOPES.join(', ')}`,
      );
    }
    if (grant.allow_all_scopes) throw invalidBody('allow_all_scopes cannot be used for user access to the Management API');
  }
}

export function registerClientGrants(api: App, services: Services): void {
  const { db } = services.store;

  const find = async (tenantId: string, id: string): Promise<ClientGrant> => {
    const grant = await findClientGrantById(db, tenantId, id);
    if (!grant) throw new ClientGrantNotFound();
    return grant;
  };

  api.get('/client-grants', {
    ...operation(['read:client_grants'], {
      summary: 'List client grants',
      querystring: ListQuery,
      response: { 200: pagedList(GrantBody, 'client_grants') },
    }),
    handler: async (request) => {
      const query = request.query;
      // Grants here all belong to one client; there are no default grants for third-party clients.
      let grants = query.default_for ? [] : await listClientGrants(db, request.tenant.id, query.client_id);
      if (query.audience !== undefined) grants = grants.filter((g) => g.audience === query.audience);
      if (query.allow_any_organization !== undefined) grants = grants.filter((g) => (g.allow_any_organization ?? false) === query.allow_any_organization);
      if (query.subject_type !== undefined) grants = grants.filter((g) => (g.subject_type ?? 'client') === query.subject_type);
      const isSystem = await systemGrantTest(services, request.tenant.id);
      return paginate(
        grants.map((g) => present(g, isSystem(g))),
        query,
        'client_grants',
      );
    },
  });

  api.post('/client-grants', {
    ...operation(['create:client_grants'], {
      summary: 'Create a client grant',
      body: CreateBody,
      response: {
        201: GrantBody,
        ...errorResponses('management', {
          404: 'inexistent_client or inexistent_resource_server',
          409: 'conflict: the client already has a grant for this audience',
        }),
      },
    }),
    handler: async (request, reply) => {
      const { client_id, audience, scope, default_for, is_system: _isSystem, ...options } = request.body;
      if (default_for !== undefined) {
        throw invalidBody('default_for: default grants for third-party clients are not supported; create a grant per client');
      }
      const tenantId = request.tenant.id;
      if (!(await findClient(db, tenantId, client_id))) throw new ClientNotFound();
      const rs = await findResourceServerByIdentifier(db, tenantId, audience);
      if (!rs) throw new ResourceServerNotFound();
      const grant: ClientGrant = { ...options, id: newId.clientGrant(), tenant_id: tenantId, client_id, audience, scope: [...new Set(scope ?? [])] };
      checkScopes(rs, grant);
      if (await findClientGrantForPair(db, tenantId, client_id, audience)) throw new ClientGrantConflict();
      try {
        await insertClientGrant(db, grant);
      } catch (err) {
        // Two creates racing for one client and audience: the unique constraint decides.
        if (await findClientGrantForPair(db, tenantId, client_id, audience)) throw new ClientGrantConflict();
        // The client or the API was deleted in between (foreign key).
        if (!(await findClient(db, tenantId, client_id))) throw new ClientNotFound();
        throw err;
      }
      return reply.code(201).send(present(grant, await isSystemGrant(services, grant)));
    },
  });

  api.get('/client-grants/:id', {
    ...operation(['read:client_grants'], {
      summary: 'Get a client grant',
      params: GrantIdParams,
      response: { 200: GrantBody, ...errorResponses('management', { 404: 'inexistent_client_grant' }) },
    }),
    handler: async (request) => {
      const grant = await find(request.tenant.id, request.params.id);
      return present(grant, await isSystemGrant(services, grant));
    },
  });

  api.patch('/client-grants/:id', {
    ...operation(['update:client_grants'], {
      summary: 'Update a client grant',
      params: GrantIdParams,
      body: UpdateBody,
      response: {
        200: GrantBody,
        ...errorResponses('management', {
          403: "operation_not_supported: the admin client's Management API grant is a system grant",
          404: 'inexistent_client_grant',
          409: concurrentChangeConflict(),
        }),
      },
    }),
    handler: async (request) => {
      // Read, change, conditional write; again when another request changed the grant meanwhile, so that two
      // PATCHes of different fields both land (store/concurrent-change.ts).
      const next = await retryOnConcurrentChange('client grant', async () => {
        const read = await findClientGrantAsRead(db, request.tenant.id, request.params.id);
        if (!read) throw new ClientGrantNotFound();
        const grant = read.grant;
        if (await isSystemGrant(services, grant)) {
          throw new OperationNotSupported("The admin client's Management API grant is a system grant and cannot be changed");
        }
        const input: UpdateInput = request.body;
        const next: ClientGrant = { ...grant };
        if (input.scope !== undefined) next.scope = [...new Set(input.scope ?? [])];
        if (input.organization_usage === null) delete next.organization_usage;
        else if (input.organization_usage !== undefined) next.organization_usage = input.organization_usage;
        if (input.allow_any_organization === null) delete next.allow_any_organization;
        else if (input.allow_any_organization !== undefined) next.allow_any_organization = input.allow_any_organization;
        if (input.authorization_details_types !== undefined) next.authorization_details_types = input.authorization_details_types;
        if (input.allow_all_scopes === null) delete next.allow_all_scopes;
        else if (input.allow_all_scopes !== undefined) next.allow_all_scopes = input.allow_all_scopes;
        const rs = await findResourceServerByIdentifier(db, grant.tenant_id, grant.audience);
        if (!rs) throw new ClientGrantNotFound(); // its API is being deleted, and the grant with it
        checkScopes(rs, next);
        if (!(await updateClientGrantAsRead(db, next, read.readAt))) throw new ConcurrentChange();
        return next;
      });
      return present(next, false);
    },
  });

  api.delete('/client-grants/:id', {
    ...operation(['delete:client_grants'], {
      summary: 'Delete a client grant',
      params: GrantIdParams,
      response: {
        204: noContent('Deleted'),
        ...errorResponses('management', {
          403: "operation_not_supported: the admin client's Management API grant is a system grant",
          404: 'inexistent_client_grant',
        }),
      },
    }),
    handler: async (request, reply) => {
      const grant = await find(request.tenant.id, request.params.id);
      // Bootstrap would recreate it at the next start; until then the operator would be locked out.
      if (await isSystemGrant(services, grant)) {
        throw new OperationNotSupported("The admin client's Management API grant is a system grant and cannot be deleted");
      }
      if (!(await deleteClientGrant(db, request.tenant.id, grant.id))) throw new ClientGrantNotFound();
      return reply.code(204).send();
    },
  });
}

/** A grant as the Management API shows it, for the organizations' list of their grants. */
export async function presentClientGrant(services: Services, grant: ClientGrant): Promise<GrantBody> {
  return present(grant, await isSystemGrant(services, grant));
}
export { GrantBody as ClientGrantBody };
