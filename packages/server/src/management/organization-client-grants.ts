/**
 * /api/v2/organizations/{id}/client-grants: the client grants associated with an organization (list, associate,
 * remove), as the reference has them; auth0-deploy-cli reads them to dump an organization and writes them back.
 *
 * Where the reference is silent: a grant can be associated only when its `organization_usage` is `allow` or
 * `require` (a grant that denies organizations could never be used for one), associating it twice is a 409, and
 * removing one that is not associated is a 404. Deleting the organization or the grant removes the association.
 */
import { Type } from '@fastify/type-provider-typebox';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findClientGrantById } from '../store/client-grants.js';
import { associateOrganizationClientGrant, listOrganizationClientGrants, removeOrganizationClientGrant } from '../store/organization-client-grants.js';
import { ClientGrantBody, presentClientGrant } from './client-grants.js';
import { operation } from './operation.js';
import { OrganizationParams, PathId, requireOrganization } from './organizations.js';
import { pagedList, paginate, pagingFields } from './pagination.js';

const GrantId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

const ListQuery = Type.Object(
  {
    ...pagingFields,
    audience: Type.Optional(Type.String({ maxLength: 600 })),
    client_id: Type.Optional(Type.String({ maxLength: 64 })),
    grant_ids: Type.Optional(Type.String({ maxLength: 4000, description: 'Comma-separated grant ids' })),
  },
  { additionalProperties: false },
);

class GrantNotFound extends NotFound {
  constructor() {
    super('The client grant does not exist.', 'inexistent_client_grant');
  }
}

export function registerOrganizationClientGrants(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/organizations/:id/client-grants', {
    ...operation(['read:organization_client_grants'], {
      summary: 'List the client grants associated with an organization',
      params: OrganizationParams,
      querystring: ListQuery,
      response: { 200: pagedList(ClientGrantBody, 'client_grants'), ...errorResponses('management', { 404: 'inexistent_organization' }) },
    }),
    handler: async (request) => {
      const organization = await requireOrganization(db, request.tenant.id, request.params.id);
      const query = request.query;
      const ids = query.grant_ids?.split(',').map((id) => id.trim()).filter(Boolean);
      const grants = (await listOrganizationClientGrants(db, request.tenant.id, organization.id)).filter(
        (g) => (query.audience === undefined || g.audience === query.audience) && (query.client_id === undefined || g.client_id === query.client_id) && (!ids || ids.includes(g.id)),
      );
      return paginate(await Promise.all(grants.map((g) => presentClientGrant(services, g))), query, 'client_grants');
    },
  });

  api.post('/organizations/:id/client-grants', {
    ...operation(['create:organization_client_grants'], {
      summary: 'Associate a client grant with an organization',
      params: OrganizationParams,
      body: Type.Object({ grant_id: GrantId }, { additionalProperties: false }),
      response: {
        201: ClientGrantBody,
        ...errorResponses('management', {
          400: 'invalid_body: the grant’s organization_usage is neither allow nor require',
          404: 'inexistent_organization, inexistent_client_grant',
          409: 'conflict: the grant is already associated',
        }),
      },
    }),
    handler: async (request, reply) => {
      const organization = await requireOrganization(db, request.tenant.id, request.params.id);
      const grant = await findClientGrantById(db, request.tenant.id, request.body.grant_id);
      if (!grant) throw new GrantNotFound();
      if (grant.organization_usage !== 'allow' && grant.organization_usage !== 'require') {
        throw new InvalidInput('body', 'grant_id: the client grant’s organization_usage must be allow or require to be associated with an organization');
      }
      if (!(await associateOrganizationClientGrant(db, request.tenant.id, organization.id, grant.id))) {
        throw new Conflict('The client grant is already associated with this organization.');
      }
      return reply.code(201).send(await presentClientGrant(services, grant));
    },
  });

  api.delete('/organizations/:id/client-grants/:grant_id', {
    ...operation(['delete:organization_client_grants'], {
      summary: 'Remove a client grant from an organization',
      params: Type.Object({ id: PathId, grant_id: GrantId }),
      response: { 204: noContent('Removed'), ...errorResponses('management', { 404: 'inexistent_organization, or the grant is not associated' }) },
    }),
    handler: async (request, reply) => {
      const organization = await requireOrganization(db, request.tenant.id, request.params.id);
      if (!(await removeOrganizationClientGrant(db, request.tenant.id, organization.id, request.params.grant_id))) throw new GrantNotFound();
      return reply.code(204).send();
    },
  });
}
