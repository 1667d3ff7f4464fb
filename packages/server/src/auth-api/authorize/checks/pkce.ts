/**
 * PKCE (RFC 7636; RFC 9700 §2.1.1): S256 only (`plain` exposes the verifier), and required of public clients
 * that ask for a code, since nothing else binds the code to the app that asked for it.
 */
import { InvalidRequest } from '../../../http/errors.js';
import { clientOf, type AuthorizeCheck } from './context.js';

/** base64url of a SHA-256: 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export const checkPkce: AuthorizeCheck = (context) => {
  const challenge = context.params.code_challenge;
  const method = context.params.code_challenge_method;
  const client = clientOf(context);
  const code = (context.request.responseType ?? '').split(' ').includes('code');
  if (challenge === undefined || challenge === '') {
    if (method) throw new InvalidRequest('code_challenge_method was sent without code_challenge');
    if (code && client.token_endpoint_auth_method === 'none') {
      throw new InvalidRequest('Public applications must use PKCE: code_challenge (S256) is required');
    }
    return;
  }
  if (method !== 'S256') {
    throw new InvalidRequest(`Unsupported code_challenge_method: ${method ? method.slice(0, 20) : '(missing; plain is not accepted)'}; use S256`);
  }
  if (!S256_CHALLENGE.test(challenge)) throw new InvalidRequest('code_challenge must be the base64url SHA-256 of the verifier (43 characters)');
  context.request.codeChallenge = challenge;
  context.request.codeChallengeMethod = 'S256';
};
