/**
 * private_key_jwt (RFC 7523 §2.2, OIDC Core §9): a JWT signed with a key registered for the client.
 *  - `client_assertion_type` is the jwt-bearer URN; `alg` is RS256, RS384, PS256 or ES256 and matches a credential;
 *  - `iss` = `sub` = client id; `aud` names the issuer or this endpoint; `exp` is required and at most
 *    MAX_LIFETIME_S ahead (and after `iat`, when sent);
 *  - `jti` is single use: recorded in the database, so a replay fails on any node and after a restart;
 *  - a credential past its `expires_at` no longer counts.
 */
import { createPublicKey, X509Certificate } from 'node:crypto';
import { decodeProtectedHeader, importSPKI, importX509, jwtVerify, type CryptoKey } from 'jose';
import { recordClientAssertion } from '../../store/client-assertions.js';
import type { PrivateKeyJwtCredential } from '../../store/clients.js';
import { InvalidClient } from '../errors.js';
import { fapi2Profile } from '../fapi-profile.js';
import type { ClientAuthenticator } from './types.js';

export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** RS256, RS384, PS256 as the reference; ES256 (an EC P-256 credential) for FAPI 2.0 deployments. */
export const ASSERTION_ALGS = ['RS256', 'RS384', 'PS256', 'ES256'] as const;
const MAX_LIFETIME_S = 300;
const CLOCK_TOLERANCE_S = 30;

const keyCache = new Map<string, CryptoKey>();

/** The credential's public key for `alg` (also used for request objects); throws when the key does not fit it. */
export async function importCredential(credential: PrivateKeyJwtCredential, alg: string): Promise<CryptoKey> {
  const cacheKey = `${credential.id}:${alg}:${credential.pem.length}`;
  const cached = keyCache.get(cacheKey);
  if (cached) return cached;
  const pem = credential.pem.trim();
  let key: CryptoKey;
  if (pem.includes('BEGIN CERTIFICATE')) {
    new X509Certificate(pem); // throws on a malformed certificate
    key = await importX509(pem, alg);
  } else {
    // Normalise PKCS#1 ("BEGIN RSA PUBLIC KEY") and SPKI alike to SPKI.
    const spki = createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
    key = await importSPKI(spki, alg);
  }
  if (keyCache.size > 1000) keyCache.clear();
  keyCache.set(cacheKey, key);
  return key;
}

export const privateKeyJwt: ClientAuthenticator = async ({ client, presented, tenant, audiences, services }) => {
  const { assertion, assertionType } = presented;
  if (assertionType !== JWT_BEARER || !assertion) throw new InvalidClient();
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(assertion).alg;
  } catch {
    throw new InvalidClient();
  }
  const now = Date.now();
  const credentials = (client.client_authentication_methods?.private_key_jwt?.credentials ?? []).filter(
    (c) => (c.alg ?? 'RS256') === alg && (c.expires_at === undefined || Date.parse(c.expires_at) > now),
  );
  if (!alg || !(ASSERTION_ALGS as readonly string[]).includes(alg) || credentials.length === 0) throw new InvalidClient();

  for (const credential of credentials) {
    let payload;
    try {
      const key = await importCredential(credential, alg);
      ({ payload } = await jwtVerify(assertion, key, {
        algorithms: [alg],
        issuer: client.client_id,
        subject: client.client_id,
        audience: audiences,
        requiredClaims: ['exp', 'jti'],
        clockTolerance: CLOCK_TOLERANCE_S,
      }));
    } catch {
      continue; // another registered key may match
    }
    // FAPI 2.0 SP §5.3.2.1-8: the issuer "as a string", not an array holding it.
    if (fapi2Profile(client) && typeof payload.aud !== 'string') throw new InvalidClient();
    const nowSeconds = Math.floor(now / 1000);
    const exp = payload.exp!;
    if (exp - nowSeconds > MAX_LIFETIME_S + CLOCK_TOLERANCE_S) throw new InvalidClient();
    if (payload.iat !== undefined && exp - payload.iat > MAX_LIFETIME_S) throw new InvalidClient();
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new InvalidClient();
    const fresh = await recordClientAssertion(services.store.db, {
      tenant_id: tenant.id,
      client_id: client.client_id,
      jti: payload.jti,
      expires_at: (exp + CLOCK_TOLERANCE_S) * 1000,
    });
    if (!fresh) throw new InvalidClient();
    return;
  }
  throw new InvalidClient();
};
