/**
 * grant_type=http://auth0.com/oauth/grant-type/passwordless/otp (reference C.3): `username` (the email or phone
 * number), `otp` (the code from /passwordless/start) and `realm` (the passwordless connection, enabled for the
 * client). Only for clients whose grant_types include it. The code is used up; a new user is created on a
 * first login unless the connection disables signup.
 */
import { eventContextFrom } from '../../events/context.js';
import { InvalidRequest } from '../../http/errors.js';
import { authenticateClient } from '../client-auth/index.js';
import { senderConstraint } from '../sender-constraint.js';
import { AccessDenied, UnauthorizedClient } from '../errors.js';
import { passwordlessConnectionFor } from '../passwordless/codes.js';
import { verifyPasswordlessOtp } from '../passwordless/otp.js';
import { mfaRequired } from '../../mfa/policy.js';
import type { UserAuthorization } from '../user-tokens/authorization.js';
import { InvalidGrant, MfaRequired, UserBlocked } from '../user-tokens/errors.js';
import { issueUserTokens, tokenResponse } from '../user-tokens/issue.js';
import { resolveUserScopes } from '../user-tokens/scopes.js';
import { optionalString, requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export const PASSWORDLESS_OTP_GRANT = 'http://auth0.com/oauth/grant-type/passwordless/otp';

export const passwordlessOtp: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl });
  if (!client.grant_types.includes(PASSWORDLESS_OTP_GRANT)) throw new UnauthorizedClient(`Grant type '${PASSWORDLESS_OTP_GRANT}' not allowed for the client.`);
  // Before the code is checked, so a refusal here does not use it up.
  const confirmation = senderConstraint(request, client, proof);
  const tenant = request.tenant;
  const realm = requiredString(params, 'realm');
  const username = requiredString(params, 'username');
  const otp = requiredString(params, 'otp');
  const connection = await passwordlessConnectionFor(services, tenant, client.client_id, realm);
  if (!connection) throw new InvalidRequest(`Connection ${realm.slice(0, 100)} is not a passwordless connection enabled for this client`);

  const result = await verifyPasswordlessOtp(services, tenant, { connection: connection.name, username, otp }, {
    clientId: client.client_id,
    ip: request.ip,
    event: { ...eventContextFrom(request), client_id: client.client_id },
  });
  switch (result.outcome) {
    case 'wrong_code':
      throw new InvalidGrant(connection.strategy === 'sms' ? 'Wrong phone number or verification code.' : 'Wrong email or verification code.', 403);
    case 'expired':
      throw new InvalidGrant('The verification code has expired or was tried too many times. Ask for a new one.', 403);
    case 'blocked':
      throw new UserBlocked();
    case 'signup_disabled':
      throw new AccessDenied('Signups are disabled for this connection');
    case 'ok':
      break;
  }
  const audience = optionalString(params, 'audience') || tenant.settings.default_audience || null;
  const { scopes, audience: granted } = await resolveUserScopes(services, { tenant, client, user: result.user, requestedScope: optionalString(params, 'scope') ?? '', audience });
  // A one-time code is a first factor: where the tenant requires a second one, it issues nothing here.
  if (mfaRequired(tenant)) throw new MfaRequired();
  const authorization: UserAuthorization = { tenant, client, user: result.user, scopes, audience: granted, authTime: Math.floor(Date.now() / 1000), confirmation };
  return tokenResponse(await issueUserTokens(services, authorization, { accessToken: true, idToken: true, refreshToken: true }));
};
