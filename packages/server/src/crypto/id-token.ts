/**
 * Signing OpenID Connect ID tokens: RS256 with the tenant's current key, like access tokens (crypto/jwt.ts),
 * but with `typ: JWT`, since relying parties (auth0-js, openid-client) expect a plain JWT here, not `at+jwt`.
 */
import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { rsaSha256 } from './jwt.js';
import type { KeyRing, SigningKey } from './key-ring.js';

/** The ID-token header, encoded once per key object (the key ring keeps the object while it is cached). */
const headers = new WeakMap<SigningKey, string>();

function idTokenHeader(key: SigningKey): string {
  let header = headers.get(key);
  if (header === undefined) {
    header = `${Buffer.from(JSON.stringify({ alg: key.alg, kid: key.kid, typ: 'JWT' })).toString('base64url')}.`;
    headers.set(key, header);
  }
  return header;
}

/**
 * `at_hash` / `c_hash` (OIDC Core §3.3.2.11): base64url of the left half of the SHA-256 of the value, as
 * RS256 calls for.
 */
export function leftHalfHash(value: string): string {
  const digest = createHash('sha256').update(value, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export interface IdTokenClaims extends JWTPayload {
  iss: string;
  sub: string;
  aud: string;
}

/** An ID token for `claims`, valid `lifetimeSeconds` from now (`iat`, `exp` are set here). */
export async function signIdToken(keyRing: KeyRing, tenantId: string, claims: IdTokenClaims, lifetimeSeconds: number): Promise<string> {
  const key = await keyRing.signingKey(tenantId);
  const now = Math.floor(Date.now() / 1000);
  const payload = Buffer.from(JSON.stringify({ ...claims, iat: now, exp: now + lifetimeSeconds })).toString('base64url');
  const input = idTokenHeader(key) + payload;
  const signature = await rsaSha256(input, key.privateKey);
  return `${input}.${signature.toString('base64url')}`;
}
