/**
 * Management API authentication and authorization, for every /api/v2 operation, before the body is read:
 *  1. a bearer JWT signed by this tenant's keys, `iss` = the tenant issuer, `aud` = `<issuer>api/v2/`, not expired;
 *     a DPoP-bound one (client_credentials with a DPoP proof) with the DPoP scheme and a proof instead;
 *  2. issued to a client that exists in this tenant now ("only a global client is accepted": we read global as
 *     "a client of this tenant", so a token of a deleted client, or of another tenant, is refused with 401);
 *  3. within the calling client's rate limit (429 with the X-RateLimit-* headers otherwise);
 *  4. carrying at least one of the operation's scopes, else 403 naming them.
 * A token whose subject is a user (not `<client>@clients`) and that passes only through `*current_user*`
 * scopes may act on that user alone (see assertActsOnSelf). A user token's `permissions` (RBAC: the user's roles
 * hold Management API permissions, as the admin console's users do) count like scopes, for any user (#15).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { DpopResourceError, proofAtResource } from '../auth-api/dpop.js';
import { certificateMismatch } from '../auth-api/sender-constraint.js';
import { bearerToken, boundKey, dpopToken, verifyAccessToken } from '../crypto/access-token.js';
import { consumeRateLimit } from '../http/rate-limit/plugin.js';
import { ProtocolError } from '../http/errors.js';
import type { Services } from '../services.js';
import { managementAudience } from '../tenancy/bootstrap.js';

export interface ManagementPrincipal {
  /** The client the token was issued to (`azp`). */
  clientId: string;
  /** `sub`: `<client_id>@clients` for machine tokens, a user id for user tokens. */
  subject: string;
  isUser: boolean;
  scopes: ReadonlySet<string>;
  /** True when only `*current_user*` scopes allowed this operation: it may touch `subject` alone. */
  selfOnly: boolean;
}

export class Unauthorized extends ProtocolError {
  constructor(description = 'Invalid token', code = 'invalid_token') {
    super(401, code, description, { 'www-authenticate': `Bearer realm="api", error="${code}"` });
  }
}

export class InsufficientScope extends ProtocolError {
  constructor(scopes: readonly string[]) {
    super(403, 'insufficient_scope', `Insufficient scope, expected any of: ${scopes.join(',')}`);
  }
}

export class SubjectMismatch extends ProtocolError {
  constructor() {
    super(403, 'insufficient_scope', 'User to be acted on does not match subject in bearer token.');
  }
}

export function isCurrentUserScope(scope: string): boolean {
  return scope.endsWith(':current_user') || scope.includes(':current_user_');
}

/**
 * RFC 9449 §7: a DPoP-bound token (`cnf.jkt`) comes with the DPoP scheme and a proof of its key (with `ath`);
 * sent as Bearer it is refused, as is an unbound token under the DPoP scheme. RFC 8705 §3: a certificate-bound
 * token (`cnf["x5t#S256"]`) comes with the same client certificate.
 */
async function checkSenderConstraint(services: Services, request: FastifyRequest, token: string, payload: JWTPayload, scheme: 'Bearer' | 'DPoP'): Promise<void> {
  const mismatch = certificateMismatch(request, payload);
  if (mismatch) throw new Unauthorized(mismatch, 'invalid_token');
  const jkt = boundKey(payload);
  if (scheme === 'Bearer') {
    if (jkt !== undefined) throw new Unauthorized('The access token is DPoP-bound: send it with the DPoP scheme and a proof');
    return;
  }
  if (typeof jkt !== 'string') throw new DpopResourceError('invalid_token', 'The access token is not DPoP-bound: send it as a Bearer token');
  const proof = await proofAtResource(services, request, request.url, token);
  if (proof.jkt !== jkt) throw new DpopResourceError('invalid_dpop_proof', 'The DPoP proof is not signed by the key the access token is bound to');
}

export function createManagementAuthenticator(services: Services) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (!header) throw new Unauthorized('Missing authentication', 'missing_authentication');
    const bearer = bearerToken(header);
    const token = bearer ?? dpopToken(header);
    if (!token) throw new Unauthorized('Bad HTTP authentication header format', 'invalid_token');
    const tenant = request.tenant;
    let payload;
    try {
      payload = await verifyAccessToken(services.keyRing, tenant, token, managementAudience(tenant));
    } catch {
      throw new Unauthorized();
    }
    await checkSenderConstraint(services, request, token, payload, bearer ? 'Bearer' : 'DPoP');
    const subject = typeof payload.sub === 'string' ? payload.sub : '';
    const isUser = !subject.endsWith('@clients');
    const clientId = typeof payload.azp === 'string' ? payload.azp : isUser ? '' : subject.slice(0, -'@clients'.length);
    if (!subject || !clientId || !(await services.configCache.client(tenant.id, clientId))) {
      throw new Unauthorized('Client is not global');
    }
    const scopes = new Set(typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []);
    const permissions = new Set(isUser && Array.isArray(payload.permissions) ? payload.permissions.filter((p): p is string => typeof p === 'string') : []);

    // Permissions count like scopes: routes that look for a scope (update:users in a PATCH) see them too.
    const principal = { clientId, subject, isUser, scopes: new Set([...scopes, ...permissions]), selfOnly: false };
    request.principal = principal;
    // Counted per calling client once it is known; 429 comes before the scope check, as in the reference.
    const rule = request.routeOptions.config.rateLimit;
    if (rule) await consumeRateLimit(services.rateLimitStore, rule, request, reply);

    const allowedBy = request.routeOptions.config.scopes ?? [];
    const byPermission = allowedBy.filter((s) => permissions.has(s));
    const granted = allowedBy.filter((s) => scopes.has(s) && (!isUser || isCurrentUserScope(s)));
    if (granted.length === 0 && byPermission.length === 0) throw new InsufficientScope(allowedBy);
    principal.selfOnly = byPermission.length === 0 && granted.every(isCurrentUserScope);
  };
}

/** For operations on one user: a self-only principal may act on its own subject alone. */
export function assertActsOnSelf(request: FastifyRequest, userId: string): void {
  if (request.principal.selfOnly && request.principal.subject !== userId) throw new SubjectMismatch();
}
