/**
 * /api/v2/resource-servers (B.9): the APIs a tenant issues access tokens for. `{id}` is the id or the
 * identifier. The Management API itself is a system resource server: readable, never changed or deleted here.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Conflict, InvalidInput, NotFound, ProtocolError } from '../http/errors.js';
import { newId } from '../crypto/ids.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, retryOnConcurrentChange } from '../store/concurrent-change.js';
import {
  deleteResourceServer,
  findResourceServerById,
  findResourceServerByIdentifier,
  insertResourceServer,
  listResourceServers,
  findResourceServerAsRead,
  replaceResourceServerAsRead,
  type ResourceServer,
} from '../store/resource-servers.js';
import { operation } from './operation.js';
import { pagedList, paginate, pagingFields } from './pagination.js';

const Scope = Type.Object(
  { value: Type.String({ minLength: 1, maxLength: 280 }), description: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
);

/** Fields a caller may set (B.9); `identifier` only on create. */
const Writable = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^<>]+$' }),
  scopes: Type.Array(Scope, { maxItems: 1000 }),
  signing_alg: Type.Literal('RS256'),
  allow_offline_access: Type.Boolean(),
  token_lifetime: Type.Integer({ minimum: 0, maximum: 2_592_000 }),
  token_lifetime_for_web: Type.Integer({ minimum: 0, maximum: 2_592_000 }),
  skip_consent_for_verifiable_first_party_clients: Type.Boolean(),
  enforce_policies: Type.Boolean(),
  token_dialect: Type.Union([
    Type.Literal('access_token'),
    Type.Literal('access_token_authz'),
    Type.Literal('rfc9068_profile'),
    Type.Literal('rfc9068_profile_authz'),
  ]),
  consent_policy: Type.Union([Type.Literal('transactional-authorization-with-mfa'), Type.Null()]),
  authorization_details: Type.Array(Type.Object({}, { additionalProperties: true })),
  proof_of_possession: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  subject_type_authorization: Type.Object({}, { additionalProperties: true }),
};

const CreateBody = Type.Object(
  {
    identifier: Type.String({ minLength: 1, maxLength: 600 }),
    name: Type.Optional(Writable.name),
    scopes: Type.Optional(Writable.scopes),
    signing_alg: Type.Optional(Writable.signing_alg),
    allow_offline_access: Type.Optional(Writable.allow_offline_access),
    token_lifetime: Type.Optional(Writable.token_lifetime),
    token_lifetime_for_web: Type.Optional(Writable.token_lifetime_for_web),
    skip_consent_for_verifiable_first_party_clients: Type.Optional(Writable.skip_consent_for_verifiable_first_party_clients),
    enforce_policies: Type.Optional(Writable.enforce_policies),
    token_dialect: Type.Optional(Writable.token_dialect),
    consent_policy: Type.Optional(Writable.consent_policy),
    authorization_details: Type.Optional(Writable.authorization_details),
    proof_of_possession: Type.Optional(Writable.proof_of_possession),
    subject_type_authorization: Type.Optional(Writable.subject_type_authorization),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Partial(Type.Omit(CreateBody, ['identifier']), { additionalProperties: false });

const ResourceServerBody = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    identifier: Type.String(),
    is_system: Type.Boolean(),
    scopes: Type.Array(Scope),
    signing_alg: Type.String(),
    allow_offline_access: Type.Boolean(),
    token_lifetime: Type.Integer(),
    token_lifetime_for_web: Type.Integer(),
    skip_consent_for_verifiable_first_party_clients: Type.Boolean(),
  },
  { additionalProperties: true },
);

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 600 }) });

const DEFAULTS = {
  scopes: [],
  signing_alg: 'RS256' as const,
  allow_offline_access: false,
  token_lifetime: 86_400,
  token_lifetime_for_web: 7_200,
  skip_consent_for_verifiable_first_party_clients: true,
};

function present(rs: ResourceServer): Static<typeof ResourceServerBody> {
  const { tenant_id: _tenant, ...body } = rs;
  return { ...body, scopes: rs.scopes.map((s) => ({ value: s.value, description: s.description ?? '' })) };
}

export class ResourceServerNotFound extends NotFound {
  constructor() {
    super('The resource server does not exist', 'inexistent_resource_server');
  }
}

export class SystemResourceServer extends ProtocolError {
  constructor() {
    super(403, 'operation_not_supported', 'The Management API is a system resource server and cannot be changed or deleted');
  }
}

async function find(services: Services, tenantId: string, idOrIdentifier: string): Promise<ResourceServer> {
  const rs =
    (await findResourceServerById(services.store.db, tenantId, idOrIdentifier)) ??
    (await findResourceServerByIdentifier(services.store.db, tenantId, idOrIdentifier));
  if (!rs) throw new ResourceServerNotFound();
  return rs;
}

/** Whether every field of `patch` already has that value in `current` (compared as JSON). */
function changesNothing(current: Record<string, unknown>, patch: Record<string, unknown>): boolean {
  return Object.entries(patch).every(([key, value]) => JSON.stringify(current[key]) === JSON.stringify(value));
}

