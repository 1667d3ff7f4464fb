/**
 * DPoP proofs (RFC 9449 §4.3), verified with jose (EmbeddedJWK): the proof is a JWT the client signs with the key
 * it binds tokens to, carrying that public key in its header.
 *  - `typ` dpop+jwt; `alg` RS256, PS256 or ES256 (never none or a MAC); `jwk` public (no private members);
 *  - `htm` and `htu` (scheme, host and path; query and fragment ignored) name this very request;
 *  - `iat` within PROOF_WINDOW_S of now; `jti` single use within that window, recorded in the attack-counter
 *    store, so a replay fails on any node when the nodes share Redis;
 *  - `nonce` (§8): always required, from `DPoP-Nonce`; nonces are the time window sealed with the master key,
 *    so any node checks any node's nonce with no shared state, and they go stale after two windows;
 *  - `ath` (§4.3) when the proof goes with an access token: base64url SHA-256 of that token.
 * The key's thumbprint (RFC 7638) is what tokens carry as `cnf.jkt`.
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import type { AttackCounterStore } from '../protection/counter-store.js';
import type { Sealer } from './sealing.js';

export const DPOP_ALGS = ['RS256', 'PS256', 'ES256'] as const;
export const PROOF_WINDOW_S = 60;
const NONCE_WINDOW_MS = 60_000;
const MAX_PROOF_LENGTH = 8192;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** Why a proof was refused: a bad proof, or only a missing or stale nonce (the client retries with a fresh one). */
export class DpopProofError extends Error {
  override name = 'DpopProofError';
  constructor(
    readonly reason: 'invalid' | 'nonce',
    message: string,
  ) {
    super(message);
  }
}

export interface ProofRequest {
  /** The request's DPoP header(s), as Node gives them. */
  header: string | string[] | undefined;
  method: string;
  /** The absolute URL of the endpoint, as the client addressed it. */
  url: string;
  /** The access token the proof goes with (resource requests): `ath` is then required. */
  accessToken?: string;
}

export interface VerifiedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key, base64url. */
  jkt: string;
}

export interface DpopDependencies {
  sealer: Sealer;
  counters: AttackCounterStore;
}

const nonces = new Map<string, string>();

/** The nonce to hand out now (`DPoP-Nonce`): the same for a whole window, per tenant. */
export function currentNonce(sealer: Sealer, tenantId: string, now = Date.now()): string {
  const window = Math.floor(now / NONCE_WINDOW_MS);
  const key = `${tenantId}\u0000${window}`;
  let nonce = nonces.get(key);
  if (!nonce) {
    if (nonces.size > 1000) nonces.clear();
    nonce = sealer.seal(String(window), `dpop_nonce:${tenantId}`);
    nonces.set(key, nonce);
  }
  return nonce;
}

function nonceIsFresh(sealer: Sealer, tenantId: string, nonce: unknown, now: number): boolean {
  if (typeof nonce !== 'string' || nonce.length > 200) return false;
  let window: number;
  try {
    window = Number(sealer.unseal(nonce, `dpop_nonce:${tenantId}`));
  } catch {
    return false;
  }
  const current = Math.floor(now / NONCE_WINDOW_MS);
  return window === current || window === current - 1;
}

/** htu compares without query and fragment (§4.3 check 9). */
function sameTarget(htu: unknown, expected: string): boolean {
  if (typeof htu !== 'string') return false;
  try {
    const a = new URL(htu);
    const b = new URL(expected);
    return a.protocol === b.protocol && a.host === b.host && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/** Verifies the request's proof; rejects with DpopProofError. Call only when a DPoP header was sent. */
export async function verifyDpopProof(deps: DpopDependencies, tenantId: string, request: ProofRequest, now = Date.now()): Promise<VerifiedProof> {
  const header = request.header;
  if (Array.isArray(header)) throw new DpopProofError('invalid', 'Send exactly one DPoP header');
  if (typeof header !== 'string' || header.length === 0 || header.length > MAX_PROOF_LENGTH) throw new DpopProofError('invalid', 'The DPoP proof is missing or too long');
  let jwk: JWK | undefined;
  try {
    jwk = decodeProtectedHeader(header).jwk;
  } catch {
    throw new DpopProofError('invalid', 'The DPoP proof is not a JWT');
  }
  if (!jwk || PRIVATE_MEMBERS.some((m) => m in jwk)) throw new DpopProofError('invalid', 'The DPoP proof must carry a public jwk');
  let payload;
  try {
    ({ payload } = await jwtVerify(header, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGS], requiredClaims: ['jti', 'htm', 'htu', 'iat'], currentDate: new Date(now) }));
  } catch (error) {
    throw new DpopProofError('invalid', `The DPoP proof is invalid: ${(error as Error).message.slice(0, 120)}`);
  }
  const nowS = Math.floor(now / 1000);
  if (Math.abs(nowS - payload.iat!) > PROOF_WINDOW_S) throw new DpopProofError('invalid', `The DPoP proof iat must be within ${PROOF_WINDOW_S} seconds of now`);
  if (payload.htm !== request.method) throw new DpopProofError('invalid', 'The DPoP proof htm does not match the request method');
  if (!sameTarget(payload.htu, request.url)) throw new DpopProofError('invalid', 'The DPoP proof htu does not match the request URL');
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new DpopProofError('invalid', 'The DPoP proof jti is invalid');
  if (request.accessToken !== undefined && payload.ath !== accessTokenHash(request.accessToken)) {
    throw new DpopProofError('invalid', 'The DPoP proof ath does not match the access token');
  }
  if (!nonceIsFresh(deps.sealer, tenantId, payload.nonce, now)) throw new DpopProofError('nonce', 'Use the DPoP nonce the server provided (DPoP-Nonce)');
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  // Recorded last: a proof refused for any other reason uses nothing up.
  const fresh = await deps.counters.reserve(`dpop:${tenantId}:${jkt}:${payload.jti}`, 1, 2 * PROOF_WINDOW_S * 1000);
  if (!fresh.allowed) throw new DpopProofError('invalid', 'The DPoP proof was used before (jti replay)');
  return { jkt };
}
