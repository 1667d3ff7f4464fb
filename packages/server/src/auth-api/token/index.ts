/**
 * POST /oauth/token (RFC 6749 §3.2): JSON or form body, dispatched by `grant_type` to one file per grant.
 * Responses are never cached. CORS follows the origins the tenant's clients allow.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest } from '../../http/errors.js';
import { FORM } from '../../http/openapi.js';
import { errorResponses } from '../../http/responses.js';
import { proofAtEndpoint } from '../dpop.js';
import { CLIENT_AUTHENTICATION_ERRORS } from '../errors.js';
import type { App, Services } from '../../services.js';
import { UnsupportedGrantType } from '../errors.js';
import { authorizationCode } from './authorization-code.js';
import { clientCredentials } from './client-credentials.js';
import { password } from './password.js';
import { PASSWORD_REALM_GRANT, passwordRealm } from './password-realm.js';
import { PASSWORDLESS_OTP_GRANT, passwordlessOtp } from './passwordless-otp.js';
import { refreshToken } from './refresh-token.js';
import { MFA_OOB_GRANT, mfaOob } from './mfa-oob.js';
import { MFA_OTP_GRANT, mfaOtp } from './mfa-otp.js';
import { MFA_RECOVERY_CODE_GRANT, mfaRecoveryCode } from './mfa-recovery-code.js';
import type { GrantHandler } from './types.js';
import { recordTokenExchange } from '../../logs/token-exchanges.js';

/** Grant types this server implements; each later grant adds one line. */
export const GRANTS: Record<string, GrantHandler> = {
  client_credentials: clientCredentials,
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  password,
  [PASSWORD_REALM_GRANT]: passwordRealm,
  [PASSWORDLESS_OTP_GRANT]: passwordlessOtp,
  [MFA_OTP_GRANT]: mfaOtp,
  [MFA_OOB_GRANT]: mfaOob,
  [MFA_RECOVERY_CODE_GRANT]: mfaRecoveryCode,
};

const TokenRequest = Type.Object(
  {
    grant_type: Type.String({ minLength: 1, maxLength: 200 }),
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
    client_assertion: Type.Optional(Type.String({ maxLength: 16_000 })),
    client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
    audience: Type.Optional(Type.String({ maxLength: 600 })),
    scope: Type.Optional(Type.String({ maxLength: 10_000 })),
    code: Type.Optional(Type.String({ maxLength: 200 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
    code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
    refresh_token: Type.Optional(Type.String({ maxLength: 200 })),
    username: Type.Optional(Type.String({ maxLength: 500 })),
    password: Type.Optional(Type.String({ maxLength: 1000 })),
    realm: Type.Optional(Type.String({ maxLength: 200 })),
    otp: Type.Optional(Type.String({ maxLength: 100 })),
    mfa_token: Type.Optional(Type.String({ maxLength: 4000, description: 'mfa-otp, mfa-oob, mfa-recovery-code: the mfa_token of the mfa_required answer' })),
    oob_code: Type.Optional(Type.String({ maxLength: 4000, description: 'mfa-oob: from /mfa/challenge' })),
    binding_code: Type.Optional(Type.String({ maxLength: 100, description: 'mfa-oob: the emailed code' })),
    recovery_code: Type.Optional(Type.String({ maxLength: 100 })),
    organization: Type.Optional(Type.String({ maxLength: 200, description: 'client_credentials: an organization id or name the token is for (org_id), as the client grant allows' })),
  },
  // OAuth: unknown parameters are ignored (RFC 6749 §3.2).
  { additionalProperties: true },
);

const TokenResponseSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], { description: 'DPoP when a DPoP proof was sent: the access token carries cnf.jkt' }),
  expires_in: Type.Integer(),
  scope: Type.Optional(Type.String()),
  id_token: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  recovery_code: Type.Optional(Type.String({ description: 'mfa-recovery-code: the user\u2019s next recovery code, shown this once' })),
});

export const TOKEN_PATH = '/oauth/token';

export function registerTokenEndpoint(app: App, services: Services): void {
  app.post(TOKEN_PATH, {
    schema: {
      tags: ['authentication'],
      summary: 'Token endpoint',
      description: `Grant types: ${Object.keys(GRANTS).join(', ')}. Body as JSON or application/x-www-form-urlencoded.`,
      body: TokenRequest,
      consumes: ['application/json', FORM],
      response: {
        200: TokenResponseSchema,
        ...errorResponses('oauth', {
          400: {
            description:
              'invalid_request (a missing or bad parameter), invalid_grant (a code, refresh token or verifier that is wrong, used, expired, revoked or bound to another DPoP key), invalid_scope, unsupported_grant_type, invalid_dpop_proof, use_dpop_nonce (retry with the DPoP-Nonce given)',
            headers: { 'DPoP-Nonce': { type: 'string' as const, description: 'With a DPoP proof: the nonce the next proof must carry', required: false } },
          },
          401: CLIENT_AUTHENTICATION_ERRORS[401],
          403: 'unauthorized_client (the grant type is not enabled for the client), access_denied (an unknown audience, no client grant, signups disabled), invalid_grant (wrong username or password, wrong one-time code), mfa_required (the tenant requires a second factor: the password grants add an mfa_token for the MFA API; the one-time-code grant cannot go on through it), invalid_grant/expired_token (the mfa grants: a wrong, replayed or expired code, a malformed, expired or used mfa_token, or another client\u2019s)',
          429: 'too_many_attempts: the account is locked from this IP after failed logins, or the IP is throttled; the mfa grants: the second factor is locked after 10 wrong codes',
        }),
      },
    },
    config: {
      rateLimit: { bucket: 'token' },
      cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
    },
    // A missing grant_type is an OAuth invalid_request, not a schema error message.
    preValidation: (request, _reply, done) => {
      const body = request.body as Record<string, unknown> | undefined;
      done(!body || typeof body !== 'object' || typeof body.grant_type !== 'string' ? new InvalidRequest('grant_type is required') : undefined);
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const grant = Object.hasOwn(GRANTS, request.body.grant_type) ? GRANTS[request.body.grant_type] : undefined;
      if (!grant) throw new UnsupportedGrantType(request.body.grant_type);
      const audience = typeof request.body.audience === 'string' && request.body.audience ? request.body.audience : undefined;
      try {
        // A refused DPoP proof is a failed exchange too, and is logged as one.
        const proof = await proofAtEndpoint(services, request, reply, TOKEN_PATH);
        const tokens = await grant({ request, params: request.body, services, endpointUrl: `${request.tenant.baseUrl}${TOKEN_PATH}`, ...(proof && { proof }) });
        recordTokenExchange(services, request, request.body.grant_type, { ok: true, scope: tokens.scope, audience });
        return tokens;
      } catch (error) {
        recordTokenExchange(services, request, request.body.grant_type, { ok: false, error });
        throw error;
      }
    },
  });
}
