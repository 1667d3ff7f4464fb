/**
 * POST /passwordless/start (reference C.7): sends a one-time code or a magic link to an email address or a
 * phone number of a passwordless connection enabled for the client. Confidential clients authenticate as at
 * /oauth/token; public ones send their client_id. The answer is the same whether or not a user has that
 * address (no enumeration): `_id` names this start, never a user, and nothing is created until the first
 * successful login.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { errorResponses } from '../../http/responses.js';
import { CLIENT_AUTHENTICATION_ERRORS } from '../errors.js';
import { SmsDeliveryError, sendSms } from '../../messaging/sms.js';
import type { App, Services } from '../../services.js';
import { deletePasswordlessCode, purgeExpiredPasswordlessCodes, replacePasswordlessCode } from '../../store/passwordless-codes.js';
import { authenticateClient } from '../client-auth/index.js';
import { authorizationParameters, checkAuthorizationParameters } from './authorization.js';
import {
  CODE_LIFETIME_MS,
  codeHash,
  linkTokenHash,
  newCodeId,
  newLinkToken,
  newOneTimeCode,
  normalizeIdentifier,
  passwordlessConnectionFor,
} from './codes.js';
import { codeEmail, codeSms, linkEmail } from './messages.js';
import { VERIFY_REDIRECT_PATH } from './verify-redirect.js';

const StartBody = Type.Object(
  {
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
    client_assertion: Type.Optional(Type.String({ maxLength: 16_000 })),
    client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
    connection: Type.String({ minLength: 1, maxLength: 128 }),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    phone_number: Type.Optional(Type.String({ maxLength: 40 })),
    send: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Null()])),
    // auth0-js sends this one key in camelCase; its inner keys are the /authorize parameters.
    authParams: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 40 })),
  },
  // Like the other OAuth endpoints, unknown parameters are ignored.
  { additionalProperties: true },
);

/** The gateway refused or could not be reached: 400, as the reference answers. */
class SmsProviderError extends ProtocolError {
  constructor(status: number | 'unsupported' | undefined) {
    super(
      400,
      'sms_provider_error',
      status === 'unsupported'
        ? 'This server sends SMS through an HTTP gateway only: set the connection\'s provider to sms_gateway and its gateway_url'
        : status === undefined
          ? 'The SMS gateway could not be reached'
          : `Unexpected response while calling the SMS gateway: ${status}`,
    );
  }
}

const LANGUAGE = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8}){0,3}$/;
let startsSincePurge = 0;

