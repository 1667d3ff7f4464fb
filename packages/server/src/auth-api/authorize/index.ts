/**
 * GET and POST /authorize (RFC 6749 §4.1.1, §4.2.1; OIDC Core §3): the checks of checks/index.ts run in order. Until the
 * client and its redirect URI are known good, a failure shows the error page and never redirects; after that,
 * failures go back to the client in its response mode. No CORS here, ever (RFC 9700 §2.6).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { sendErrorPage } from '../../login/error-page.js';
import { signInResponseHeaders } from '../../login/hosted-page.js';
import { loadLoginTransaction } from '../../login/transactions.js';
import type { App, Services } from '../../services.js';
import { checkAuthorizationRequest } from './checks/index.js';
import { continueAuthorization, RESUME_PATH, sendAuthorizationError } from './complete.js';
import { completeWithLoginTicket } from './login-ticket.js';
import { readParameters, type RawParameters } from './request.js';

async function authorize(request: FastifyRequest, reply: FastifyReply, services: Services, source: unknown, afterPost: boolean): Promise<FastifyReply> {
  signInResponseHeaders(reply);
  let params: RawParameters;
  try {
    params = readParameters(source);
  } catch (error) {
    if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
    throw error;
  }
  // The table of checks is in checks/index.ts.
  const checked = await checkAuthorizationRequest(services, request.tenant, params);
  if (!checked.ok) {
    if (!checked.deliverTo) return sendErrorPage(reply, request, checked.error);
    return sendAuthorizationError(reply, request, checked.deliverTo.client, checked.deliverTo, checked.error, afterPost);
  }
  const { client } = checked;
  // Embedded login (/co/authenticate) comes back with a ticket instead of showing the hosted page.
  if (params.login_ticket) return completeWithLoginTicket(request, reply, services, { client, request: checked.request, afterPost }, params.login_ticket);
  return continueAuthorization(request, reply, services, { client, request: checked.request, afterPost });
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
