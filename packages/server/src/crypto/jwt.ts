/**
 * Signing the tokens Gatehouse issues: RS256 with the tenant's current key and its `kid`, header encoded once
 * per key. node:crypto's sign with a callback runs on libuv's thread pool, so the RSA work (the bulk of a token
 * request) uses every core while the event loop serves HTTP.
 */
import { randomUUID, sign, type KeyObject } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { KeyRing } from './key-ring.js';

export interface IssuedToken {
  token: string;
  /** Seconds. */
  expiresIn: number;
}

/** RS256 over `input`, on libuv's thread pool. */
export function rsaSha256(input: string, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => sign('sha256', Buffer.from(input), key, (err, signature) => (err ? reject(err) : resolve(signature))));
}

/**
 * An access token (`typ: at+jwt`, RFC 9068) for `claims`, valid `lifetimeSeconds` from now. Every access token
 * Gatehouse issues comes from here: the token endpoint, and the in-process admin tokens of tenant as code (signClientToken).
 */
export async function signAccessToken(
  keyRing: KeyRing,
  tenantId: string,
  claims: JWTPayload & { iss: string; aud: string | string[]; sub: string },
  lifetimeSeconds: number,
): Promise<IssuedToken> {
  const key = await keyRing.signingKey(tenantId);
  const now = Math.floor(Date.now() / 1000);
  const payload = Buffer.from(JSON.stringify({ jti: randomUUID(), ...claims, iat: now, exp: now + lifetimeSeconds })).toString('base64url');
  const input = key.accessTokenHeader + payload;
  const signature = await rsaSha256(input, key.privateKey);
  return { token: `${input}.${signature.toString('base64url')}`, expiresIn: lifetimeSeconds };
}

/** A token for a machine client of the tenant and `audience`, as client_credentials would issue it. */
export async function signClientToken(
  keyRing: KeyRing,
  tenant: { id: string; issuer: string },
  clientId: string,
  audience: string,
  scopes: readonly string[],
  lifetimeSeconds: number,
): Promise<string> {
  const claims = {
    iss: tenant.issuer,
    sub: `${clientId}@clients`,
    aud: audience,
    scope: scopes.join(' '),
    azp: clientId,
    gty: 'client-credentials',
  };
  return (await signAccessToken(keyRing, tenant.id, claims, lifetimeSeconds)).token;
}
