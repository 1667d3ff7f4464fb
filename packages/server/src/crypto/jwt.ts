/**
 * Signing the tokens Gatehouse issues: RS256 with the tenant's current key and its `kid`. jose signs through
 * WebCrypto, which runs on libuv's thread pool, so signing does not hold the event loop.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import type { KeyRing } from './key-ring.js';

export interface IssuedToken {
  token: string;
  /** Seconds. */
  expiresIn: number;
}

export async function signJwt(
  keyRing: KeyRing,
  tenantId: string,
  claims: JWTPayload & { iss: string; aud: string | string[]; sub: string },
  lifetimeSeconds: number,
  typ = 'JWT',
): Promise<IssuedToken> {
  const key = await keyRing.signingKey(tenantId);
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ jti: randomUUID(), ...claims, iat: now, exp: now + lifetimeSeconds })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ })
    .sign(key.privateKey);
  return { token, expiresIn: lifetimeSeconds };
}
