/**
 * Verifies access tokens this tenant issued: RS256, signed by one of the tenant's published keys, `iss` = one of
 * the tenant's issuers (its own, its custom domains'), `aud` containing the expected audience, not expired. Used by the Management API and, later, by
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

/** A DPoP-bound token from `Authorization: DPoP <token>` (RFC 9449 §7.1), or undefined. */
export function dpopToken(header: string | undefined): string | undefined {
  const match = header ? /^DPoP +([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+)$/i.exec(header.trim()) : null;
  return match?.[1];
}

/** The DPoP key thumbprint an access token is bound to (`cnf.jkt`, RFC 9449 §6.1), if any. */
export function boundKey(payload: JWTPayload): unknown {
  return (payload.cnf as { jkt?: unknown } | undefined)?.jkt;
}

/** Resolves to the verified claims; rejects on any failure (callers answer 401 without detail). */
export async function verifyAccessToken(keyRing: KeyRing, tenant: Tenant, token: string, audience: string | string[]): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, localKeys(await keyRing.jwks(tenant.id)), {
    issuer: tenant.issuers,
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
    issuer: tenant.issuers,
    algorithms: ['RS256'],
    clockTolerance: 10 * 365 * 86_400,
    // Every ID token we issue has exp (OIDC Core §2); one without it is not ours, whatever signed it.
    requiredClaims: ['exp'],
  });
  return payload;
}

/**
 * An ID token this tenant issued to `clientId`, still valid: signature, issuer, `aud` = the client, unexpired.
 * No grace past `exp`: the token was issued and is checked on this server's own clock, and a caller whose ID
 * token has expired has a refresh token for that (POST /delegation takes either).
 */
export async function verifyIssuedIdToken(keyRing: KeyRing, tenant: Tenant, token: string, clientId: string): Promise<JWTPayload & { sub: string }> {
  const { payload } = await jwtVerify(token, localKeys(await keyRing.jwks(tenant.id)), {
    issuer: tenant.issuers,
    audience: clientId,
    algorithms: ['RS256'],
    requiredClaims: ['exp', 'sub'],
  });
  return payload as JWTPayload & { sub: string };
}
