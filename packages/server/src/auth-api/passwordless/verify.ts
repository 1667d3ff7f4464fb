/**
 * POST /passwordless/verify: checks a one-time code without using it up, and marks it proven so that the
 * browser's next step, GET /passwordless/verify_redirect with the same code, may sign in with it once.
 * auth0-js `passwordlessVerify` sends `{connection, verification_code, email|phone_number, client_id}`; the
 * legacy form `{client_id, connection, grant_type: "password", username, password}` is read the same way.
 * A check spends one of the code's three attempts, as every other way of using a code does.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest } from '../../http/errors.js';
import { errorResponses } from '../../http/responses.js';
import type { App, Services } from '../../services.js';
import { markPasswordlessVerified } from '../../store/passwordless-codes.js';
import { InvalidClient } from '../errors.js';
import { InvalidGrant } from '../user-tokens/errors.js';
import { checkOneTimeCode, normalizeIdentifier, passwordlessConnectionFor } from './codes.js';

const VerifyBody = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 200 }),
    connection: Type.String({ minLength: 1, maxLength: 128 }),
    verification_code: Type.Optional(Type.String({ maxLength: 100 })),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    phone_number: Type.Optional(Type.String({ maxLength: 40 })),
    username: Type.Optional(Type.String({ maxLength: 320 })),
    password: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: true },
);

export function registerPasswordlessVerify(app: App, services: Services): void {
  app.post('/passwordless/verify', {
    schema: {
      tags: ['authentication'],
      summary: 'Check a passwordless code before /passwordless/verify_redirect',
      body: VerifyBody,
      response: {
        200: Type.Object({}, { additionalProperties: false, description: 'The code is right; /passwordless/verify_redirect may use it once' }),
        ...errorResponses('oauth', {
          400: 'invalid_request: an unknown connection, a missing identifier or code',
          401: 'invalid_client: an unknown client',
          403: 'invalid_grant: a wrong, expired or exhausted code',
        }),
      },
    },
    config: {
      rateLimit: { bucket: 'passwordless' },
      cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const body = request.body;
      const tenant = request.tenant;
      const client = await services.configCache.client(tenant.id, body.client_id);
      if (!client) throw new InvalidClient();
      const connection = await passwordlessConnectionFor(services, tenant, client.client_id, body.connection);
      if (!connection) throw new InvalidRequest(`The connection is not a passwordless connection enabled for this application: ${body.connection.slice(0, 100)}`);
      const field = connection.strategy === 'email' ? 'email' : 'phone_number';
      const rawIdentifier = body[field] ?? body.username;
      const code = body.verification_code ?? body.password;
      if (rawIdentifier === undefined) throw new InvalidRequest(`Missing required parameter: ${field}`);
      if (code === undefined) throw new InvalidRequest('Missing required parameter: verification_code');
      const wrong = connection.strategy === 'email' ? 'Wrong email or verification code.' : 'Wrong phone number or verification code.';
      const identifier = normalizeIdentifier(connection.strategy, rawIdentifier);
      if (!identifier) throw new InvalidGrant(wrong, 403);
      const check = await checkOneTimeCode(services, connection, identifier, code.trim(), { consume: false, clientId: client.client_id });
      if (check.outcome === 'expired') throw new InvalidGrant('The verification code has expired or was tried too many times. Ask for a new one.', 403);
      if (check.outcome !== 'ok') throw new InvalidGrant(wrong, 403);
      await markPasswordlessVerified(services.store.db, check.code.id);
      return reply.code(200).send({});
    },
  });
}
