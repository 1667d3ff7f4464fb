/**
 * Post/redirect/get for the hosted pages' forms (#19): a POST that does not move on answers 303 back to its own
 * page rather than a page in place, so that a reload shows the page again instead of sending the form (and a
 * password) a second time, and Back leads where the person expects. What the page must show after the redirect
 * (the problem, the status to answer with, what the person typed, never a password) travels in a short-lived
 * sealed cookie, bound to the page and to its transaction or ticket, and counts only at the URL the redirect
 * named (`retry=<id>`): reloading that URL shows the same page, while opening the page afresh from a link
 * starts clean.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PasswordRule } from '../connections/password-policy.js';
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Services } from '../services.js';
import { cookieOptions } from './session.js';

const COOKIE = 'gh_form';
/** Long enough to read the page and reload it; the transaction itself lasts 30 minutes. */
const LIFETIME_SECONDS = 15 * 60;
const QUERY = 'retry';

export interface FormOutcome {
  /** The status the page answers with when shown: 400 for a problem to fix, 429 for a refusal, 200 for a done state. */
  status: number;
  error?: string;
  /** Fields to fill in again as they were typed. Never a password. */
  values?: Record<string, string>;
  /** The password rules as checked against what was typed (whether each was met; the password is not kept). */
  passwordRules?: PasswordRule[];
  /** The form did its work (an email was sent, a password was changed): the page shows that state. */
  done?: boolean;
}

interface SealedOutcome extends FormOutcome {
  id: string;
  page: string;
  binding: string;
}

/** Which form an outcome belongs to: the page, and the transaction id or a hash of the ticket it was posted with. */
export interface FormPlace {
  page: string;
  binding: string;
}

const sealContext = (tenantId: string) => `form-outcome:${tenantId}`;

/** Keeps `outcome` for the page and answers 303 to `url` (a path with its query), which shows it. */
export function redirectWithOutcome(
  reply: FastifyReply,
  request: FastifyRequest,
  services: Pick<Services, 'sealer'>,
  place: FormPlace & { url: string },
  outcome: FormOutcome,
): FastifyReply {
  const id = randomAlphanumeric(16);
  const sealed: SealedOutcome = { ...outcome, id, page: place.page, binding: place.binding };
  reply.setCookie(COOKIE, services.sealer.seal(JSON.stringify(sealed), sealContext(request.tenant.id)), { ...cookieOptions(request.tenant, LIFETIME_SECONDS), path: '/u' });
  const separator = place.url.includes('?') ? '&' : '?';
  return reply.redirect(`${place.url}${separator}${QUERY}=${id}`, 303);
}

/** The outcome this GET was redirected to show, if the URL names it and the cookie holds it for this page. */
export function formOutcome(request: FastifyRequest, services: Pick<Services, 'sealer'>, place: FormPlace): FormOutcome | undefined {
  const id = (request.query as Record<string, unknown>)[QUERY];
  const cookie = request.cookies[COOKIE];
  if (typeof id !== 'string' || !cookie) return undefined;
  try {
    const stored = JSON.parse(services.sealer.unseal(cookie, sealContext(request.tenant.id))) as SealedOutcome;
    if (stored.id !== id || stored.page !== place.page || stored.binding !== place.binding) return undefined;
    const { id: _id, page: _page, binding: _binding, ...outcome } = stored;
    return outcome;
  } catch {
    // Tampered, from another key, or not ours: as if there were none.
    return undefined;
  }
}
