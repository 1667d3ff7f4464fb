/**
 * Verifies access tokens this tenant issued: RS256, signed by one of the tenant's published keys, `iss` = the
 * tenant issuer, `aud` containing the expected audience, not expired. Used by the Management API and, later, by
 * user endpoints such as /userinfo; callers add their own checks on the verified claims.
 */
import { createLocalJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Tenant } from '../store/tenants.js';
import type { JsonWebKeySet, KeyRing } from './key-ring.js';

const keySets = new WeakMap<JsonWebKeySet, JWTVerifyGetKey>();

/** The key ring returns the same JWKS object while it is cached, so the imported keys are reused with it. */
function localKeys(jwks: JsonWebKeySet): JWTVerifyGetKey {
  let getKey = keySets.get(jwks);
  if (!getKey) {
    getKey = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
    keySets.set(jwks, getKey);
  }
  return getKey;
}

/** A bearer token from an Authorization header, or undefined if the header is absent or not a Bearer JWT. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer +([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+)$/i.exec(header.trim()) : null;
  return match?.[1];
}

/** Resolves to the verified claims; rejects on any failure (callers answer 401 without detail). */
export async function verifyAccessToken(keyRing: KeyRing, tenant: Tenant, token: string, audience: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, localKeys(await keyRing.jwks(tenant.id)), {
    issuer: tenant.issuer,
    audience,
    algorithms: ['RS256'],
    // A token without exp would be good forever (RFC 9068 §2.2 requires it on every access token).
    requiredClaims: ['exp'],
  });
  return payload;
}

/**
 * An ID token this tenant issued, used as a hint (OIDC RP-Initiated Logout §2): signature and issuer must hold,
 * but an expired one is still a good hint of who is logging out and from which client.
 */
export async function verifyIdTokenHint(keyRing: KeyRing, tenant: Tenant, token: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, localKeys(await keyRing.jwks(tenant.id)), {
    issuer: tenant.issuer,
    algorithms: ['RS256'],
    clockTolerance: 10 * 365 * 86_400,
    // Every ID token we issue has exp (OIDC Core §2); one without it is not ours, whatever signed it.
    requiredClaims: ['exp'],
  });
  return payload;
}