/** The connection's own `authParams` option (a JSON string), under what the request sends. */
function connectionAuthParams(options: Record<string, unknown>): Record<string, unknown> {
  const raw = options.authParams;
  if (typeof raw === 'string') {
    try {
      const parsed: unknown = JSON.parse(raw);
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

export function registerPasswordlessStart(app: App, services: Services): void {
  app.post('/passwordless/start', {
    schema: {
      tags: ['authentication'],
      summary: 'Send a passwordless code or magic link',
      body: StartBody,
      response: {
        200: Type.Union([
          Type.Object({ _id: Type.String(), email: Type.String(), email_verified: Type.Boolean() }, { additionalProperties: false, title: 'Email sent' }),
          Type.Object(
            { _id: Type.String(), phone_number: Type.String(), phone_verified: Type.Boolean(), request_language: Type.Union([Type.String(), Type.Null()]) },
            { additionalProperties: false, title: 'SMS sent' },
          ),
        ]),
        ...errorResponses('oauth', {
          400: 'invalid_request (an unknown connection, a bad email or phone number, a bad send or authParams), sms_provider_error (the SMS gateway failed)',
          401: CLIENT_AUTHENTICATION_ERRORS[401].description.split(';')[0]!,
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
      const client = await authenticateClient(request, body, services, { allowPublic: true, endpointUrl: `${tenant.baseUrl}/passwordless/start` });
      const connection = await passwordlessConnectionFor(services, tenant, client.client_id, body.connection);
      if (!connection) throw new InvalidRequest(`The connection is not a passwordless connection enabled for this application: ${body.connection.slice(0, 100)}`);

      if ((body.email === undefined) === (body.phone_number === undefined)) throw new InvalidRequest('Send exactly one of email and phone_number');
      const field = connection.strategy === 'email' ? 'email' : 'phone_number';
      const raw = body[field];
      if (raw === undefined) throw new InvalidRequest(`The ${connection.strategy} connection needs ${field}, not ${field === 'email' ? 'phone_number' : 'email'}`);
      const identifier = normalizeIdentifier(connection.strategy, raw);
      if (!identifier) throw new InvalidRequest(field === 'email' ? 'email is not a valid email address' : 'phone_number must be in E.164 format, e.g. +15555550100');

      // A link unless asked for a code (C.7); SMS carries codes only.
      const send = body.send ?? (connection.strategy === 'sms' ? 'code' : 'link');
      if (send !== 'code' && send !== 'link') throw new InvalidRequest('send must be "code" or "link"');
      if (send === 'link' && connection.strategy === 'sms') throw new InvalidRequest('The sms connection sends codes only: use send "code"');

      const authParams = authorizationParameters({ ...connectionAuthParams(connection.options), ...body.authParams });
      if (send === 'link') {
        // The link finishes these parameters like /authorize; refuse now what the link would refuse later.
        const checked = await checkAuthorizationParameters(services, tenant, { ...authParams, client_id: client.client_id, connection: connection.name });
        if (!checked.ok) throw new InvalidRequest(`authParams: ${checked.error.description}`);
      }

      const now = Date.now();
      if (++startsSincePurge >= 200) {
        startsSincePurge = 0;
        await purgeExpiredPasswordlessCodes(services.store.db, now);
      }
      const id = newCodeId();
      const code = send === 'code' ? newOneTimeCode() : undefined;
      const linkToken = send === 'link' ? newLinkToken() : undefined;
      await replacePasswordlessCode(services.store.db, {
        id,
        tenant_id: tenant.id,
        connection_id: connection.id,
        client_id: client.client_id,
        identifier,
        code_hash: code === undefined ? null : codeHash(id, code),
        link_token_hash: linkToken === undefined ? null : linkTokenHash(linkToken),
        authParams,
        attempts: 0,
        verified_at: null,
        expires_at: now + CODE_LIFETIME_MS,
        created_at: now,
      });

      // `cls` for a link, `cs` for a code (the reference's codes); the identifier, never the code or link.
      const sent = () =>
        services.tenantLogs.recordFor(request, {
          type: send === 'link' ? 'cls' : 'cs',
          client: { client_id: client.client_id, name: client.name },
          connection: { id: connection.id, name: connection.name, strategy: connection.strategy },
          user_name: identifier,
        });
      const language = request.headers['x-request-language'];
      if (connection.strategy === 'email') {
        const content = linkToken !== undefined ? linkEmail(tenant, `${tenant.baseUrl}${VERIFY_REDIRECT_PATH}?token=${encodeURIComponent(linkToken)}`) : codeEmail(tenant, code!);
        try {
          // The mailer only queues (delivery retries happen later); a failure here means nothing was queued.
          await services.mailer.send({ tenant, to: identifier, ...content });
        } catch (error) {
          await deletePasswordlessCode(services.store.db, id);
          throw error;
        }
        sent();
        return { _id: id, email: identifier, email_verified: false };
      }
      try {
        await sendSms(services, connection, { tenant, to: identifier, body: codeSms(connection, code!) }, {
          log: request.log,
          ip: request.ip,
          ...(typeof request.headers['user-agent'] === 'string' && { userAgent: request.headers['user-agent'] }),
        });
      } catch (error) {
        // An undelivered code is dropped: nothing stays behind a failed start.
        await deletePasswordlessCode(services.store.db, id);
        if (error instanceof SmsDeliveryError) throw new SmsProviderError(error.status);
        throw error;
      }
      sent();
      return {
        _id: id,
        phone_number: identifier,
        phone_verified: false,
        request_language: typeof language === 'string' && LANGUAGE.test(language) ? language : null,
      };
    },
  });
}
