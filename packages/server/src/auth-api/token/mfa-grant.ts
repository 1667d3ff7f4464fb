/**
 * What the three MFA API grants (mfa-otp.ts, mfa-oob.ts, mfa-recovery-code.ts) share: the client authenticates
 * as for the password grants and must enable the grant; the mfa_token must be its own and live; an answer is
 * checked within the user's streak of wrong answers (mfa/lockout.ts: the 10th wrong one locks, after which
 * every answer is refused unchecked with 429 too_many_attempts until an administrator unblocks the user); and a
 * right one uses the mfa_token up and issues what the password grant would have, with `amr` saying how.
 *
 * Database round trips of a right answer, beside client authentication: the factor check itself (the
 * enrollments read and its conditional write), then one statement that uses the mfa_token up and reads the user
 * the tokens are for (store/mfa-challenges.ts; the password grant reads the user too), on either dialect. The streak counter lives in the attack
 * counter store (memory or Redis), not the database.
 */
import type { CheckedAnswer } from '../../mfa/lockout.js';
import type { Client } from '../../store/clients.js';
import { useUpMfaChallengeReadingUser } from '../../store/mfa-challenges.js';
import { ProtocolError } from '../../http/errors.js';
import { authenticateClient } from '../client-auth/index.js';
import { senderConstraint, type Confirmation } from '../sender-constraint.js';
import { UnauthorizedClient } from '../errors.js';
import { readClientMfaToken, usedToken, type MfaTokenClaims } from '../mfa/mfa-token.js';
import type { UserAuthorization } from '../user-tokens/authorization.js';
import { InvalidGrant, UserBlocked } from '../user-tokens/errors.js';
import { issueWithPlan, planIssue, tokenResponse } from '../user-tokens/issue.js';
import { resolveUserScopes } from '../user-tokens/scopes.js';
import { optionalString, requiredString } from './params.js';
import type { GrantContext, TokenResponse } from './types.js';
import { recordSecondFactorAnswer, type SecondFactorKind } from '../../logs/second-factor.js';

export interface MfaGrantStart {
  client: Client;
  claims: MfaTokenClaims;
  /** What this request binds the tokens to: its own proof and certificate, whatever the password step sent. */
  confirmation: Confirmation;
}

/** The factor lock: the same answer whatever is sent, so a locked account gives nothing away. */
export class MfaLocked extends ProtocolError {
  constructor() {
    super(429, 'too_many_attempts', 'Too many failed codes: the second factor is locked. An administrator can unblock the user.');
  }
}

export async function startMfaGrant({ request, params, services, endpointUrl, proof }: GrantContext, grantType: string): Promise<MfaGrantStart> {
  const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl });
  if (!client.grant_types.includes(grantType)) throw new UnauthorizedClient(`Grant type '${grantType}' not allowed for the client.`);
  // Before the factor is checked, so a refusal here neither spends a code nor counts toward the lock.
  const confirmation = senderConstraint(request, client, proof);
  return { client, claims: readClientMfaToken(services, request.tenant, client, requiredString(params, 'mfa_token')), confirmation };
}

/**
 * Logs the answer (its `gd_*` event; `enrolled`: a right one completed an enrollment) and throws the grant's
 * answer unless it was right.
 */
export function requireRight(
  { request, services }: GrantContext,
  { client, claims }: MfaGrantStart,
  factor: SecondFactorKind,
  checked: CheckedAnswer,
  wrong: string,
  enrolled = false,
): void {
  recordSecondFactorAnswer(services, request, { userId: claims.userId, client: { client_id: client.client_id, name: client.name } }, factor, checked, enrolled);
  if (checked.outcome === 'locked') throw new MfaLocked();
  if (checked.outcome === 'wrong') throw new InvalidGrant(wrong, 403);
}

/** Uses the mfa_token up (of two right answers with it, one gets through) and issues the tokens. */
export async function finishMfaGrant(
  { request, params, services }: GrantContext,
  { client, claims, confirmation }: MfaGrantStart,
  factorAmr: string[],
  /** What to do once the token is used up, and add to the response (the recovery-code grant's next code). */
  afterUse?: () => Promise<{ recovery_code?: string }>,
): Promise<TokenResponse> {
  const tenant = request.tenant;
  const { used, user } = await useUpMfaChallengeReadingUser(services.store.db, services.store.dialect, tenant.id, claims.id, claims.userId);
  if (!used || !user) throw usedToken('grant');
  if (user.blocked) throw new UserBlocked();
  // The audience asked for at the password step, unless this request names one (the reference's mfa grants take it).
  const audience = optionalString(params, 'audience') || claims.audience || tenant.settings.default_audience || null;
  const { scopes, audience: granted } = await resolveUserScopes(services, { tenant, client, user, requestedScope: claims.scope, audience });
  const authorization: UserAuthorization = {
    tenant,
    client,
    user,
    scopes,
    audience: granted,
    authTime: Math.floor(Date.now() / 1000),
    amr: [...new Set([...claims.amr, ...factorAmr, 'mfa'])],
    confirmation,
  };
  const [issued, extra] = await Promise.all([issueWithPlan(services, authorization, { accessToken: true, idToken: true, refreshToken: true }, planIssue()), afterUse?.()]);
  return { ...tokenResponse(issued.tokens), ...extra };
}
