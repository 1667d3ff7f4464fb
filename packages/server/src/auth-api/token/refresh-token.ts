/**
 * grant_type=refresh_token (RFC 6749 §6): a client exchanges a refresh token it was issued, optionally for a
 * narrower scope. Rotation, reuse detection and expiry: auth-api/user-tokens/refresh-exchange.ts.
 */
import { noteForLog } from '../../logs/request-notes.js';
import { authenticateClient } from '../client-auth/index.js';
import { senderConstraint } from '../sender-constraint.js';
import { UnauthorizedClient } from '../errors.js';
import { tokenResponse } from '../user-tokens/issue.js';
import { exchangeRefreshToken } from '../user-tokens/refresh-exchange.js';
import { optionalString, requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export const refreshToken: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl });
  if (!client.grant_types.includes('refresh_token')) {
    throw new UnauthorizedClient("Grant type 'refresh_token' not allowed for the client.");
  }
  const confirmation = senderConstraint(request, client, proof);
  const token = requiredString(params, 'refresh_token');
  const requestedScope = optionalString(params, 'scope');
  return tokenResponse(
    await exchangeRefreshToken(services, { tenant: request.tenant, client, refreshToken: token, requestedScope, onUser: (userId) => noteForLog(request, { user_id: userId }), confirmation }),
  );
};
