/**
 * POST /delegation, the reference's deprecated legacy endpoint, is not offered: 501 not_offered.
 *
 * Why not: a delegation token is "signed with the target app's secret" for an application add-on that is not
 * SAML or WS-Fed (Firebase, Azure Blob Storage, SAP…), using secrets obtained from that add-on's service; the
 * reference itself has kept the endpoint disabled since June 2017 for tenants without such an add-on in use.
 * This server has no such add-on (its only add-on is samlp), so there is no target a delegation token could be
 * for, and an id_token re-signed for another client would be a token no relying party of today expects.
 *
 * The refusal is a failed delegation all the same, and logged as one (`fd`, with the client the body names when
 * it is one of the tenant's): an operator sees which legacy application still calls it. `sd` is never written.
 * Nothing of the body is logged beyond that client (it carries id_tokens or refresh tokens).
 */
import { Type } from '@fastify/type-provider-typebox';
import { NotOffered } from '../http/errors.js';
import { FORM } from '../http/openapi.js';
import { errorResponses } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findClient } from '../store/clients.js';

const DelegationRequest = Type.Object(
  {
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    grant_type: Type.Optional(Type.String({ maxLength: 200 })),
    id_token: Type.Optional(Type.String({ maxLength: 16_000 })),
    refresh_token: Type.Optional(Type.String({ maxLength: 16_000 })),
    target: Type.Optional(Type.String({ maxLength: 200 })),
    scope: Type.Optional(Type.String({ maxLength: 2000 })),
    api_type: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: true },
);

export function registerDelegation(app: App, services: Services): void {
  app.post('/delegation', {
    schema: {
      tags: ['authentication', 'not offered'],
      summary: 'Delegation (deprecated in the reference): not offered',
      description:
        'The reference\u2019s legacy endpoint that re-signs a token for an application add-on (Firebase, Azure, SAP). This server offers no such add-on, so it answers 501 not_offered, and logs the attempt as `fd`.',
      body: DelegationRequest,
      consumes: ['application/json', FORM],
      response: errorResponses('oauth', { 501: 'not_offered: delegation tokens (no add-on of this server takes them)' }),
    },
    config: {
      rateLimit: { bucket: 'token' },
      cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
    },
    handler: async (request) => {
      const clientId = request.body.client_id;
      const client = clientId ? await findClient(services.store.db, request.tenant.id, clientId) : undefined;
      services.tenantLogs.recordFor(request, {
        type: 'fd',
        description: 'Delegation is not offered by this server',
        ...(client && { client: { client_id: client.client_id, name: client.name } }),
        ...(request.body.target && client && { details: { target: request.body.target.slice(0, 200) } }),
      });
      throw new NotOffered('Delegation', 'is not offered: this server has no application add-on a delegation token could be for');
    },
  });
}
