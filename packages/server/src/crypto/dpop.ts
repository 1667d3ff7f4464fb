/**
 * DPoP proofs (RFC 9449 §4.3): the proof is a JWT the client signs with the key it binds tokens to, carrying that
 * public key in its header. jose computes the key's thumbprint; the signature is checked with node:crypto on a
 * KeyObject made once per key (see Cost below).
 *  - `typ` dpop+jwt; `alg` RS256, PS256 or ES256 (never none or a MAC); `jwk` public (no private members);
 *  - `htm` and `htu` (scheme, host and path; query and fragment ignored) name this very request;
 *  - `iat` within PROOF_WINDOW_S of now; `jti` single use within that window, recorded where every process
 *    that could see a replay looks (protection/proof-ids.ts: Redis, the database, or one process's memory);
 *  - `nonce` (§8): always required, from `DPoP-Nonce`; nonces are the time window sealed with the master key,
 *    so any node checks any node's nonce with no shared state, and they go stale after two windows;
 *  - `ath` (§4.3) when the proof goes with an access token: base64url SHA-256 of that token.
 * The key's thumbprint (RFC 7638) is what tokens carry as `cnf.jkt`.
 *
 * Cost (bench/scenarios/dpop-client-credentials.js, goal: a DPoP-bound token at most 1.3× a bearer one): nearly
 * all a DPoP-bound token adds is the one synchronous node:crypto verify of the proof's signature. Measured at load
 * ~10 on 2 cores (#13): an ES256 verify alone 107–128 µs CPU, and about the same in the server (~6% of its samples
 * in a perf profile of the bench's DPoP run, ~105 of 1,692 µs per token); the rest of this check 8–10 µs (measured
 * with the verify stubbed out). The verify cannot go lower through node:crypto on Node 20 (OpenSSL 3.0): three
 * quarters of it is P-256 arithmetic, the rest per-call setup node:crypto cannot keep between calls; none of these
 * was cheaper: a DER signature, `null` for the digest, a key from SPKI or PEM rather than the JWK, WebCrypto (about
 * 1.5–2× the CPU), or the thread-pool form (about 25 µs more CPU per proof, no better rate on two busy cores).
 * What keeps the rest small: a client sends the same protected header (typ, alg, jwk) with every proof, so what
 * it gives once checked (key, thumbprint, alg, verify options) is kept per header as sent and a known header is
 * neither decoded nor checked again (all of it follows from those bytes alone); the parts are found by their dots,
 * the signing input is the proof's own first two parts, the payload is decoded once with Buffer's base64url; an
 * `htu` spelled as this server spells the URL needs no parsing, the nonce handed out is recognised by comparison
 * before any unsealing, and one process records the jti without a promise (protection/proof-ids.ts).
 */
import { constants, createHash, createPublicKey, verify, type JsonWebKey, type KeyObject, type VerifyKeyObjectInput } from 'node:crypto';
import { calculateJwkThumbprint, type JWK, type JWTPayload } from 'jose';
import type { ProofIds } from '../protection/proof-ids.js';
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
  proofIds: ProofIds;
}

const nonces = new Map<string, string>();
type DpopAlg = (typeof DPOP_ALGS)[number];
/** What a checked protected header gives: its alg, its public key and that key's RFC 7638 thumbprint. */
interface ProofHeader {
  alg: DpopAlg;
  key: KeyObject;
  jkt: string;
  /** node:crypto's verify options for this alg and key, made once. */
  verifyWith: VerifyKeyObjectInput;
}
/** Checked protected headers, by their base64url encoding exactly as sent (see Cost above). */
const proofHeaders = new Map<string, ProofHeader>();
/** What each alg needs of the key (RFC 7518 §3.1; RSA at least 2048 bits, §3.3). */
const KEY_FITS: Record<DpopAlg, (key: KeyObject) => boolean> = {
  RS256: (key) => key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048,
  PS256: (key) => key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048,
  ES256: (key) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1',
};
/** node:crypto's verify options per alg, for a key. */
const VERIFY_OPTIONS: Record<DpopAlg, (key: KeyObject) => VerifyKeyObjectInput> = {
  RS256: (key) => ({ key }),
  PS256: (key) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }),
  ES256: (key) => ({ key, dsaEncoding: 'ieee-p1363' }),
};
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_PROOF_HEADERS = 5000;

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
  // The nonce this node hands out now or handed out in the window before: no unsealing needed.
  if (nonce === currentNonce(sealer, tenantId, now) || nonce === currentNonce(sealer, tenantId, now - NONCE_WINDOW_MS)) return true;
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
  // The same string is the same scheme, host and path: what clients send, and no URL parsing.
  if (htu === expected) return true;
  try {
    const a = new URL(htu);
    const b = new URL(expected);
    return a.protocol === b.protocol && a.host === b.host && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

/** A base64url JSON object of the JWS (header or claims), or undefined when it is not one. */
function jsonObject(encoded: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The protected header's checks (§4.3 checks 2-6), for a header not seen before (verifyDpopProof keeps it). */
async function checkProofHeader(encoded: string): Promise<ProofHeader> {
  const header = BASE64URL.test(encoded) ? jsonObject(encoded) : undefined;
  if (!header) throw new DpopProofError('invalid', 'The DPoP proof is not a JWT');
  const { jwk, alg, typ } = header;
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk) || PRIVATE_MEMBERS.some((m) => m in jwk)) throw new DpopProofError('invalid', 'The DPoP proof must carry a public jwk');
  if (!(DPOP_ALGS as readonly unknown[]).includes(alg)) throw new DpopProofError('invalid', `The DPoP proof is invalid: its alg must be one of ${DPOP_ALGS.join(', ')}`);
  if (typ !== 'dpop+jwt') throw new DpopProofError('invalid', 'The DPoP proof is invalid: its typ must be dpop+jwt');
  // No extensions are understood here (RFC 7515 §4.1.11), nor unencoded payloads (RFC 7797).
  if ('crit' in header || 'b64' in header) throw new DpopProofError('invalid', 'The DPoP proof is invalid: crit and b64 header parameters are not supported');
  let key: KeyObject;
  let jkt: string;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256');
  } catch (error) {
    throw new DpopProofError('invalid', `The DPoP proof is invalid: its jwk: ${(error as Error).message.slice(0, 120)}`);
  }
  if (key.type !== 'public') throw new DpopProofError('invalid', 'The DPoP proof must carry a public jwk');
  if (!KEY_FITS[alg as DpopAlg](key)) throw new DpopProofError('invalid', `The DPoP proof is invalid: its jwk is not a key for ${alg as string}`);
  const checked = { alg: alg as DpopAlg, key, jkt, verifyWith: VERIFY_OPTIONS[alg as DpopAlg](key) };
  if (proofHeaders.size >= MAX_PROOF_HEADERS) proofHeaders.clear();
  proofHeaders.set(encoded, checked);
  return checked;
}

