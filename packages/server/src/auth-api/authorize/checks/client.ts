/**
 * `client_id` names a client of this tenant that may use the browser flows. At /oauth/par the client has
 * authenticated already; a `client_id` sent beside it must name that same client (RFC 9126 §2.1).
 */
import { InvalidRequest } from '../../../http/errors.js';
import type { AuthorizeCheck } from './context.js';

export const checkClient: AuthorizeCheck = async (context) => {
  const clientId = context.params.client_id;
  if (context.client) {
    if (clientId !== undefined && clientId !== context.client.client_id) throw new InvalidRequest('client_id does not match the authenticated client');
    context.request.clientId = context.client.client_id;
    return;
  }
  if (!clientId) throw new InvalidRequest('Missing required parameter: client_id');
  const client = clientId.length <= 200 ? await context.services.configCache.client(context.tenant.id, clientId) : undefined;
  if (!client) throw new InvalidRequest('Unknown client: the client_id does not name an application of this tenant', 'invalid_client');
  context.client = client;
  context.request.clientId = client.client_id;
};
