/**
 * A FAPI 2.0 client's authorization request (auth-api/fapi-profile.ts), after the generic checks:
 * `response_type=code` only (§5.3.2.2-1: no implicit or hybrid), and PKCE required (§5.3.2.2-5; the generic
 * check already takes S256 only). PAR itself is required by the pushed-required check, before the redirect.
 */
import { InvalidRequest } from '../../../http/errors.js';
import { UnsupportedResponseType } from '../../errors.js';
import { fapi2Profile } from '../../fapi-profile.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkFapiProfile: AuthorizeCheck = (context) => {
  const client = clientOf(context);
  if (!fapi2Profile(client)) return;
  if (context.request.responseType !== 'code') {
    throw new UnsupportedResponseType(`FAPI 2.0 (${client.compliance_level}): response_type must be code`);
  }
  if (context.request.codeChallenge === undefined) {
    throw new InvalidRequest(`FAPI 2.0 (${client.compliance_level}): PKCE is required; send code_challenge with code_challenge_method S256`);
  }
};
