/**
 * POST /co/verify: the form the cross-origin verification page posts (`verifier`, `state`; reference C.8).
 * `state` names the login transaction the page was shown for (bound to this browser by its cookie); the
 * verifier must be the co_verifier issued with that transaction's ticket. One try: a wrong verifier spends the
 * ticket. On success the authorization finishes like /authorize?login_ticket with the cookie.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest } from '../../http/errors.js';
import { documentedOnly, FORM, frontChannelParameters } from '../../http/openapi.js';
import { htmlPage, redirect } from '../../http/responses.js';
import { CO_VERIFY_PATH } from '../../login/cross-origin-verification.js';
import { sendErrorPage } from '../../login/error-page.js';
import { sha256 } from '../../login/session.js';
import { formBody } from '../../login/step.js';
import { loadLoginTransaction } from '../../login/transactions.js';
import type { App, Services } from '../../services.js';
import { consumeCrossOriginTicket, findCrossOriginTicketByTransaction } from '../../store/cross-origin-tickets.js';
import { sendAuthorizationError } from '../authorize/complete.js';
import { redeemLoginTicket } from '../authorize/login-ticket.js';
import { AccessDenied } from '../errors.js';
import { sameHash } from './tickets.js';

async function verify(request: FastifyRequest, reply: FastifyReply, services: Services): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  const body = formBody(request);
  const transaction = await loadLoginTransaction(request, services, body.state);
  const client = transaction && (await services.configCache.client(request.tenant.id, transaction.request.clientId));
  if (!transaction || !client) {
    return sendErrorPage(reply, request, new InvalidRequest('This sign-in has expired or was sent from another browser. Go back to the application and sign in again.'));
  }
  const fail = (description: string) => sendAuthorizationError(reply, request, client, transaction.request, new AccessDenied(description), true);
  const ticket = await findCrossOriginTicketByTransaction(services.store.db, request.tenant.id, transaction.id);
  if (!ticket || ticket.client_id !== client.client_id) return fail('The login ticket is invalid, expired or was already used. Log in again.');
  const verifier = body.verifier ?? '';
  if (verifier.length === 0 || verifier.length > 200 || !sameHash(sha256(verifier), ticket.verifier_hash)) {
    await consumeCrossOriginTicket(services.store.db, ticket.id);
    return fail('Cross-origin verification failed: the application did not confirm this browser. Log in again.');
  }
  return redeemLoginTicket(request, reply, services, ticket, { client, request: transaction.request, transaction, afterPost: true });
}

export function registerCoVerify(app: App, services: Services): void {
  app.post(CO_VERIFY_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: ['authentication'],
      summary: "Cross-origin verification: the application's page confirms the browser (embedded login without third-party cookies)",
      ...documentedOnly({
        body: frontChannelParameters({ state: 'The login transaction', verifier: 'The co_verifier /co/authenticate issued' }, ['state', 'verifier']),
        consumes: [FORM],
      }),
      response: {
        200: htmlPage('The page that delivers the response (form_post, web_message)'),
        303: redirect("To the application's redirect URI with the response, or with access_denied when the verifier is wrong"),
        400: htmlPage('The error page: the sign-in expired or was sent from another browser'),
      },
    },
    handler: (request, reply) => verify(request, reply, services),
  });
}
