/**
 * POST /dbconnections/change_password (reference C.6; auth0-js `changePassword`): emails a reset link when the
 * email (or username) names a user of the connection. The answer is the same plain-text sentence either way,
 * and the lookup and email happen after it is sent, so neither the body nor the timing tells whether the
 * account exists.
 */
import { Type } from '@fastify/type-provider-typebox';
import { requestPasswordReset } from '../../messaging/account-emails.js';
import { errorResponses, textBody } from '../../http/responses.js';
import type { App, Services } from '../../services.js';
import { clientAndConnection, dbConnectionsCors, DbConnectionsBadRequest, DbConnectionsUnauthorized } from './common.js';
import { isEmailAddress, normalizeEmail } from '../../connections/email-address.js';

export const CHANGE_PASSWORD_SENT = "We've just sent you an email to reset your password.";

const ChangePasswordBody = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 64 }),
    connection: Type.String({ minLength: 1, maxLength: 128 }),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    organization: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: true },
);

export function registerChangePassword(app: App, services: Services): void {
  app.post('/dbconnections/change_password', {
    schema: {
      tags: ['authentication'],
      summary: 'Send a password reset email',
      body: ChangePasswordBody,
      response: {
        200: textBody(`Always (whether or not the account exists): ${CHANGE_PASSWORD_SENT}`),
        ...errorResponses('dbconnections', {
          400: 'invalid_request: no or a bad email, an unknown client or connection',
          403: 'unauthorized: password changes are disabled for the connection, or the browser origin is not allowed for the client',
        }),
      },
    },
    config: { rateLimit: { bucket: 'dbconnections' }, cors: dbConnectionsCors(services) },
    handler: async (request, reply) => {
      const body = request.body;
      const email = body.email === undefined ? undefined : normalizeEmail(body.email);
      const username = body.username?.trim();
      if (!email && !username) throw new DbConnectionsBadRequest('email is required');
      if (email && !isEmailAddress(email)) throw new DbConnectionsBadRequest('email is not a valid email address');
      const { client, connection } = await clientAndConnection(request, services, body.client_id, body.connection);
      if (connection.options.disable_self_service_change_password === true) {
        throw new DbConnectionsUnauthorized('Changing the password is disabled for this connection');
      }
      const tenant = request.tenant;
      const log = request.log;
      // Not awaited: the answer must not wait on (and so reveal) whether there was a user to email.
      void requestPasswordReset(services, tenant, connection, email ? { email } : { username }, client.client_id).catch((err: unknown) => {
        log.error({ err }, 'queueing a password reset email failed');
      });
      services.tenantLogs.recordFor(request, {
        type: 'scpr',
        client: { client_id: client.client_id, name: client.name },
        connection: { id: connection.id, name: connection.name, strategy: connection.strategy },
        user_name: email ?? username,
      });
      return reply.code(200).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(CHANGE_PASSWORD_SENT);
    },
  });
}
