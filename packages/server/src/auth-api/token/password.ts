/**
 * grant_type=password (RFC 6749 §4.3): only for clients that enable it; the user logs in to the tenant's default
 * directory (tenant setting `default_directory`, else `Username-Password-Authentication`).
 */
import { fapi2Profile } from '../fapi-profile.js';
import { DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import { authenticateClient } from '../client-auth/index.js';
import { senderConstraint } from '../sender-constraint.js';
import { UnauthorizedClient } from '../errors.js';
import { tokenResponse } from '../user-tokens/issue.js';
import { passwordLogin } from '../user-tokens/password-login.js';
import { optionalString, requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export const password: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl });
  if (!client.grant_types.includes('password')) throw new UnauthorizedClient("Grant type 'password' not allowed for the client.");
  // FAPI 2.0 SP §5.3.2.1-2: the resource owner password credentials grant is refused.
  if (fapi2Profile(client)) throw new UnauthorizedClient(`FAPI 2.0 (${client.compliance_level}): the password grant is not allowed`);
  const confirmation = senderConstraint(request, client, proof);
  const tokens = await passwordLogin(services, request, {
    tenant: request.tenant,
    client,
    connectionName: request.tenant.settings.default_directory ?? DATABASE_CONNECTION_NAME,
    unusableConnection: 'Authorization server not configured with default connection.',
    username: requiredString(params, 'username'),
    password: requiredString(params, 'password'),
    scope: optionalString(params, 'scope'),
    audience: optionalString(params, 'audience'),
    confirmation,
  });
  return tokenResponse(tokens);
};
