/**
 * `request_uri` (RFC 9126 §4): the parameters a client pushed to /oauth/par replace the query entirely.
 *  - only `urn:ietf:params:oauth:request_uri:` values this server issued, once, before they expire;
 *  - only for the client that pushed them (the `client_id` beside it must be that client);
 *  - at /oauth/par itself a request_uri is refused (§2.1).
 */
import { InvalidRequest } from '../../../http/errors.js';
import { takePushedRequest } from '../../par/requests.js';
import { InvalidRequestUri } from '../../errors.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkRequestUri: AuthorizeCheck = async (context) => {
  const requestUri = context.params.request_uri;
  if (requestUri === undefined) return;
  if (context.endpoint === 'par') throw new InvalidRequest('request_uri must not be sent to the pushed authorization request endpoint');
  const client = clientOf(context);
  const pushed = await takePushedRequest(context.services, context.tenant, requestUri);
  if (!pushed || pushed.clientId !== client.client_id) throw new InvalidRequestUri();
  context.params = { ...pushed.params, client_id: client.client_id };
  context.pushed = { dpopJkt: pushed.dpopJkt };
  if (pushed.dpopJkt !== null) context.request.dpopJkt = pushed.dpopJkt;
};
