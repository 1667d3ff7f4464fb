/**
 * /authorize?login_ticket=… (auth0-js `login` after /co/authenticate): completes without UI, top-level or in a
 * web_message iframe. The ticket must be unexpired, unused and this client's.
 *  - With the cookie /co/authenticate set: the ticket is used up, an SSO session starts for its user and the
 *    authorization continues as if the user had just logged in on the hosted page.
 *  - Without it (third-party cookies blocked when the XHR ran): the verification page asks the app's
 *    cross_origin_loc page for the co_verifier and posts it to /co/verify (reference C.8, protocol 5.4).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProtocolError } from '../../http/errors.js';
import { sendCrossOriginVerificationPage } from '../../login/cross-origin-verification.js';
import { sha256, startSession } from '../../login/session.js';
import { createLoginTransaction, saveLoginTransactionRequest } from '../../login/transactions.js';
import type { Services } from '../../services.js';
import { awaitCrossOriginVerification, consumeCrossOriginTicket, findCrossOriginTicket, type CrossOriginTicketRow } from '../../store/cross-origin-tickets.js';
import { findUser } from '../../store/users.js';
import { fromTicketBrowser, LOGIN_TICKET, MAX_TICKET_AGE_MS, VERIFICATION_LIFETIME_MS } from '../co/tickets.js';
import { AccessDenied } from '../errors.js';
import { continueAuthorization, sendAuthorizationError, type Continuation } from './complete.js';
import type { AuthorizationRequest } from './request.js';

const INVALID_TICKET = 'The login ticket is invalid, expired or was already used. Log in again.';

/** The user has just authenticated with the ticket's credentials: prompt=login and max_age are satisfied. */
function justAuthenticated(request: AuthorizationRequest): AuthorizationRequest {
  const { maxAge: _maxAge, ...rest } = request;
  return { ...rest, prompt: request.prompt.filter((p) => p !== 'login') };
}

/**
 * Uses up `ticket`, starts a session for its user and continues the authorization. Shared by the cookie path
 * here and by /co/verify after the verifier matched.
 */
export async function redeemLoginTicket(
  httpRequest: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  ticket: CrossOriginTicketRow,
  continuation: Continuation,
): Promise<FastifyReply> {
  const { client, request } = continuation;
  const fail = (error: ProtocolError) => sendAuthorizationError(reply, httpRequest, client, request, error, continuation.afterPost ?? false);
  if (!(await consumeCrossOriginTicket(services.store.db, ticket.id))) return fail(new AccessDenied(INVALID_TICKET));
  const user = await findUser(services.store.db, httpRequest.tenant.id, ticket.user_id);
  if (!user || user.blocked) return fail(new AccessDenied('The user of this login ticket no longer exists or is blocked.'));
  const session = await startSession(httpRequest, reply, services, user);
  const satisfied = justAuthenticated(request);
  // A transaction that goes on to the consent page must remember that the login already happened.
  const { transaction } = continuation;
  if (transaction) {
    transaction.request = satisfied;
    await saveLoginTransactionRequest(services, transaction);
  }
  return continueAuthorization(httpRequest, reply, services, { ...continuation, request: satisfied, session: { session, user } });
}

async function verifyInstead(httpRequest: FastifyRequest, reply: FastifyReply, services: Services, ticket: CrossOriginTicketRow, continuation: Continuation): Promise<FastifyReply> {
  const { client, request } = continuation;
  if (!client.cross_origin_loc) {
    const error = new AccessDenied('The login ticket cannot be verified: this browser did not send its cookie and the application has no cross_origin_loc.');
    return sendAuthorizationError(reply, httpRequest, client, request, error, continuation.afterPost ?? false);
  }
  // The transaction (bound to this top-level browser by its own cookie) keeps the request until /co/verify.
  const transaction = await createLoginTransaction(httpRequest, reply, services, request);
  // A fresh minute for the exchange, but never past the ticket's last moment: reloads cannot keep it alive.
  const deadline = Math.min(Date.now() + VERIFICATION_LIFETIME_MS, ticket.created_at + MAX_TICKET_AGE_MS);
  await awaitCrossOriginVerification(services.store.db, ticket.id, transaction.id, deadline);
  return sendCrossOriginVerificationPage(reply, httpRequest.tenant, client, request, { coId: ticket.id, state: transaction.id, crossOriginLoc: client.cross_origin_loc });
}

export async function completeWithLoginTicket(httpRequest: FastifyRequest, reply: FastifyReply, services: Services, continuation: Continuation, loginTicket: string): Promise<FastifyReply> {
  const { client, request } = continuation;
  const ticket = LOGIN_TICKET.test(loginTicket) ? await findCrossOriginTicket(services.store.db, httpRequest.tenant.id, sha256(loginTicket)) : undefined;
  if (!ticket || ticket.client_id !== client.client_id) {
    // A ticket shown to the wrong client is spent: it has left the app it was issued to.
    if (ticket) await consumeCrossOriginTicket(services.store.db, ticket.id);
    return sendAuthorizationError(reply, httpRequest, client, request, new AccessDenied(INVALID_TICKET), continuation.afterPost ?? false);
  }
  if (fromTicketBrowser(httpRequest, ticket)) return redeemLoginTicket(httpRequest, reply, services, ticket, continuation);
  return verifyInstead(httpRequest, reply, services, ticket, continuation);
}
