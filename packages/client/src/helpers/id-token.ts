/**
 * ID-token validation in the order auth0-js v10 applies it (reference §3), with WebCrypto:
 * decode → `alg` must be RS256 (an HS256 token fails here, before any request) → the key from the JWKS by
 * `kid` → RSASSA-PKCS1-v1_5/SHA-256 signature → `iss` → `sub` → `aud` → `nonce` → `azp` → `exp`/`iat` →
 * `nbf` → `auth_time` with `max_age`; `at_hash` when an access token came with it. Every failure is
 * `{error: 'invalid_token', errorDescription}`. JWKS documents are cached per URL, so a second validation
 * needs no request at all.
 */
import { hashError, type SvcError } from './errors.js';

export interface IdTokenPayload {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  azp?: string;
  exp?: number;
  iat?: number;
  nbf?: number;
  nonce?: string;
  auth_time?: number;
  at_hash?: string;
  [claim: string]: unknown;
}

export interface ValidationOptions {
  issuer: string;
  audience: string;
  jwksUri: string;
  nonce?: string;
  /** Seconds of clock skew allowed; auth0-js treats 0 as 60. */
  leeway: number;
  maxAge?: number;
  accessToken?: string;
  /** For tests: the current time. */
  now?: () => Date;
}

interface Jwk {
  kid?: string;
  kty?: string;
  n?: string;
  e?: string;
}

const jwksCache = new Map<string, Promise<Jwk[]>>();
const keyCache = new Map<string, Promise<CryptoKey>>();

function base64UrlDecode(value: string): Uint8Array<ArrayBuffer> {
  const base64 = value.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(value.length / 4) * 4, '=');
  const binary = atob(base64);
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeToken(token: string): { header: Record<string, unknown>; payload: IdTokenPayload; signed: string; signature: string } | undefined {
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (parts.length !== 3) return undefined;
  try {
    const text = (part: string) => new TextDecoder().decode(base64UrlDecode(part));
    const header = JSON.parse(text(parts[0]!)) as Record<string, unknown>;
    const payload = JSON.parse(text(parts[1]!)) as IdTokenPayload;
    if (!header || typeof header !== 'object' || !payload || typeof payload !== 'object') return undefined;
    return { header, payload, signed: `${parts[0]}.${parts[1]}`, signature: parts[2]! };
  } catch {
    return undefined;
  }
}

function fetchJwks(uri: string): Promise<Jwk[]> {
  let pending = jwksCache.get(uri);
  if (!pending) {
    pending = fetch(uri).then(async (response) => {
      if (!response.ok) throw new Error(response.statusText || `HTTP ${response.status}`);
      const body = (await response.json()) as { keys?: Jwk[] };
      return Array.isArray(body.keys) ? body.keys : [];
    });
    // A failed fetch is not cached: the next validation tries again.
    pending.catch(() => jwksCache.delete(uri));
    jwksCache.set(uri, pending);
  }
  return pending;
}

async function publicKey(uri: string, kid: string | undefined): Promise<CryptoKey> {
  const cacheKey = `${uri}#${kid ?? ''}`;
  let key = keyCache.get(cacheKey);
  if (!key) {
    let keys = await fetchJwks(uri);
    let jwk = keys.find((k) => k.kid === kid);
    if (!jwk) {
      // A key rotated in since the document was cached: fetch it once more.
      jwksCache.delete(uri);
      keys = await fetchJwks(uri);
      jwk = keys.find((k) => k.kid === kid);
    }
    if (!jwk?.n || !jwk.e) throw new Error(`Could not find a public key for Key ID (kid) "${kid ?? ''}"`);
    key = crypto.subtle.importKey('jwk', { kty: 'RSA', n: jwk.n, e: jwk.e, alg: 'RS256', ext: true }, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
    keyCache.set(cacheKey, key);
  }
  return key;
}

/** base64url of the left half of SHA-256(value): `at_hash` (OIDC Core §3.2.2.9). */
export async function leftHalfHash(value: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value)));
  return base64UrlEncode(digest.slice(0, 16));
}

