/**
 * An access token in the authorization response (`response_type` with `token`) cannot be sender-constrained:
 * the browser carries no DPoP proof of the client's key and no client certificate. A client that requires
 * bound tokens (auth-api/sender-constraint.ts requiresSenderConstraint) is refused it, as RFC 6749 §4.2.2.1
 * refuses a client "not authorized to request an access token using this method"; an ID token alone is fine.
 */
import { UnauthorizedClient } from '../../errors.js';
import { requiresSenderConstraint } from '../../sender-constraint.js';
import { returnsAccessToken } from '../request.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkSenderConstraint: AuthorizeCheck = (context) => {
  const client = clientOf(context);
  // Set by the response_type check, which runs before this one.
  const responseType = context.request.responseType ?? '';
  if (!returnsAccessToken({ responseType }) || !requiresSenderConstraint(client)) return;
  throw new UnauthorizedClient('The application requires sender-constrained access tokens (DPoP or mTLS), which the authorization response cannot carry: use response_type=code');
};
