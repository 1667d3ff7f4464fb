/**
 * A client or tenant with `require_pushed_authorization_requests` takes authorization requests only through
 * /oauth/par (RFC 9126 §6): at /authorize the parameters must come from a request_uri.
 */
import { fapi2Profile } from '../../fapi-profile.js';
import { InvalidRequest } from '../../../http/errors.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkPushedRequired: AuthorizeCheck = (context) => {
  if (context.endpoint !== 'authorize' || context.pushed) return;
  const client = clientOf(context);
  if (client.require_pushed_authorization_requests === true || context.tenant.settings.require_pushed_authorization_requests === true) {
    throw new InvalidRequest('Pushed Authorization Request is required: send the request to /oauth/par first, then request_uri here');
  }
  // FAPI 2.0 SP §5.3.2.2-3: a FAPI 2.0 client's requests come through PAR, whatever the flags say.
  if (fapi2Profile(client)) {
    throw new InvalidRequest(`FAPI 2.0 (${client.compliance_level}): Pushed Authorization Request is required; send the request to /oauth/par first, then request_uri here`);
  }
};
