/**
 * The MFA API's `mfa_token`: what a password grant hands out with `mfa_required` instead of tokens, and what the
 * client then shows at /mfa/authenticators, /mfa/associate, /mfa/challenge and the mfa-* grants.
 *  - It is sealed (crypto/sealing.ts, bound to the tenant): the client, the user, the first factor's `amr`, the
 *    scope and audience asked for, and its expiry (10 minutes, the reference's) travel inside it, so no lookup
 *    is needed to know whose it is, and a token of another tenant or a forged one does not open.
 *  - Behind it is an mfa_challenges row (one insert at the password step), which makes it single use: a grant
 *    that succeeds deletes the row, and only one of two requests can. The row also holds the email code sent
 *    for an oob challenge, as the hosted pages' challenges do.
 *  - It is bound to the client it was issued to: a grant or challenge by another client is refused.
 */
import { randomAlphanumeric } from '../../crypto/ids.js';
import { ProtocolError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { findMfaChallengeById, insertMfaChallenge, purgeExpiredMfaChallenges, type MfaChallenge } from '../../store/mfa-challenges.js';
import type { Tenant } from '../../store/tenants.js';
import type { User } from '../../store/users.js';
import { InvalidGrant } from '../user-tokens/errors.js';

export const MFA_TOKEN_LIFETIME_MS = 10 * 60_000;
/** The MFA API's challenges share mfa_challenges with the hosted pages'; their transaction ids say whose they are. */
const TRANSACTION_PREFIX = 'mfa-api:';
let createdSincePurge = 0;

export interface MfaTokenClaims {
  /** The mfa_challenges row behind the token. */
  id: string;
  clientId: string;
  userId: string;
  /** The first factor's `amr` values. */
  amr: string[];
  scope: string;
  audience: string | null;
  /** Epoch ms. */
  expiresAt: number;
}

const sealContext = (tenantId: string) => `mfa-token:${tenantId}`;

/** Where the token is read: the grants and /mfa/challenge answer as the token endpoint does, the Bearer routes as RFC 6750. */
export type TokenPlace = 'grant' | 'bearer';

/** The token cannot be opened or read (forged, truncated, another tenant's). */
function malformed(place: TokenPlace): ProtocolError {
  return place === 'grant' ? new InvalidGrant('Malformed mfa_token', 403) : bearerError('invalid_token', 'Malformed mfa_token');
}

function expired(place: TokenPlace): ProtocolError {
  return place === 'grant' ? new ProtocolError(403, 'expired_token', 'mfa_token is expired') : bearerError('expired_token', 'mfa_token is expired');
}

/** The token is right but its challenge is gone: a grant already succeeded with it. */
export function usedToken(place: TokenPlace): ProtocolError {
  return place === 'grant' ? new InvalidGrant('mfa_token was already used', 403) : bearerError('invalid_token', 'mfa_token was already used');
}

/** RFC 6750 §3: a 401 says how to authenticate. */
function bearerError(code: string, description: string): ProtocolError {
  return new ProtocolError(401, code, description, { 'www-authenticate': `Bearer error="${code}", error_description="${description}"` });
}

/** Leaves the second factor owed through the MFA API: the mfa_token to answer `mfa_required` with. One insert. */
export async function issueMfaToken(services: Services, tenant: Tenant, client: Client, user: User, request: { amr: string[]; scope: string | undefined; audience: string | null }): Promise<string> {
  const now = Date.now();
  const id = randomAlphanumeric(24);
  if (++createdSincePurge >= 200) {
    createdSincePurge = 0;
    await purgeExpiredMfaChallenges(services.store.db, now);
  }
  const expiresAt = now + MFA_TOKEN_LIFETIME_MS;
  await insertMfaChallenge(services.store.db, { id, tenantId: tenant.id, userId: user.user_id, transactionId: `${TRANSACTION_PREFIX}${id}`, amr: request.amr, recoveryCodeSealed: null, expiresAt, createdAt: now });
  const claims: MfaTokenClaims = { id, clientId: client.client_id, userId: user.user_id, amr: request.amr, scope: request.scope ?? '', audience: request.audience, expiresAt };
  return services.sealer.seal(JSON.stringify(claims), sealContext(tenant.id));
}

function isClaims(value: unknown): value is MfaTokenClaims {
  const v = value as Partial<MfaTokenClaims> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.id === 'string' &&
    typeof v.clientId === 'string' &&
    typeof v.userId === 'string' &&
    Array.isArray(v.amr) &&
    typeof v.scope === 'string' &&
    (typeof v.audience === 'string' || v.audience === null) &&
    typeof v.expiresAt === 'number'
  );
}

/** Opens an mfa_token (no lookup): its claims, or the reference's error for a malformed or expired one. */
export function readMfaToken(services: Pick<Services, 'sealer'>, tenant: Tenant, raw: string, place: TokenPlace, now = Date.now()): MfaTokenClaims {
  let claims: unknown;
  try {
    claims = JSON.parse(services.sealer.unseal(raw, sealContext(tenant.id)));
  } catch {
    throw malformed(place);
  }
  if (!isClaims(claims)) throw malformed(place);
  if (claims.expiresAt <= now) throw expired(place);
  return claims;
}

/** The token's claims, checked to be this client's: a token handed to one client is no use to another. */
export function readClientMfaToken(services: Pick<Services, 'sealer'>, tenant: Tenant, client: Client, raw: string): MfaTokenClaims {
  const claims = readMfaToken(services, tenant, raw, 'grant');
  if (claims.clientId !== client.client_id) throw new InvalidGrant('The mfa_token was issued to another client', 403);
  return claims;
}

/** The challenge behind a token, while it is live and unused (one lookup). */
export async function liveChallenge(services: Services, tenant: Tenant, claims: MfaTokenClaims, place: TokenPlace): Promise<MfaChallenge> {
  const challenge = await findMfaChallengeById(services.store.db, tenant.id, claims.id);
  if (!challenge || challenge.userId !== claims.userId) throw usedToken(place);
  return challenge;
}

/** The mfa_token of a Bearer route (`Authorization: Bearer <mfa_token>`). */
export function bearerMfaToken(services: Pick<Services, 'sealer'>, tenant: Tenant, authorization: string | undefined): MfaTokenClaims {
  const match = /^Bearer +(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw bearerError('invalid_token', 'An mfa_token is required as a Bearer token');
  return readMfaToken(services, tenant, match[1]!, 'bearer');
}
