/**
 * Issuing the tokens of a user authorization, for /authorize (front channel) and the user grants at /oauth/token:
 *  - access token: `aud` = [API, `<issuer>userinfo`] when `openid` was granted (just `<issuer>userinfo` without
 *    an API), `scope`, `azp`, `sub` = user id, a `jti`; lifetime from the API (default 86400 s);
 *  - ID token (only with `openid`): `aud` = client id, `azp`, `nonce`, `auth_time`, `sid`, `at_hash`/`c_hash`
 *    for what the same response carries, and the profile/email claims the scopes allow; lifetime from the
 *    client's `jwt_configuration.lifetime_in_seconds` (default 36000 s);
 *  - refresh token (only with `offline_access`).
 */
import { randomUUID } from 'node:crypto';
import { leftHalfHash, signIdToken } from '../../crypto/id-token.js';
import { signAccessToken } from '../../crypto/jwt.js';
import type { Services } from '../../services.js';
import { binding, requireProofForApi } from '../sender-constraint.js';
import type { TokenResponse } from '../token/types.js';
import { confirmationOf, type IssuedUserTokens, type UserAuthorization } from './authorization.js';
import { userClaims } from './claims.js';
import { acrOf } from '../../mfa/policy.js';
import { createRefreshToken, newFamilyId, type FamilyPlacement } from './refresh-tokens.js';
import { managementAudience } from '../../tenancy/bootstrap.js';
import { userinfoAudience, userPermissions } from './scopes.js';

const DEFAULT_ACCESS_TOKEN_SECONDS = 86_400;
const DEFAULT_ID_TOKEN_SECONDS = 36_000;

export interface IssueRequest {
  accessToken: boolean;
  idToken: boolean;
  refreshToken: boolean;
  /** The authorization code the same response carries (for `c_hash`). */
  code?: string;
  /** The access token's `gty` claim, for the grants the reference marks (`password`). */
  grantType?: string;
}

/** Ids chosen before issuing, so that a code can record what it issues before the tokens exist. */
export interface IssuePlan {
  accessTokenJti: string;
  /** Where a refresh token goes; a new family unless given. */
  family: FamilyPlacement;
}

export interface IssueOutcome {
  tokens: IssuedUserTokens;
  /** Epoch ms the access token expires at. */
  accessTokenExpiresAt: number;
  refreshTokenFamily: string | undefined;
}

export function planIssue(family?: FamilyPlacement): IssuePlan {
  return { accessTokenJti: randomUUID(), family: family ?? { id: newFamilyId() } };
}

/** How long the access token for this authorization lives, seconds. */
export async function accessTokenLifetime(services: Services, authorization: UserAuthorization): Promise<number> {
  if (authorization.audience === null) return DEFAULT_ACCESS_TOKEN_SECONDS;
  const api = await services.configCache.resourceServer(authorization.tenant.id, authorization.audience);
  return api?.token_lifetime ?? DEFAULT_ACCESS_TOKEN_SECONDS;
}

/**
 * The `permissions` claim of an RBAC API whose token dialect asks for it (`access_token_authz`,
 * `rfc9068_profile_authz`): every permission the user holds for the API, as Auth0 sends it. The Management API
 * (a system API, whose settings are not ours to change) carries the claim whenever the user holds any of its
 * permissions: that is how the admin console's users get their rights (#15); others' tokens stay as they were.
 */
async function permissionsClaim(services: Services, authorization: UserAuthorization): Promise<{ permissions?: string[] }> {
  if (authorization.audience === null) return {};
  if (authorization.audience === managementAudience(authorization.tenant)) {
    const held = await userPermissions(services, authorization.tenant, authorization.user, authorization.audience);
    return held.size > 0 ? { permissions: [...held].sort() } : {};
  }
  const api = await services.configCache.resourceServer(authorization.tenant.id, authorization.audience);
  const dialect = api?.token_dialect;
  if (api?.enforce_policies !== true || typeof dialect !== 'string' || !dialect.endsWith('_authz')) return {};
  const held = await userPermissions(services, authorization.tenant, authorization.user, authorization.audience);
  return { permissions: [...held].sort() };
}

