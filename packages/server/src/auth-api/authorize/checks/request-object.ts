/**
 * `request` (RFC 9101): a signed request object replaces the parameters (request-object.ts verifies it).
 *  - not beside a request_uri (a pushed request had its object unpacked at /oauth/par already);
 *  - a client with `signed_request_object.required` sends one, at /oauth/par or at /authorize.
 */
import { InvalidRequest } from '../../../http/errors.js';
import { readRequestObject } from '../request-object.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkRequestObject: AuthorizeCheck = async (context) => {
  const client = clientOf(context);
  const jwt = context.params.request;
  if (jwt === undefined || jwt === '') {
    if (client.signed_request_object?.required === true && !context.pushed) {
      throw new InvalidRequest('The application requires a signed request object (request parameter, RFC 9101)');
    }
    return;
  }
  if (context.pushed) throw new InvalidRequest('request and request_uri cannot both be sent');
  context.params = await readRequestObject(context.tenant, client, jwt);
};
