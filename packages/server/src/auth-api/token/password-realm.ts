/**
 * grant_type=http://auth0.com/oauth/grant-type/password-realm (Auth0's extension of the password grant): the
 * `realm` names the database connection, which must be enabled for the client.
 */
import { fapi2Profile } from '../fapi-profile.js';
import { authenticateClient } from '../client-auth/index.js';
import { senderConstraint } from '../sender-constraint.js';
import { UnauthorizedClient } from '../errors.js';
import { tokenResponse } from '../user-tokens/issue.js';
import { passwordLogin } from '../user-tokens/password-login.js';
import { optionalString, requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export const PASSWORD_REALM_GRANT = 'http://auth0.com/oauth/grant-type/password-realm';

export const passwordRealm: GrantHandler = async ({ request, params, services, endpointUrl, proof }) => {
  const client = await authenticateClient(request, params, services, { allowPublic: true, endpointUrl });
  if (!client.grant_types.includes(PASSWORD_REALM_GRANT)) throw new UnauthorizedClient(`Grant type '${PASSWORD_REALM_GRANT}' not allowed for the client.`);
  // FAPI 2.0 SP §5.3.2.1-2: the resource owner password credentials grant is refused.
  if (fapi2Profile(client)) throw new UnauthorizedClient(`FAPI 2.0 (${client.compliance_level}): the password grant is not allowed`);
  const confirmation = senderConstraint(request, client, proof);
  const realm = requiredString(params, 'realm');
  const tokens = await passwordLogin(services, request, {
    tenant: request.tenant,
    client,
    connectionName: realm,
    unusableConnection: `Connection ${realm} does not exist or is not enabled for this client`,
    username: requiredString(params, 'username'),
    password: requiredString(params, 'password'),
    scope: optionalString(params, 'scope'),
    audience: optionalString(params, 'audience'),
    confirmation,
  });
  return tokenResponse(tokens);
};