export async function issueWithPlan(
  services: Services,
  authorization: UserAuthorization,
  want: IssueRequest,
  plan: IssuePlan,
): Promise<IssueOutcome> {
  const { tenant, client, user, scopes } = authorization;
  const confirmation = confirmationOf(authorization);
  if (want.accessToken) await requireProofForApi(services, tenant.id, authorization.audience, confirmation);
  const bound = binding(confirmation);
  const openid = scopes.includes('openid');
  const scope = scopes.join(' ');
  const lifetime = await accessTokenLifetime(services, authorization);
  const tokens: IssuedUserTokens = { token_type: bound.tokenType, expires_in: lifetime, scope };

  let accessToken: Promise<string> | undefined;
  if (want.accessToken) {
    const userinfo = userinfoAudience(tenant);
    const aud = authorization.audience === null ? userinfo : openid ? [authorization.audience, userinfo] : authorization.audience;
    const claims = {
      iss: tenant.issuer,
      sub: user.user_id,
      aud,
      azp: client.client_id,
      scope,
      jti: plan.accessTokenJti,
      ...(want.grantType !== undefined && { gty: want.grantType }),
      ...bound.claims,
      ...(await permissionsClaim(services, authorization)),
    };
    accessToken = signAccessToken(services.keyRing, tenant.id, claims, lifetime).then((t) => t.token);
  }
  // Both RSA signatures run on the thread pool at once; the ID token waits only for at_hash's input.
  let idToken: Promise<string> | undefined;
  if (want.idToken && openid) {
    idToken = (async () => {
      const claims = {
        iss: tenant.issuer,
        sub: user.user_id,
        aud: client.client_id,
        azp: client.client_id,
        ...userClaims(user, scopes),
        auth_time: authorization.authTime,
        ...(authorization.amr !== undefined && { amr: authorization.amr }),
        // `acr` follows from how the session authenticated: the multi-factor class once a second factor was given.
        ...(authorization.amr !== undefined && acrOf(authorization.amr) !== undefined && { acr: acrOf(authorization.amr) }),
        ...(authorization.nonce !== undefined && { nonce: authorization.nonce }),
        ...(authorization.sessionId !== undefined && { sid: authorization.sessionId }),
        ...(accessToken && { at_hash: leftHalfHash(await accessToken) }),
        ...(want.code !== undefined && { c_hash: leftHalfHash(want.code) }),
      };
      return signIdToken(services.keyRing, tenant.id, claims, client.jwt_configuration?.lifetime_in_seconds ?? DEFAULT_ID_TOKEN_SECONDS);
    })();
  }
  let refreshTokenFamily: string | undefined;
  let refreshToken: Promise<string> | undefined;
  if (want.refreshToken && scopes.includes('offline_access') && client.grant_types.includes('refresh_token')) {
    refreshTokenFamily = plan.family.id;
    refreshToken = createRefreshToken(services, authorization, plan.family);
  }
  const [access, id, refresh] = await Promise.all([accessToken, idToken, refreshToken]);
  if (access !== undefined) tokens.access_token = access;
  if (id !== undefined) tokens.id_token = id;
  if (refresh !== undefined) tokens.refresh_token = refresh;
  return { tokens, accessTokenExpiresAt: Date.now() + lifetime * 1000, refreshTokenFamily };
}

export async function issueUserTokens(
  services: Services,
  authorization: UserAuthorization,
  want: { accessToken: boolean; idToken: boolean; refreshToken: boolean; code?: string },
): Promise<IssuedUserTokens> {
  return (await issueWithPlan(services, authorization, want, planIssue())).tokens;
}

/** The token endpoint's answer: user grants always issue an access token, so its absence is a bug here. */
export function tokenResponse(tokens: IssuedUserTokens): TokenResponse {
  const { access_token, ...rest } = tokens;
  if (access_token === undefined) throw new Error('a token response needs an access token');
  return { access_token, ...rest };
}
