/**
 * `redirect_uri` equals one of the client's callback URLs, byte for byte (RFC 9700 §4.1: no patterns, no
 * normalisation, so `/cb/../x`, a trailing slash or another case all fail). Until this passes nothing is ever
 * sent to the URI: a failure shows the error page, never a redirect (no open redirector, §4.11).
 */
import { InvalidRequest } from '../../../http/errors.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkRedirectUri: AuthorizeCheck = (context) => {
  const client = clientOf(context);
  const redirectUri = context.params.redirect_uri;
  if (!redirectUri) throw new InvalidRequest('Missing required parameter: redirect_uri');
  if (!client.callbacks.includes(redirectUri)) {
    throw new InvalidRequest(`The redirect_uri is not in the application's Allowed Callback URLs: ${redirectUri.slice(0, 300)}`);
  }
  context.request.redirectUri = redirectUri;
};
