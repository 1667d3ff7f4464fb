/**
 * grant_type=refresh_token, the part after client authentication: the token must be this client's, live and
 * unexpired. Rotating clients get the next token of the family; the previous one may be exchanged again only
 * within the client's reuse interval (`leeway`), after which any use revokes the whole family (C.3, RFC 9700
 * §4.14.2). Non-rotating tokens stay, their idle expiry moved on.
 */
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import {
  findRefreshTokenByHash,
  isRefreshTokenFamilyRevoked,
  markRefreshTokenRotated,
  revokeRefreshTokenFamily,
  touchRefreshToken,
  type RefreshToken,
} from '../../store/refresh-tokens.js';
import type { Tenant } from '../../store/tenants.js';
import { findPrimaryUser } from '../../store/users.js';
import { InvalidScope } from '../errors.js';
import type { IssuedUserTokens, UserAuthorization } from './authorization.js';
import { InvalidGrant } from './errors.js';
import { requireProofForApi, type Confirmation } from '../sender-constraint.js';
import { issueWithPlan, planIssue } from './issue.js';
import { createRefreshToken, hashToken, refreshPolicy, type FamilyPlacement } from './refresh-tokens.js';
import { parseScope, resolveUserScopes } from './scopes.js';

export interface RefreshExchange {
  tenant: Tenant;
  /** The authenticated client. */
  client: Client;
  refreshToken: string;
  /** A narrower scope for this access token (RFC 6749 §6); the refresh token keeps the original grant. */
  requestedScope: string | undefined;
  /** What the request binds the tokens to (its DPoP key, its client certificate). */
  confirmation: Confirmation;
  /** Told whose grant this is once the client's own is found (the tenant log names the user). */
  onUser?: (userId: string) => void;
}

/** Revokes the whole family: the token was used after its reuse interval, so someone holds a copy. */
async function refuseReuse(services: Services, token: RefreshToken): Promise<never> {
  await revokeRefreshTokenFamily(services.store.db, token.tenant_id, token.family_id);
  throw new InvalidGrant('Unknown or invalid refresh token.');
}

/**
 * Exchanges a refresh token: checks it is this client's, live and unexpired; re-checks the user and the scopes they
 * may still grant; rotates it (or, non-rotating, moves its idle expiry); issues the tokens.
 */
export async function exchangeRefreshToken(services: Services, exchange: RefreshExchange): Promise<IssuedUserTokens> {
  const { tenant, client } = exchange;
  const db = services.store.db;
  const now = Date.now();
  const invalid = () => new InvalidGrant('Unknown or invalid refresh token.');
  const token = await findRefreshTokenByHash(db, tenant.id, hashToken(exchange.refreshToken));
  if (!token || token.client_id !== client.client_id || token.revoked_at !== null) throw invalid();
  if (exchange.onUser) exchange.onUser(token.user_id);
  if ((token.expires_at !== null && token.expires_at <= now) || (token.idle_expires_at !== null && token.idle_expires_at <= now)) throw invalid();
  const policy = refreshPolicy(client);
  // Switching the client's rotation type leaves the tokens of the other kind unusable (C.3).
  if (token.rotating !== policy.rotating) throw invalid();
  // RFC 9449 §5: a bound refresh token is used with a proof of the same key, and nothing else.
  if (token.dpop_jkt !== null && token.dpop_jkt !== undefined && token.dpop_jkt !== exchange.confirmation.jkt) throw new InvalidGrant('The refresh token is bound to another DPoP key');

  // A rotated token past its reuse interval means a copy is in other hands: the family dies before anything else.
  // With no reuse interval (leeway 0) any second use is a reuse, however close to the first.
  const pastReuseInterval = (rotatedAt: number) => now - rotatedAt >= policy.leewayMs;
  if (policy.rotating && token.rotated_at !== null && pastReuseInterval(token.rotated_at)) return refuseReuse(services, token);

  // Checked before the token is spent, so a refusal here leaves a rotating token usable.
  const user = await findPrimaryUser(db, tenant.id, token.user_id);
  if (!user || user.blocked) throw invalid();
  let requested = token.scopes;
  if (exchange.requestedScope !== undefined && exchange.requestedScope.trim() !== '') {
    requested = parseScope(exchange.requestedScope);
    const extra = requested.filter((s) => !token.scopes.includes(s));
    if (extra.length > 0) throw new InvalidScope(`Scopes not granted by this refresh token: ${extra.join(' ')}`);
  }
  // Roles or the API may have changed since the grant: the user grants only what they still may.
  const { scopes } = await resolveUserScopes(services, { tenant, client, user, requestedScope: requested.join(' '), audience: token.audience });

  // Before the rotation, so a refusal leaves the refresh token usable with a proof.
  await requireProofForApi(services, tenant.id, token.audience, exchange.confirmation);
  let family: FamilyPlacement | undefined;
  if (policy.rotating) {
    if (token.rotated_at === null && !(await markRefreshTokenRotated(db, token.id, now))) {
      // Another exchange rotated (or revoked) it a moment ago: judge this one as a reuse of that rotation.
      const current = await findRefreshTokenByHash(db, tenant.id, token.token_hash);
      if (!current || current.revoked_at !== null || current.rotated_at === null) throw invalid();
      if (pastReuseInterval(current.rotated_at)) return refuseReuse(services, current);
    }
    family = { id: token.family_id, parentId: token.id, expiresAt: token.expires_at };
  } else {
    await touchRefreshToken(db, token.id, policy.idleMs === null ? null : now + policy.idleMs, now);
  }

  const authorization: UserAuthorization = {
    tenant,
    client,
    user,
    scopes,
    audience: token.audience,
    authTime: Math.floor(token.authenticated_at / 1000),
    ...(token.session_id !== null && { sessionId: token.session_id }),
    confirmation: exchange.confirmation,
  };
  // The new refresh token carries the whole original grant, not the narrowed scope.
  const outcome = await issueWithPlan(services, authorization, { accessToken: true, idToken: true, refreshToken: false }, planIssue());
  if (family) {
    const next = await createRefreshToken(services, { ...authorization, scopes: token.scopes }, family, now);
    // A concurrent reuse may have revoked the family just before this token joined it: it must not survive that.
    if (await isRefreshTokenFamilyRevoked(db, tenant.id, family.id)) {
      await revokeRefreshTokenFamily(db, tenant.id, family.id);
      throw invalid();
    }
    outcome.tokens.refresh_token = next;
  }
  return outcome.tokens;
}