/**
 * The compact JWS's signature over its first two parts, by `alg` with `key` (RFC 7515 §5.2). `payloadEnd`: the
 * index of the dot before the signature; the signing input is the proof up to it, read as it came.
 */
function signatureHolds({ verifyWith }: ProofHeader, proof: string, payloadEnd: number): boolean {
  const signature = proof.slice(payloadEnd + 1);
  if (!BASE64URL.test(signature)) return false;
  try {
    return verify('sha256', Buffer.from(proof.slice(0, payloadEnd), 'latin1'), verifyWith, Buffer.from(signature, 'base64url'));
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
  // Three parts: header.payload.signature, found by their dots (no array of parts, no signing input rebuilt).
  const headerEnd = header.indexOf('.');
  const payloadEnd = headerEnd < 0 ? -1 : header.indexOf('.', headerEnd + 1);
  if (payloadEnd < 0 || header.includes('.', payloadEnd + 1)) throw new DpopProofError('invalid', 'The DPoP proof is not a JWT');
  const encodedHeader = header.slice(0, headerEnd);
  const encodedPayload = header.slice(headerEnd + 1, payloadEnd);
  // A header seen before is taken as it was checked, without a turn of the event loop.
  const checked = proofHeaders.get(encodedHeader) ?? (await checkProofHeader(encodedHeader));
  if (!BASE64URL.test(encodedPayload) || !signatureHolds(checked, header, payloadEnd)) throw new DpopProofError('invalid', 'The DPoP proof is invalid: signature verification failed');
  const payload = jsonObject(encodedPayload) as JWTPayload | undefined;
  if (!payload) throw new DpopProofError('invalid', 'The DPoP proof is invalid: its claims are not a JSON object');
  for (const claim of ['jti', 'htm', 'htu', 'iat'] as const) {
    if (payload[claim] === undefined) throw new DpopProofError('invalid', `The DPoP proof is invalid: missing required "${claim}" claim`);
  }
  if (typeof payload.iat !== 'number' || !Number.isFinite(payload.iat)) throw new DpopProofError('invalid', 'The DPoP proof iat must be a number');
  // Not asked for by RFC 9449, but when present they hold, as for any JWT (RFC 7519 §4.1.4-5).
  const nowSeconds = Math.floor(now / 1000);
  if (payload.exp !== undefined && (typeof payload.exp !== 'number' || payload.exp <= nowSeconds)) throw new DpopProofError('invalid', 'The DPoP proof is invalid: it has expired (exp)');
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > nowSeconds)) throw new DpopProofError('invalid', 'The DPoP proof is invalid: it is not valid yet (nbf)');
  if (Math.abs(nowSeconds - payload.iat) > PROOF_WINDOW_S) throw new DpopProofError('invalid', `The DPoP proof iat must be within ${PROOF_WINDOW_S} seconds of now`);
  if (payload.htm !== request.method) throw new DpopProofError('invalid', 'The DPoP proof htm does not match the request method');
  if (!sameTarget(payload.htu, request.url)) throw new DpopProofError('invalid', 'The DPoP proof htu does not match the request URL');
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new DpopProofError('invalid', 'The DPoP proof jti is invalid');
  if (request.accessToken !== undefined && payload.ath !== accessTokenHash(request.accessToken)) {
    throw new DpopProofError('invalid', 'The DPoP proof ath does not match the access token');
  }
  if (!nonceIsFresh(deps.sealer, tenantId, payload.nonce, now)) throw new DpopProofError('nonce', 'Use the DPoP nonce the server provided (DPoP-Nonce)');
  // Recorded last: a proof refused for any other reason uses nothing up.
  const { jkt } = checked;
  const firstUse = deps.proofIds.useOnce(`dpop:${tenantId}:${jkt}:${payload.jti}`, 2 * PROOF_WINDOW_S * 1000);
  if (!(typeof firstUse === 'boolean' ? firstUse : await firstUse)) throw new DpopProofError('invalid', 'The DPoP proof was used before (jti replay)');
  return { jkt };
}
