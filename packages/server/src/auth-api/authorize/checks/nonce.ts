/** An ID token in the front channel must carry a `nonce` (OIDC Core §3.2.2.1, §3.3.2.11): replay protection. */
import { InvalidRequest } from '../../../http/errors.js';
import type { AuthorizeCheck } from './context.js';

export const checkNonce: AuthorizeCheck = (context) => {
  const nonce = context.params.nonce;
  if (nonce !== undefined && nonce !== '') context.request.nonce = nonce;
  const types = (context.request.responseType ?? '').split(' ');
  if (types.includes('id_token') && !types.includes('code') && !context.request.nonce) {
    throw new InvalidRequest('Missing required parameter: nonce (required when an ID token is returned from /authorize)');
  }
};
