/**
 * Login transactions: the /authorize request a user is completing on the hosted pages. The id travels in the
 * pages' URLs (`state`, as the reference's hosted pages name it); forms also carry a CSRF token, and the
 * transaction is bound to this browser by a cookie, so a form replayed from another browser (login CSRF) or
 * an id copied out of a URL is refused.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomAlphanumeric, randomSecret } from '../crypto/ids.js';
import type { AuthorizationRequest } from '../auth-api/authorize/request.js';
import type { Services } from '../services.js';
import { findTransactionWithChallenge, type MfaChallenge } from '../store/mfa-challenges.js';
import type { User } from '../store/users.js';
import { deleteLoginTransaction, findLoginTransaction, type LoginTransactionRow, insertLoginTransaction, purgeExpiredLoginTransactions, setWebauthnCeremony, takeWebauthnCeremony, updateLoginTransactionRequest } from '../store/login-transactions.js';
import { parseCeremony, type Ceremony } from '../mfa/webauthn.js';
import { cookieOptions, sha256 } from './session.js';

export const BROWSER_COOKIE = 'gh_browser';
/** Long enough to read a page, sign up and come back; short enough not to pile up. */
const TRANSACTION_LIFETIME_MS = 30 * 60_000;
let createdSincePurge = 0;

export interface LoginTransaction {
  id: string;
  csrfToken: string;
  request: AuthorizationRequest;
  /** The WebAuthn ceremony a page of this login started (JSON, mfa/webauthn.ts), if one is open. */
  webauthnCeremony?: string;
}

/** This browser's binding value, set as a cookie when it has none (seen by the rest of this request too). */
export function browserValue(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[BROWSER_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{32,64}$/.test(existing)) return existing;
  const value = randomSecret(24);
  // A session cookie: it only needs to outlive the pages of one login.
  reply.setCookie(BROWSER_COOKIE, value, cookieOptions(request.tenant));
  request.cookies[BROWSER_COOKIE] = value;
  return value;
}

export async function createLoginTransaction(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  authorization: AuthorizationRequest,
  now = Date.now(),
): Promise<LoginTransaction> {
  if (++createdSincePurge >= 200) {
    createdSincePurge = 0;
    await purgeExpiredLoginTransactions(services.store.db, now);
  }
  const id = randomAlphanumeric(32);
  const csrfToken = randomSecret(24);
  await insertLoginTransaction(services.store.db, {
    id,
    tenant_id: request.tenant.id,
    client_id: authorization.clientId,
    request: JSON.stringify(authorization),
    browser_hash: sha256(browserValue(request, reply)),
    csrf_token: csrfToken,
    expires_at: now + TRANSACTION_LIFETIME_MS,
    created_at: now,
  });
  return { id, csrfToken, request: authorization };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The transaction named by `id`, if it exists, has not expired and belongs to this browser. With `csrfToken`
 * (every POST), the token must match too.
 */
export async function loadLoginTransaction(request: FastifyRequest, services: Services, id: unknown, csrfToken?: unknown): Promise<LoginTransaction | undefined> {
  if (!isTransactionId(id)) return undefined;
  return boundTransaction(request, await findLoginTransaction(services.store.db, request.tenant.id, id), csrfToken);
}

/**
 * loadLoginTransaction for the hosted second step: the transaction with its live challenge and the challenge's
 * user, read in one statement.
 */
export async function loadLoginTransactionWithChallenge(
  request: FastifyRequest,
  services: Services,
  id: unknown,
  csrfToken?: unknown,
): Promise<(LoginTransaction & { challenge?: MfaChallenge; user?: User }) | undefined> {
  if (!isTransactionId(id)) return undefined;
  const found = await findTransactionWithChallenge(services.store.db, services.store.dialect, request.tenant.id, id);
  const transaction = boundTransaction(request, found?.transaction, csrfToken);
  return transaction && { ...transaction, ...(found?.challenge && { challenge: found.challenge }), ...(found?.user && { user: found.user }) };
}

const isTransactionId = (id: unknown): id is string => typeof id === 'string' && /^[A-Za-z0-9]{32}$/.test(id);

/** The row as a transaction when it is bound to this browser (and, with `csrfToken`, the token matches). */
function boundTransaction(request: FastifyRequest, row: LoginTransactionRow | undefined, csrfToken?: unknown): LoginTransaction | undefined {
  const browser = request.cookies[BROWSER_COOKIE];
  if (!row || !browser || !sameSecret(sha256(browser), row.browser_hash)) return undefined;
  if (csrfToken !== undefined && (typeof csrfToken !== 'string' || !sameSecret(csrfToken, row.csrf_token))) return undefined;
  return { id: row.id, csrfToken: row.csrf_token, request: JSON.parse(row.request) as AuthorizationRequest, ...(row.webauthn_ceremony && { webauthnCeremony: row.webauthn_ceremony }) };
}

export async function saveLoginTransactionRequest(services: Services, transaction: LoginTransaction): Promise<void> {
  await updateLoginTransactionRequest(services.store.db, transaction.id, JSON.stringify(transaction.request));
}

/** Consumes the transaction; false when another request already completed it. */
export function finishLoginTransaction(services: Services, transaction: LoginTransaction): Promise<boolean> {
  return deleteLoginTransaction(services.store.db, transaction.id);
}

/** Keeps the WebAuthn ceremony a page is about to show on its transaction (replacing any open one). */
export async function openCeremony(services: Services, transaction: LoginTransaction, ceremony: Ceremony): Promise<void> {
  const value = JSON.stringify(ceremony);
  await setWebauthnCeremony(services.store.db, transaction.id, value);
  transaction.webauthnCeremony = value;
}

/** The transaction's open ceremony, if it has one of these purposes and has not expired (not taken). */
export function openedCeremony(transaction: LoginTransaction, purposes: readonly Ceremony['purpose'][]): Ceremony | undefined {
  const ceremony = parseCeremony(transaction.webauthnCeremony);
  return ceremony && purposes.includes(ceremony.purpose) ? ceremony : undefined;
}

/** Takes the open ceremony for an answer: once only, whatever the answer turns out to be. */
export async function takeCeremony(services: Services, transaction: LoginTransaction, purposes: readonly Ceremony['purpose'][]): Promise<Ceremony | undefined> {
  const ceremony = openedCeremony(transaction, purposes);
  if (!ceremony || !transaction.webauthnCeremony) return undefined;
  return (await takeWebauthnCeremony(services.store.db, transaction.id, transaction.webauthnCeremony)) ? ceremony : undefined;
}
