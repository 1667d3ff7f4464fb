/**
 * DPoP (RFC 9449) as a client does it, for tests: proofs built with jose (each argument bends one for a
 * refusal), the server's current nonce, the key's thumbprint and the `ath` of an access token.
 */
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, SignJWT, type GenerateKeyPairResult, type JWK } from 'jose';
import type { TestServer } from './server.js';

/** A DPoP proof as RFC 9449 §4.2 builds it, ES256 unless `header.alg` says otherwise. */
export async function dpopProof(
  keys: GenerateKeyPairResult,
  htm: string,
  htu: string,
  claims: Record<string, unknown> = {},
  header: { alg?: string; jwk?: JWK; typ?: string } = {},
): Promise<string> {
  return new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keys.publicKey), ...header })
    .sign(keys.privateKey);
}

/** The nonce the server hands out now: any request with a DPoP header gets one in `DPoP-Nonce` (§8). */
export async function dpopNonce(server: TestServer): Promise<string> {
  const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: 'x' }, body: 'grant_type=client_credentials' });
  const nonce = res.headers.get('dpop-nonce');
  if (!nonce) throw new Error(`no DPoP-Nonce in the answer (${res.status})`);
  return nonce;
}

/** The RFC 7638 thumbprint a bound token carries as `cnf.jkt`. */
export async function jwkThumbprint(keys: GenerateKeyPairResult): Promise<string> {
  return calculateJwkThumbprint(await exportJWK(keys.publicKey), 'sha256');
}

/** The `ath` claim of a proof that goes with `accessToken` (§4.2). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url');
}
