/**
 * GET and POST /userinfo (OIDC Core §5.3): the claims of the user an access token was issued for, as far as its
 * scopes allow (`sub` always; `profile` and `email` claims by scope). The token must be this tenant's, for the
 * `<issuer>userinfo` audience, unexpired and not revoked; its client must still exist, and its user must still
 * exist and not be blocked; a DPoP-bound token comes with the DPoP scheme and a proof of its key (RFC 9449 §7).
 * Otherwise 401 invalid_token with `WWW-Authenticate` (RFC 6750 §3), or a DPoP challenge (RFC 9449 §7.1).
 * One query per request: the user row and the revocation list are read together.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { bearerToken, boundKey, dpopToken, verifyAccessToken } from '../crypto/access-token.js';
import { errorResponses } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findAccessTokenSubject } from '../store/revoked-access-tokens.js';
import type { Tenant } from '../store/tenants.js';
import type { UserProfile } from '../store/users.js';
import { DpopResourceError, proofAtResource } from './dpop.js';
import { certificateMismatch } from './sender-constraint.js';
import { userClaims } from './user-tokens/claims.js';
import { InvalidToken } from './user-tokens/errors.js';
import { userinfoAudience } from './user-tokens/scopes.js';

const USERINFO_PATH = '/userinfo';

const UserinfoResponse = Type.Object({
  sub: Type.String(),
  name: Type.Optional(Type.String()),
  nickname: Type.Optional(Type.String()),
  given_name: Type.Optional(Type.String()),
  family_name: Type.Optional(Type.String()),
  picture: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
});

/**
 * Access tokens verified lately, by tenant and token: relying parties call /userinfo with the same token again
 * and again, and the RSA verification is most of this endpoint's cost. An entry lives no longer than the key
 * ring's cache (so a revoked key stops working here as soon as there) and never past the token's `exp`.
 * Everything that can change (revocation, the user, the client) is still checked on every request.
 */
const VERIFIED_TTL_MS = 30_000;
const MAX_VERIFIED = 5_000;
const verified = new Map<string, { payload: JWTPayload; until: number }>();

async function verifiedPayload(services: Services, tenant: Tenant, token: string): Promise<JWTPayload> {
  const key = `${tenant.id}\u0000${token}`;
  const now = Date.now();
  const hit = verified.get(key);
  if (hit && hit.until > now) return hit.payload;
  let payload: JWTPayload;
  try {
    // A token issued on the tenant's own host or on one of its custom domains: either is good here.
    payload = await verifyAccessToken(services.keyRing, tenant, token, tenant.issuers.map((issuer) => userinfoAudience({ issuer })));
  } catch {
    verified.delete(key);
    throw new InvalidToken();
  }
  if (verified.size >= MAX_VERIFIED) verified.clear();
  verified.set(key, { payload, until: Math.min(now + VERIFIED_TTL_MS, (payload.exp ?? 0) * 1000) });
  return payload;
}

/**
 * A DPoP-bound token (`cnf.jkt`) is taken only with the DPoP scheme and a proof of its key with `ath`; as a
 * Bearer token it is refused (RFC 9449 §7.2), and an unbound token under the DPoP scheme is refused too. A
 * certificate-bound token (`cnf["x5t#S256"]`) is taken only with the same client certificate (RFC 8705 §3).
 */
async function checkSenderConstraint(services: Services, request: FastifyRequest, token: string, payload: JWTPayload, scheme: 'Bearer' | 'DPoP'): Promise<void> {
  const mismatch = certificateMismatch(request, payload);
  if (mismatch) throw new InvalidToken(mismatch);
  const jkt = boundKey(payload);
  if (scheme === 'Bearer') {
    if (jkt !== undefined) throw new InvalidToken('The access token is DPoP-bound: send it with the DPoP scheme and a proof');
    return;
  }
  if (typeof jkt !== 'string') throw new DpopResourceError('invalid_token', 'The access token is not DPoP-bound: send it as a Bearer token');
  const proof = await proofAtResource(services, request, USERINFO_PATH, token);
  if (proof.jkt !== jkt) throw new DpopResourceError('invalid_dpop_proof', 'The DPoP proof is not signed by the key the access token is bound to');
}

async function userinfo(services: Services, request: FastifyRequest): Promise<Static<typeof UserinfoResponse>> {
  const bearer = bearerToken(request.headers.authorization);
  const token = bearer ?? dpopToken(request.headers.authorization);
  if (!token) throw new InvalidToken('A bearer access token is required');
  const tenant = request.tenant;
  const payload = await verifiedPayload(services, tenant, token);
  await checkSenderConstraint(services, request, token, payload, bearer ? 'Bearer' : 'DPoP');
  const { sub, jti, scope, azp } = payload;
  if (typeof sub !== 'string' || typeof jti !== 'string' || typeof azp !== 'string') throw new InvalidToken();
  // A deleted client's tokens die with it (the lookup is the in-memory config cache, not a query per request).
  if (!(await services.configCache.client(tenant.id, azp))) throw new InvalidToken();
  const subject = await findAccessTokenSubject(services.store.db, tenant.id, sub, jti);
  if (!subject || subject.revoked || subject.blocked === 1 || subject.linked_to !== null) throw new InvalidToken();
  const scopes = new Set(typeof scope === 'string' ? scope.split(' ') : []);
  const user = {
    ...subject,
    email_verified: subject.email_verified === 1,
    profile: JSON.parse(subject.profile) as UserProfile,
  };
  return { ...userClaims(user, scopes), sub };
}

export function registerUserinfo(app: App, services: Services): void {
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: USERINFO_PATH,
      schema: {
        tags: ['authentication'],
        summary: 'The claims of the user an access token was issued for',
        response: {
          200: UserinfoResponse,
          ...errorResponses('oauth', {
            401: {
              description:
                'invalid_token: no access token, or one that is malformed, expired, revoked, not for /userinfo, whose client or user is gone or blocked, or DPoP-bound but sent as Bearer; invalid_dpop_proof, use_dpop_nonce (DPoP scheme: a bad proof, or retry with the DPoP-Nonce given)',
              headers: {
                'WWW-Authenticate': { type: 'string', description: 'Bearer error="invalid_token", … or DPoP error="…", algs="…"', required: true },
                'DPoP-Nonce': { type: 'string', description: 'With a DPoP challenge: the nonce the next proof must carry', required: false },
              },
            },
          }),
        },
      },
      config: {
        rateLimit: { bucket: 'userinfo' },
        cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
      },
      handler: async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return userinfo(services, request);
      },
    });
  }
}
