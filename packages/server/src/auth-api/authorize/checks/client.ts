/** `client_id` names a client of this tenant that may use the browser flows. */
import { InvalidRequest } from '../../../http/errors.js';
import type { AuthorizeCheck } from './context.js';

export const checkClient: AuthorizeCheck = async (context) => {
  const clientId = context.params.client_id;
  if (!clientId) throw new InvalidRequest('Missing required parameter: client_id');
  const client = clientId.length <= 200 ? await context.services.configCache.client(context.tenant.id, clientId) : undefined;
  if (!client) throw new InvalidRequest('Unknown client: the client_id does not name an application of this tenant', 'invalid_client');
  context.client = client;
  context.request.clientId = client.client_id;
};
