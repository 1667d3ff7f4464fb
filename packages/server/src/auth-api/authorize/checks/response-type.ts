/**
 * `response_type`: code, token, id_token and their combinations, each allowed only by the client's grant
 * types (`authorization_code` for a code, `implicit` for tokens in the front channel).
 */
import { InvalidRequest } from '../../../http/errors.js';
import { UnauthorizedClient, UnsupportedResponseType } from '../../errors.js';
import { clientOf, type AuthorizeCheck } from './context.js';

const ORDER = ['code', 'id_token', 'token'];

export const checkResponseType: AuthorizeCheck = (context) => {
  const raw = context.params.response_type;
  if (!raw) throw new InvalidRequest('Missing required parameter: response_type');
  const parts = raw.trim().split(/\s+/);
  if (new Set(parts).size !== parts.length || parts.some((p) => !ORDER.includes(p))) {
    throw new UnsupportedResponseType(`Unsupported response type: ${raw.slice(0, 100)}`);
  }
  const client = clientOf(context);
  const grants = client.grant_types;
  if (parts.includes('code') && !grants.includes('authorization_code')) {
    throw new UnauthorizedClient('The application is not allowed the authorization_code grant (response_type code)');
  }
  if ((parts.includes('token') || parts.includes('id_token')) && !grants.includes('implicit')) {
    throw new UnauthorizedClient('The application is not allowed the implicit grant (tokens in the authorization response)');
  }
  context.request.responseType = ORDER.filter((p) => parts.includes(p)).join(' ');
};
