/**
 * Login tickets of cross-origin authentication: what /co/authenticate hands the embedded login after checking
 * the credentials, and /authorize?login_ticket (or /co/verify) redeems for an SSO session.
 *  - The ticket, the verifier and the browser cookie are random; only their SHA-256 hashes are stored.
 *  - A ticket lives 60 seconds (auth0-js navigates to /authorize right after the XHR), a minute more once the
 *    verification page is shown (3 minutes from issue at most), and is used once.
 *  - It is bound to its client and to this browser: the cookie set with it must come back, or, when third-party
 *    cookies are blocked, the app's page must hand back the co_verifier (reference C.8, protocol 5.4).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomAlphanumeric, randomSecret } from '../../crypto/ids.js';
import { cookieOptions, sha256 } from '../../login/session.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { insertCrossOriginTicket, type CrossOriginTicketRow } from '../../store/cross-origin-tickets.js';
import type { User } from '../../store/users.js';

/** Binds tickets to the browser that authenticated; the same value serves every ticket of this browser. */
export const CROSS_ORIGIN_COOKIE = 'gh_co';
export const TICKET_LIFETIME_MS = 60_000;
/** The fallback page gets this long, from when it is shown, for the verifier exchange and its form post. */
export const VERIFICATION_LIFETIME_MS = 60_000;
/** However often the verification page is reloaded, a ticket is dead this long after it was issued. */
export const MAX_TICKET_AGE_MS = 3 * 60_000;

const COOKIE_VALUE = /^[A-Za-z0-9_-]{32,64}$/;
export const LOGIN_TICKET = /^[A-Za-z0-9_-]{43}$/;

export interface IssuedTicket {
  login_ticket: string;
  co_verifier: string;
  co_id: string;
}

function browserValue(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[CROSS_ORIGIN_COOKIE];
  if (existing && COOKIE_VALUE.test(existing)) return existing;
  const value = randomSecret(24);
  // SameSite=None; Secure over https: this cookie is set by a credentialed cross-site XHR.
  reply.setCookie(CROSS_ORIGIN_COOKIE, value, cookieOptions(request.tenant));
  return value;
}

export async function issueLoginTicket(request: FastifyRequest, reply: FastifyReply, services: Services, client: Client, user: User, now = Date.now()): Promise<IssuedTicket> {
  const issued: IssuedTicket = { login_ticket: randomSecret(32), co_verifier: randomSecret(32), co_id: randomAlphanumeric(32) };
  await insertCrossOriginTicket(services.store.db, {
    id: issued.co_id,
    tenant_id: request.tenant.id,
    client_id: client.client_id,
    user_id: user.user_id,
    ticket_hash: sha256(issued.login_ticket),
    verifier_hash: sha256(issued.co_verifier),
    browser_hash: sha256(browserValue(request, reply)),
    transaction_id: null,
    expires_at: now + TICKET_LIFETIME_MS,
    created_at: now,
  });
  return issued;
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether this request carries the cookie the ticket was issued with. */
export function fromTicketBrowser(request: FastifyRequest, ticket: CrossOriginTicketRow): boolean {
  const value = request.cookies[CROSS_ORIGIN_COOKIE];
  return !!value && COOKIE_VALUE.test(value) && sameHash(sha256(value), ticket.browser_hash);
}
