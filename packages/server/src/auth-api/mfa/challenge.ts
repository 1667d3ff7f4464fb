/**
 * POST /mfa/challenge (the reference's MFA API): the client, authenticated as at /oauth/token, says which kinds
 * of challenge it can show (`challenge_type`, space separated: `otp`, `oob`), optionally for one authenticator;
 * the answer says which one the user is to answer:
 *  - `{challenge_type: "otp"}`: a code from the authenticator app, for the mfa-otp grant;
 *  - `{challenge_type: "oob", oob_code, binding_method: "prompt"}`: a 6-digit code was emailed (at most 5 per
 *    mfa_token, mfa/email.ts); the mfa-oob grant takes the oob_code and the emailed code as `binding_code`.
 * TOTP is preferred when both fit and no authenticator is named.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { errorResponses } from '../../http/responses.js';
import { sendEmailCode } from '../../mfa/email.js';
import type { App, Services } from '../../services.js';
import { listMfaEnrollments } from '../../store/mfa-enrollments.js';
import { findPrimaryUser } from '../../store/users.js';
import { authenticateClient } from '../client-auth/index.js';
import { CLIENT_AUTHENTICATION_ERRORS, UnauthorizedClient } from '../errors.js';
import { MFA_GRANTS } from './grant-types.js';
import { MFA_CORS } from './cors.js';
import { liveChallenge, readClientMfaToken, usedToken } from './mfa-token.js';
import { sealOobCode } from './oob-code.js';
import { emailAuthenticatorId, userFactors } from './user-authenticators.js';

const ChallengeBody = Type.Object(
  {
    mfa_token: Type.String({ minLength: 1, maxLength: 4000 }),
    challenge_type: Type.Optional(Type.String({ maxLength: 100, description: 'Space separated: otp, oob' })),
    authenticator_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
    client_assertion: Type.Optional(Type.String({ maxLength: 16_000 })),
    client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);

const ChallengeResponse = Type.Object({
  challenge_type: Type.Union([Type.Literal('otp'), Type.Literal('oob')]),
  oob_code: Type.Optional(Type.String({ description: 'oob: for the mfa-oob grant, with the emailed code as binding_code' })),
  binding_method: Type.Optional(Type.Literal('prompt')),
});

class UnsupportedChallengeType extends ProtocolError {
  constructor(description: string) {
    super(400, 'unsupported_challenge_type', description);
  }
}

export function registerChallenge(app: App, services: Services): void {
  app.post('/mfa/challenge', {
    schema: {
      tags: ['authentication'],
      summary: 'Challenge an MFA authenticator',
      body: ChallengeBody,
      response: {
        200: ChallengeResponse,
        ...errorResponses('oauth', {
          400: 'invalid_request (an authenticator_id that is not the user\u2019s), unsupported_challenge_type (the user has no authenticator of the types asked)',
          401: CLIENT_AUTHENTICATION_ERRORS[401],
          403: 'invalid_grant (a malformed or used mfa_token, or another client\u2019s), expired_token, unauthorized_client (no MFA grant enabled for the client)',
          429: 'too_many_attempts: 5 codes were already emailed for this mfa_token',
        }),
      },
    },
    config: { rateLimit: { bucket: 'token' }, cors: MFA_CORS(services) },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const tenant = request.tenant;
      const body = request.body as Record<string, unknown> & typeof request.body;
      const client = await authenticateClient(request, body, services, { allowPublic: true, endpointUrl: `${tenant.baseUrl}/mfa/challenge` });
      if (!MFA_GRANTS.some((grant) => client.grant_types.includes(grant))) throw new UnauthorizedClient('No MFA grant type is enabled for the client.');
      const claims = readClientMfaToken(services, tenant, client, request.body.mfa_token);
      const [challenge, user, enrollments] = await Promise.all([
        liveChallenge(services, tenant, claims, 'grant'),
        findPrimaryUser(services.store.db, tenant.id, claims.userId),
        listMfaEnrollments(services.store.db, tenant.id, claims.userId),
      ]);
      if (!user) throw usedToken('grant');
      const types = new Set((request.body.challenge_type ?? 'otp oob').split(/\s+/).filter(Boolean));
      const factors = userFactors(tenant, user, enrollments);
      const emailId = emailAuthenticatorId(user);
      const wanted = request.body.authenticator_id;
      if (wanted !== undefined && wanted !== factors.totp?.id && !(factors.email && wanted === emailId)) {
        throw new InvalidRequest('authenticator_id is not one of the user\u2019s authenticators');
      }
      const otp = factors.totp?.confirmed === true && types.has('otp') && (wanted === undefined || wanted === factors.totp.id);
      if (otp) return { challenge_type: 'otp' as const };
      const email = factors.email && types.has('oob') && (wanted === undefined || wanted === emailId);
      if (!email) throw new UnsupportedChallengeType('The user has no authenticator for the challenge types asked.');
      const sent = await sendEmailCode(services, tenant, challenge, user);
      if (sent === 'limit') throw new ProtocolError(429, 'too_many_attempts', 'Too many codes were sent for this mfa_token. Log in again for a new one.');
      if (sent === 'undeliverable') throw new UnsupportedChallengeType('The user has no authenticator for the challenge types asked.');
      return { challenge_type: 'oob' as const, oob_code: sealOobCode(services, tenant, claims), binding_method: 'prompt' as const };
    },
  });
}
