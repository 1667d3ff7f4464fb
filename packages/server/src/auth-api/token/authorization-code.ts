/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636): the client authenticates as it is registered
 * (public clients by `client_id` alone, which is why they must have used PKCE), then redeems the code
 * /authorize gave it (auth-api/user-tokens/authorization-code.ts).
 */
import { noteForLog } from '../../logs/request-notes.js';
import { InvalidRequest } from '../../http/errors.js';
import { authenticateClient, registeredMethod } from '../client-auth/index.js';
import { senderConstraint } from '../sender-constraint.js';
import { UnauthorizedClient } from '../errors.js';
import { redeemAuthorizationCode } from '../user-tokens/authorization-code.js';
import { tokenResponse } from '../user-tokens/issue.js';
import { optionalString, requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export const authorizationCode: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl });
  if (!client.grant_types.includes('authorization_code')) {
    throw new UnauthorizedClient("Grant type 'authorization_code' not allowed for the client.");
  }
  const confirmation = senderConstraint(request, client, proof);
  const code = requiredString(params, 'code');
  const redirectUri = optionalString(params, 'redirect_uri');
  if (redirectUri === undefined) throw new InvalidRequest('Missing required parameter: redirect_uri');
  const tokens = await redeemAuthorizationCode(services, {
    tenant: request.tenant,
    client,
    isPublic: registeredMethod(client) === 'none',
    code,
    redirectUri,
    codeVerifier: optionalString(params, 'code_verifier'),
    onUser: (userId) => noteForLog(request, { user_id: userId }),
    confirmation,
  });
  return tokenResponse(tokens);
};
