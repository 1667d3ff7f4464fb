/**
 * GET /mfa/authenticators (the reference's MFA API): the user's authenticators, for the client to choose one to
 * challenge. Authorized by the mfa_token as a Bearer token (the reference also takes an access token for its MFA
 * audience with `read:authenticators`, which this server does not issue).
 */
import { Type } from '@fastify/type-provider-typebox';
import { errorResponses, unauthorized } from '../../http/responses.js';
import type { App, Services } from '../../services.js';
import { listMfaEnrollments } from '../../store/mfa-enrollments.js';
import { findPrimaryUser } from '../../store/users.js';
import { bearerMfaToken, liveChallenge, usedToken } from './mfa-token.js';
import { apiAuthenticators, userFactors } from './user-authenticators.js';
import { MFA_CORS } from './cors.js';

export const Authenticator = Type.Object({
  id: Type.String(),
  authenticator_type: Type.Union([Type.Literal('otp'), Type.Literal('oob'), Type.Literal('recovery-code')]),
  active: Type.Boolean({ description: 'false for an otp authenticator associated but not yet confirmed with a first code' }),
  oob_channel: Type.Optional(Type.Literal('email')),
  name: Type.Optional(Type.String({ description: 'email: the address, masked' })),
});

export const BEARER_ERRORS = unauthorized(
  'invalid_token (no, a malformed, or an already used mfa_token), expired_token (older than 10 minutes)',
  'Bearer error="…": the mfa_token from mfa_required is the Bearer token',
);

export function registerListAuthenticators(app: App, services: Services): void {
  app.get('/mfa/authenticators', {
    schema: {
      tags: ['authentication'],
      summary: 'List the user\u2019s MFA authenticators',
      description: 'Authorization: Bearer <mfa_token>. TOTP (otp), email (oob, where the tenant enables it for a verified address) and the recovery code.',
      response: { 200: Type.Array(Authenticator), ...errorResponses('oauth', { 401: BEARER_ERRORS }) },
    },
    config: { rateLimit: { bucket: 'token' }, cors: MFA_CORS(services) },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const tenant = request.tenant;
      const claims = bearerMfaToken(services, tenant, request.headers.authorization);
      const [, user, enrollments] = await Promise.all([
        liveChallenge(services, tenant, claims, 'bearer'),
        findPrimaryUser(services.store.db, tenant.id, claims.userId),
        listMfaEnrollments(services.store.db, tenant.id, claims.userId),
      ]);
      if (!user) throw usedToken('bearer');
      return apiAuthenticators(user, userFactors(tenant, user, enrollments));
    },
  });
}
