/**
 * GET and POST /authorize (RFC 6749 §4.1.1, §4.2.1; OIDC Core §3): the checks below run in order. Until the
 * client and its redirect URI are known good, a failure shows the error page and never redirects; after that,
 * failures go back to the client in its response mode. No CORS here, ever (RFC 9700 §2.6).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { sendErrorPage } from '../../login/error-page.js';
import { signInResponseHeaders } from '../../login/hosted-page.js';
import { loadLoginTransaction } from '../../login/transactions.js';
import type { App, Services } from '../../services.js';
import { checkClient } from './checks/client.js';
import { clientOf, type AuthorizeCheck, type CheckContext } from './checks/context.js';
import { checkConnection } from './checks/connection.js';
import { checkNonce } from './checks/nonce.js';
import { checkPkce } from './checks/pkce.js';
import { checkPrompt } from './checks/prompt.js';
import { checkRedirectUri } from './checks/redirect-uri.js';
import { checkResponseMode } from './checks/response-mode.js';
import { checkResponseType } from './checks/response-type.js';
import { checkScope } from './checks/scope.js';
import { checkWebMessageOrigin } from './checks/web-message-origin.js';
import { continueAuthorization, RESUME_PATH, sendAuthorizationError } from './complete.js';
import { completeWithLoginTicket } from './login-ticket.js';
import type { AuthorizationRequest, RawParameters } from './request.js';

/** Failures here show the error page: there is no trusted place to send them yet. */
const BEFORE_REDIRECT: AuthorizeCheck[] = [checkClient, checkRedirectUri, checkWebMessageOrigin];
/** Failures here are sent to the redirect URI; response_mode first, so the rest know how to deliver. */
const AFTER_REDIRECT: AuthorizeCheck[] = [checkResponseMode, checkResponseType, checkScope, checkNonce, checkPkce, checkPrompt, checkConnection];

const MAX_PARAMETER_LENGTH = 4000;

/** One string per parameter; repeated (RFC 6749 §3.1) or non-string parameters are refused. */
function readParameters(source: unknown): RawParameters {
  const params: RawParameters = {};
  if (!source || typeof source !== 'object') return params;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (typeof value !== 'string') throw new InvalidRequest(`Parameter ${name.slice(0, 50)} must be sent once`);
    if (value.length > MAX_PARAMETER_LENGTH) throw new InvalidRequest(`Parameter ${name.slice(0, 50)} is too long`);
    params[name] = value;
  }
  return params;
}

async function authorize(request: FastifyRequest, reply: FastifyReply, services: Services, source: unknown, afterPost: boolean): Promise<FastifyReply> {
  signInResponseHeaders(reply);
  const context: CheckContext = { services, tenant: request.tenant, params: {}, request: {} };
  try {
    context.params = readParameters(source);
    for (const check of BEFORE_REDIRECT) await check(context);
  } catch (error) {
    if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
    throw error;
  }
  const client = clientOf(context);
  try {
    for (const check of AFTER_REDIRECT) await check(context);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const deliverTo = { redirectUri: context.request.redirectUri!, responseMode: context.request.responseMode ?? 'query', state: context.params.state };
    return sendAuthorizationError(reply, request, client, deliverTo, error, afterPost);
  }
  // Embedded login (/co/authenticate) comes back with a ticket instead of showing the hosted page.
  if (context.params.login_ticket) return completeWithLoginTicket(request, reply, services, { client, request: context.request as AuthorizationRequest, afterPost }, context.params.login_ticket);
  return continueAuthorization(request, reply, services, { client, request: context.request as AuthorizationRequest, afterPost });
}

export function registerAuthorize(app: App, services: Services): void {
  const config = { rateLimit: { bucket: 'authorize' as const } };
  app.get('/authorize', { config, schema: { hide: true } }, (request, reply) => authorize(request, reply, services, request.query, false));
  app.post('/authorize', { config, schema: { hide: true } }, (request, reply) => authorize(request, reply, services, request.body, true));

  // Where every hosted page returns after a step (login, signup, consent): finish with the session it set.
  app.get(RESUME_PATH, { config, schema: { hide: true } }, async (request, reply) => {
    signInResponseHeaders(reply);
    const state = (request.query as Record<string, unknown>).state;
    const transaction = await loadLoginTransaction(request, services, state);
    if (!transaction) return sendErrorPage(reply, request, new InvalidRequest('This sign-in has expired or was already completed. Go back to the application and start again.'));
    const client = await services.configCache.client(request.tenant.id, transaction.request.clientId);
    if (!client) return sendErrorPage(reply, request, new InvalidRequest('The application no longer exists.', 'invalid_client'));
    return continueAuthorization(request, reply, services, { client, request: transaction.request, transaction, afterPost: false });
  });
}
