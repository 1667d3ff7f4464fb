/**
 * POST /oauth/revoke (RFC 7009): a client revokes a refresh token it was issued, with the whole grant it belongs
 * to (every token of its rotation family). The client authenticates as at the token endpoint. An unknown token
 * is answered like a revoked one (200, empty body, §2.2), so the endpoint tells nobody which tokens exist; a
 * token issued to another client is refused with invalid_grant (§2.1 says the request is refused; RFC 6749 §5.2
 * names "issued to another client" under invalid_grant), and stays valid.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest } from '../http/errors.js';
import { FORM } from '../http/openapi.js';
import { errorResponses, noContent } from '../http/responses.js';
import { CLIENT_AUTHENTICATION_ERRORS } from './errors.js';
import type { App, Services } from '../services.js';
import { findRefreshTokenByHash, revokeRefreshTokenFamily } from '../store/refresh-tokens.js';
import { authenticateClient } from './client-auth/index.js';
import { InvalidGrant } from './user-tokens/errors.js';
import { hashToken } from './user-tokens/refresh-tokens.js';

const RevokeRequest = Type.Object(
  {
    token: Type.Optional(Type.String({ maxLength: 16_000 })),
    token_type_hint: Type.Optional(Type.String({ maxLength: 100 })),
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
    client_assertion: Type.Optional(Type.String({ maxLength: 16_000 })),
    client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
  },
  // Unknown parameters are ignored, as at the token endpoint.
  { additionalProperties: true },
);

export function registerRevocation(app: App, services: Services): void {
  app.post('/oauth/revoke', {
    schema: {
      tags: ['authentication'],
      summary: 'Revoke a refresh token',
      description: 'Body as JSON or application/x-www-form-urlencoded. Answers 200 with an empty body.',
      body: RevokeRequest,
      consumes: ['application/json', FORM],
      response: {
        200: noContent('Revoked, or not a refresh token of this tenant (RFC 7009 §2.2): an empty body either way'),
        ...errorResponses('oauth', {
          400: 'invalid_request (no token), invalid_grant (the token was issued to another client; it stays valid)',
          401: CLIENT_AUTHENTICATION_ERRORS[401],
        }),
      },
    },
    config: {
      rateLimit: { bucket: 'token' },
      cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
    },
    handler: async (request, reply) => {
      const params = (request.body ?? {}) as Record<string, unknown>;
      const tenant = request.tenant;
      const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl: `${tenant.baseUrl}/oauth/revoke` });
      const token = params.token;
      if (typeof token !== 'string' || token === '') throw new InvalidRequest('Missing required parameter: token');
      const found = await findRefreshTokenByHash(services.store.db, tenant.id, hashToken(token));
      if (found) {
        if (found.client_id !== client.client_id) throw new InvalidGrant('The token was not issued to this client');
        await revokeRefreshTokenFamily(services.store.db, tenant.id, found.family_id);
        services.tenantLogs.recordFor(request, { type: 'srrt', client: { client_id: client.client_id, name: client.name }, user_id: found.user_id });
      }
      reply.header('cache-control', 'no-store');
      return reply.code(200).send();
    },
  });
}