export function registerResourceServers(api: App, services: Services): void {
  api.get('/resource-servers', {
    ...operation(['read:resource_servers'], {
      summary: 'List resource servers',
      querystring: Type.Object(
        { ...pagingFields, identifiers: Type.Optional(Type.String({ maxLength: 10_000 })) },
        { additionalProperties: false },
      ),
      response: { 200: pagedList(ResourceServerBody, 'resource_servers') },
    }),
    handler: async (request) => {
      let all = await listResourceServers(services.store.db, request.tenant.id);
      if (request.query.identifiers) {
        const wanted = new Set(request.query.identifiers.split(','));
        all = all.filter((rs) => wanted.has(rs.identifier));
      }
      return paginate(all.map(present), request.query, 'resource_servers');
    },
  });

  api.post('/resource-servers', {
    ...operation(['create:resource_servers'], {
      summary: 'Create a resource server',
      body: CreateBody,
      response: {
        201: ResourceServerBody,
        ...errorResponses('management', { 409: 'resource_server_conflict: a resource server with this identifier exists' }),
      },
    }),
    handler: async (request, reply) => {
      const { identifier, ...fields } = request.body;
      if (await findResourceServerByIdentifier(services.store.db, request.tenant.id, identifier)) {
        throw new Conflict('A resource server with the same identifier already exists', 'resource_server_conflict');
      }
      const rs: ResourceServer = {
        ...DEFAULTS,
        ...fields,
        id: newId.resourceServer(),
        tenant_id: request.tenant.id,
        identifier,
        name: fields.name ?? identifier,
        is_system: false,
        scopes: fields.scopes?.map((s) => ({ value: s.value, description: s.description ?? '' })) ?? [],
      };
      try {
        await insertResourceServer(services.store.db, rs);
      } catch (err) {
        // Two creates racing on one identifier: the unique constraint decides.
        if (await findResourceServerByIdentifier(services.store.db, request.tenant.id, identifier)) {
          throw new Conflict('A resource server with the same identifier already exists', 'resource_server_conflict');
        }
        throw err;
      }
      return reply.code(201).send(present(rs));
    },
  });

  api.get('/resource-servers/:id', {
    ...operation(['read:resource_servers'], {
      summary: 'Get a resource server',
      params: IdParams,
      response: { 200: ResourceServerBody, ...errorResponses('management', { 404: 'inexistent_resource_server' }) },
    }),
    handler: async (request) => present(await find(services, request.tenant.id, request.params.id)),
  });

  api.patch('/resource-servers/:id', {
    ...operation(['update:resource_servers'], {
      summary: 'Update a resource server',
      params: IdParams,
      body: UpdateBody,
      response: {
        200: ResourceServerBody,
        ...errorResponses('management', {
          403: 'operation_not_supported: the Management API is a system resource server',
          404: 'inexistent_resource_server',
          409: concurrentChangeConflict(),
        }),
      },
    }),
    handler: async (request) => {
      // Read, change, conditional write; again when another request changed the API meanwhile, so that two
      // PATCHes of different fields both land (store/concurrent-change.ts).
      return retryOnConcurrentChange('resource server', async () => {
        const read = await findResourceServerAsRead(services.store.db, request.tenant.id, request.params.id);
        if (!read) throw new ResourceServerNotFound();
        const rs = read.resourceServer;
        if (rs.is_system) {
          // Tools that write back what they read (auth0-deploy-cli updates the system API it dumped: it skips only the
          // reference's by name, and our API keeps its own name) send the values it already has: that changes
          // nothing and is answered as done. Any actual change is still refused.
          if (changesNothing(present(rs), request.body as Record<string, unknown>)) return present(rs);
          throw new SystemResourceServer();
        }
        if ('identifier' in (request.body as object)) throw new InvalidInput('body', 'identifier cannot be changed');
        const updated: ResourceServer = {
          ...rs,
          ...request.body,
          scopes: request.body.scopes?.map((s) => ({ value: s.value, description: s.description ?? '' })) ?? rs.scopes,
        };
        if (!(await replaceResourceServerAsRead(services.store.db, updated, read.readAt))) throw new ConcurrentChange();
        return present(updated);
      });
    },
  });

  api.delete('/resource-servers/:id', {
    ...operation(['delete:resource_servers'], {
      summary: 'Delete a resource server',
      params: IdParams,
      response: {
        204: noContent('Deleted, with its client grants'),
        ...errorResponses('management', {
          403: 'operation_not_supported: the Management API is a system resource server',
          404: 'inexistent_resource_server',
        }),
      },
    }),
    handler: async (request, reply) => {
      const rs = await find(services, request.tenant.id, request.params.id);
      if (rs.is_system) throw new SystemResourceServer();
      await deleteResourceServer(services.store.db, rs);
      return reply.code(204).send();
    },
  });
}
