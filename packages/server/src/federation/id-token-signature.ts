/**
 * The ID token's signature against the upstream's published keys. openid-client checks every claim of an ID token
 * from the token endpoint but, as OIDC Core §3.1.3.7 allows over TLS, not its signature; the service checks it
 * too (issue #11), with jose: a key of the upstream's JWKS (fetched with a timeout, cached, re-fetched when a
 * token names a key not seen yet), asymmetric algorithms only.
 */
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { UpstreamError } from './upstream-error.js';
import { UPSTREAM_TIMEOUT_SECONDS } from './upstream-urls.js';

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const MAX_SETS = 500;
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySet(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
  let set = keySets.get(jwksUri);
  if (!set) {
    if (keySets.size >= MAX_SETS) keySets.delete(keySets.keys().next().value!);
    set = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: UPSTREAM_TIMEOUT_SECONDS * 1000 });
    keySets.set(jwksUri, set);
  }
  return set;
}

export async function verifyIdTokenSignature(idToken: string, jwksUri: string | undefined): Promise<void> {
  if (!jwksUri) throw new UpstreamError('access_denied', 'The identity provider publishes no keys (jwks_uri) to check its ID token with');
  try {
    // Claims were checked by openid-client; here only the signature (and a sane algorithm) matter.
    await jwtVerify(idToken, keySet(jwksUri), { algorithms: ALGORITHMS, clockTolerance: Number.MAX_SAFE_INTEGER });
  } catch (error) {
    if (error instanceof errors.JWKSTimeout) throw new UpstreamError('temporarily_unavailable', "The identity provider's keys could not be fetched in time");
    if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JOSEAlgNotAllowed) {
      throw new UpstreamError('access_denied', "The identity provider's ID token signature does not verify with its published keys");
    }
    throw new UpstreamError('access_denied', "The identity provider's ID token could not be verified with its published keys");
  }
}
