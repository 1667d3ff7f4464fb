/**
 * POST /mfa/associate (the reference's MFA API): enrolls the user's first second factor, authorized by the
 * mfa_token as a Bearer token. `authenticator_types: ["otp"]` starts a TOTP enrollment (resumed while pending,
 * so a retry shows the same secret) and answers the reference's `{authenticator_type, secret, barcode_uri,
 * recovery_codes}`: a new recovery code comes with the first enrollment, as the reference does. The first code
 * given to the mfa-otp grant confirms it.
 * Refused once the user has a factor ("User is already enrolled."): an mfa_token proves the password only, and
 * adding a factor to an enrolled account on the password alone would let whoever knows it get past MFA. Email is
 * not associated: here it is only ever another way to answer for a verified address (mfa/email.ts), which
 * /mfa/authenticators lists and /mfa/challenge sends once the user has a factor.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest } from '../../http/errors.js';
import { errorResponses } from '../../http/responses.js';
import { factorEnabled } from '../../mfa/policy.js';
import { recoveryCode } from '../../mfa/recovery-code.js';
import { totp } from '../../mfa/totp.js';
import type { App, Services } from '../../services.js';
import { listMfaEnrollments } from '../../store/mfa-enrollments.js';
import { findPrimaryUser } from '../../store/users.js';
import { AccessDenied } from '../errors.js';
import { BEARER_ERRORS } from './authenticators.js';
import { MFA_CORS } from './cors.js';
import { bearerMfaToken, liveChallenge, usedToken } from './mfa-token.js';
import { userFactors } from './user-authenticators.js';
import { recordSecondFactorEvent } from '../../logs/second-factor.js';

const AssociateBody = Type.Object(
  {
    authenticator_types: Type.Array(Type.String({ maxLength: 40 }), { minItems: 1, maxItems: 5 }),
    oob_channels: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 5 })),
    phone_number: Type.Optional(Type.String({ maxLength: 40 })),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: true },
);

const OtpAssociation = Type.Object({
  authenticator_type: Type.Literal('otp'),
  secret: Type.String({ description: 'Base32, for typing into an authenticator app' }),
  barcode_uri: Type.String({ description: 'otpauth://totp/…, the QR code\u2019s content' }),
  recovery_codes: Type.Array(Type.String(), { description: 'One recovery code, shown this once' }),
});

export function registerAssociate(app: App, services: Services): void {
  app.post('/mfa/associate', {
    schema: {
      tags: ['authentication'],
      summary: 'Associate an MFA authenticator',
      description: 'Authorization: Bearer <mfa_token>. Enrolls TOTP (authenticator_types ["otp"]) as the user\u2019s first second factor.',
      body: AssociateBody,
      response: {
        200: OtpAssociation,
        ...errorResponses('oauth', {
          400: 'invalid_request: an authenticator type or channel this server cannot associate (oob: email is only another way to answer; sms, voice and push are not offered)',
          401: BEARER_ERRORS,
          403: 'access_denied: the user is already enrolled, or the otp factor is not enabled',
        }),
      },
    },
    config: { rateLimit: { bucket: 'token' }, cors: MFA_CORS(services) },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const tenant = request.tenant;
      const claims = bearerMfaToken(services, tenant, request.headers.authorization);
      const [, user, enrollments] = await Promise.all([
        liveChallenge(services, tenant, claims, 'bearer'),
        findPrimaryUser(services.store.db, tenant.id, claims.userId),
        listMfaEnrollments(services.store.db, tenant.id, claims.userId),
      ]);
      if (!user) throw usedToken('bearer');
      const types = request.body.authenticator_types;
      if (types.length !== 1 || types[0] !== 'otp') {
        throw new InvalidRequest(
          types.includes('oob')
            ? 'Only otp can be associated: email answers only as another way for a user who has a factor, and sms, voice and push are not offered'
            : 'authenticator_types must be ["otp"]',
        );
      }
      if (userFactors(tenant, user, enrollments).enrolled) throw new AccessDenied('User is already enrolled.');
      if (!factorEnabled(tenant, 'otp')) throw new AccessDenied('The otp factor is not enabled.');
      const context = { db: services.store.db, sealer: services.sealer, tenantId: tenant.id, userId: user.user_id, now: Date.now() };
      const started = await totp.enroll(context, { issuer: tenant.friendlyName || tenant.name, label: user.email ?? user.username ?? user.phone_number ?? user.user_id });
      // Any earlier recovery code is replaced: the one shown now is the one that works.
      const recovery = await recoveryCode.enroll(context, { issuer: '', label: '' });
      recordSecondFactorEvent(services, request, 'gd_start_enroll', { userId: user.user_id, userName: user.email ?? user.username ?? undefined, client: { client_id: claims.clientId } }, 'totp');
      return { authenticator_type: 'otp' as const, secret: started.secret, barcode_uri: started.uri, recovery_codes: [recovery.code] };
    },
  });
}
