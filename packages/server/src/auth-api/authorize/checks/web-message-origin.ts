/**
 * `response_mode=web_message` posts the result to the redirect URI's origin from a framed page; that origin
 * must be among the client's Allowed Web Origins (reference C.2). Otherwise nothing is posted anywhere.
 */
import { InvalidRequest } from '../../../http/errors.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkWebMessageOrigin: AuthorizeCheck = (context) => {
  if (context.params.response_mode !== 'web_message') return;
  const client = clientOf(context);
  const origin = new URL(context.request.redirectUri ?? '').origin;
  if (!client.web_origins.includes(origin)) {
    throw new InvalidRequest(`The redirect_uri's origin (${origin}) is not in the application's Allowed Web Origins`);
  }
};