const invalid = (description: string): SvcError => hashError('invalid_token', description);

export async function validateIdToken(token: string, options: ValidationOptions): Promise<IdTokenPayload> {
  const leeway = options.leeway || 60;
  if (leeway < 0 || leeway > 300) throw invalid('The leeway should be positive and lower than five minutes.');
  const decoded = decodeToken(token);
  if (!decoded) throw invalid('ID token could not be decoded');
  const { header, payload } = decoded;
  if (header.alg !== 'RS256') throw invalid(`Signature algorithm of "${String(header.alg)}" is not supported. Expected the ID token to be signed with "RS256".`);

  let key: CryptoKey;
  try {
    key = await publicKey(options.jwksUri, typeof header.kid === 'string' ? header.kid : undefined);
  } catch (cause) {
    throw invalid(cause instanceof Error ? cause.message : String(cause));
  }
  const valid = await crypto.subtle.verify('RSASSA-PKCS1-v1_5', key, base64UrlDecode(decoded.signature), new TextEncoder().encode(decoded.signed));
  if (!valid) throw invalid('Invalid ID token signature.');

  if (typeof payload.iss !== 'string' || payload.iss !== options.issuer) {
    throw invalid(`Issuer (iss) claim mismatch in the ID token; expected "${options.issuer}", found "${String(payload.iss)}"`);
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw invalid('Subject (sub) claim must be a string present in the ID token');
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(options.audience)) {
    throw invalid(`Audience (aud) claim mismatch in the ID token; expected "${options.audience}" but was not one of "${audiences.join(', ')}"`);
  }
  if (options.nonce !== undefined) {
    if (typeof payload.nonce !== 'string') throw invalid('Nonce (nonce) claim must be a string present in the ID token');
    if (payload.nonce !== options.nonce) throw invalid(`Nonce (nonce) claim value mismatch in the ID token; expected "${options.nonce}", found "${payload.nonce}"`);
  }
  if (audiences.length > 1 && payload.azp !== options.audience) {
    throw invalid(`Authorized Party (azp) claim mismatch in the ID token; expected "${options.audience}", found "${String(payload.azp)}"`);
  }
  if (typeof payload.exp !== 'number' || !payload.exp) throw invalid('Expiration Time (exp) claim must be a number present in the ID token');
  if (typeof payload.iat !== 'number' || !payload.iat) throw invalid('Issued At (iat) claim must be a number present in the ID token');
  const now = (options.now ? options.now() : new Date()).getTime() / 1000;
  if (now > payload.exp + leeway) {
    throw invalid(`Expiration Time (exp) claim error in the ID token; current time (${new Date(now * 1000)}) is after expiration time (${new Date((payload.exp + leeway) * 1000)})`);
  }
  // auth0-js does not compare iat with the clock; tokens "issued in the future" beyond the leeway are refused
  // here, as the contract's client library errors describe ("issued in the future"; leeway prevents it).
  if (payload.iat - leeway > now) {
    throw invalid(`Issued At (iat) claim error in the ID token; current time (${new Date(now * 1000)}) is before issued at time (${new Date((payload.iat - leeway) * 1000)}): the token was issued in the future`);
  }
  if (typeof payload.nbf === 'number' && now < payload.nbf - leeway) {
    throw invalid(`Not Before time (nbf) claim error in the ID token; current time (${new Date(now * 1000)}) is before the not before time (${new Date((payload.nbf - leeway) * 1000)})`);
  }
  if (options.maxAge !== undefined) {
    if (typeof payload.auth_time !== 'number') throw invalid('Authentication Time (auth_time) claim must be a number present in the ID token when Max Age (max_age) is specified');
    if (now > payload.auth_time + options.maxAge + leeway) throw invalid('Authentication Time (auth_time) claim in the ID token indicates that too much time has passed since the last end-user authentication.');
  }
  if (options.accessToken !== undefined && typeof payload.at_hash === 'string' && payload.at_hash !== (await leftHalfHash(options.accessToken))) {
    throw invalid('Invalid access_token');
  }
  return payload;
}
