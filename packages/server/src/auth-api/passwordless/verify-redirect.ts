/**
 * GET /passwordless/verify_redirect: where a passwordless login in the browser ends, like /authorize.
 *  - `?token=…`: the magic link from the email. The token (single use, 5 minutes) finishes the `authParams`
 *    stored by the start request.
 *  - `?verification_code=…&email|phone_number=…&connection=…&client_id=…` plus /authorize parameters: what
 *    auth0-js `passwordlessVerify` navigates to after POST /passwordless/verify accepted the code. The query's
 *    parameters win over the stored `authParams` (the SDK stored its state and nonce for these).
 * Either way the parameters pass the /authorize checks, the user gets an SSO session, and the login continues
 * at /authorize/resume exactly as after the hosted login page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { eventContextFrom } from '../../events/context.js';
import { InvalidRequest } from '../../http/errors.js';
import { documentedOnly, frontChannelParameters } from '../../http/openapi.js';
import { AUTHORIZE_PARAMETERS, AUTHORIZE_RESPONSES } from '../authorize/index.js';
import { sendErrorPage } from '../../login/error-page.js';
import { startSession } from '../../login/session.js';
import { createLoginTransaction } from '../../login/transactions.js';
import type { App, Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { findConnectionById, type Connection } from '../../store/connections.js';
import { deletePasswordlessCode, findPasswordlessCode, findPasswordlessLink } from '../../store/passwordless-codes.js';
import { RESUME_PATH, sendAuthorizationError } from '../authorize/complete.js';
import type { AuthorizationRequest } from '../authorize/request.js';
import { AccessDenied } from '../errors.js';
import { authorizationParameters, checkAuthorizationParameters, sendCheckFailure } from './authorization.js';
import { codeHash, hashesEqual, isPasswordless, linkTokenHash, normalizeIdentifier, passwordlessConnectionFor, passwordlessUser, type PasswordlessStrategy } from './codes.js';

export const VERIFY_REDIRECT_PATH = '/passwordless/verify_redirect';

/** Parameters that prove the login; they are not part of the authorization request. */
const VERIFICATION_PARAMETERS = ['verification_code', 'email', 'phone_number', 'token'];

function deadLink(): InvalidRequest {
  return new InvalidRequest('This sign-in link has expired or was already used. Go back to the application and ask for a new one.');
}

function wrongCode(strategy: PasswordlessStrategy | undefined): AccessDenied {
  return new AccessDenied(strategy === 'sms' ? 'Wrong phone number or verification code.' : 'Wrong email or verification code.');
}

/** The proven user signs in: a new SSO session, then the authorization continues as after the login page. */
async function signIn(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  connection: Connection & { strategy: PasswordlessStrategy },
  identifier: string,
  client: Client,
  authorization: AuthorizationRequest,
): Promise<FastifyReply> {
  const result = await passwordlessUser(services, connection, identifier, { ip: request.ip, event: { ...eventContextFrom(request), client_id: client.client_id } });
  if (result.outcome !== 'ok') {
    const error = result.outcome === 'blocked' ? new AccessDenied('user is blocked') : new AccessDenied('Signups are disabled for this connection');
    return sendAuthorizationError(reply, request, client, authorization, error, false);
  }
  await startSession(request, reply, services, result.user);
  const transaction = await createLoginTransaction(request, reply, services, authorization);
  return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 302);
}

async function finishLink(request: FastifyRequest, reply: FastifyReply, services: Services, token: string): Promise<FastifyReply> {
  const tenant = request.tenant;
  const pending = token.length <= 100 ? await findPasswordlessLink(services.store.db, tenant.id, linkTokenHash(token)) : undefined;
  if (!pending || pending.expires_at <= Date.now()) return sendErrorPage(reply, request, deadLink());
  const connection = await findConnectionById(services.store.db, tenant.id, pending.connection_id);
  if (!connection || !isPasswordless(connection)) return sendErrorPage(reply, request, deadLink());
  const checked = await checkAuthorizationParameters(services, tenant, { ...pending.authParams, client_id: pending.client_id, connection: connection.name });
  if (!checked.ok) return sendCheckFailure(request, reply, checked);
  // Single use: of two clicks racing, only the one that deletes the row signs in.
  if (!(await deletePasswordlessCode(services.store.db, pending.id))) return sendErrorPage(reply, request, deadLink());
  return signIn(request, reply, services, connection, pending.identifier, checked.client, checked.request);
}

async function finishVerifiedCode(request: FastifyRequest, reply: FastifyReply, services: Services, query: Record<string, string>): Promise<FastifyReply> {
  const tenant = request.tenant;
  const db = services.store.db;
  const connection = query.client_id && query.connection ? await passwordlessConnectionFor(services, tenant, query.client_id, query.connection) : undefined;
  const rawIdentifier = connection?.strategy === 'sms' ? query.phone_number : query.email;
  const identifier = connection && rawIdentifier !== undefined ? normalizeIdentifier(connection.strategy, rawIdentifier) : undefined;
  const pending = connection && identifier ? await findPasswordlessCode(db, connection.id, identifier) : undefined;

  const own = Object.fromEntries(Object.entries(query).filter(([name]) => !VERIFICATION_PARAMETERS.includes(name)));
  const stored = pending && pending.client_id === query.client_id ? pending.authParams : {};
  const checked = await checkAuthorizationParameters(services, tenant, { ...stored, ...own });
  if (!checked.ok) return sendCheckFailure(request, reply, checked);

  const code = query.verification_code ?? '';
  const proven =
    connection !== undefined &&
    identifier !== undefined &&
    typeof pending?.code_hash === 'string' &&
    pending.verified_at !== null &&
    pending.expires_at > Date.now() &&
    pending.client_id === checked.client.client_id &&
    /^\d{6}$/.test(code) &&
    hashesEqual(codeHash(pending.id, code), pending.code_hash);
  if (!proven || !connection || !identifier) {
    // A wrong guess against a code proven by /passwordless/verify ends it: no guessing here without limits.
    if (pending && pending.verified_at !== null) await deletePasswordlessCode(db, pending.id);
    return sendAuthorizationError(reply, request, checked.client, checked.request, wrongCode(connection?.strategy), false);
  }
  if (!(await deletePasswordlessCode(db, pending.id))) return sendAuthorizationError(reply, request, checked.client, checked.request, wrongCode(connection.strategy), false);
  return signIn(request, reply, services, connection, identifier, checked.client, checked.request);
}

export function registerPasswordlessVerifyRedirect(app: App, services: Services): void {
  app.get(VERIFY_REDIRECT_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: ['authentication'],
      summary: 'Finish a passwordless login in the browser: the emailed link, or a code checked by /passwordless/verify',
      ...documentedOnly({
        querystring: frontChannelParameters({
          ...AUTHORIZE_PARAMETERS,
          token: "The emailed link's token (then nothing else is needed)",
          verification_code: 'The 6-digit code',
          email: 'For an email connection',
          phone_number: 'For an sms connection',
        }),
      }),
      response: AUTHORIZE_RESPONSES,
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const query = authorizationParameters((request.query ?? {}) as Record<string, unknown>);
    if (query.token !== undefined) return finishLink(request, reply, services, query.token);
    return finishVerifiedCode(request, reply, services, query);
  });
}
