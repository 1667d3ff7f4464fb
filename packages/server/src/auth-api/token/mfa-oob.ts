/**
 * grant_type=http://auth0.com/oauth/grant-type/mfa-oob (the reference's MFA API): `mfa_token`, the `oob_code`
 * /mfa/challenge answered with, and `binding_code`, the code it emailed (binding_method "prompt"). The code is
 * single use and lives 5 minutes (mfa/email.ts); wrong codes count toward the factor lock. Email is the only
 * out-of-band channel here, so the answer is immediate: never authorization_pending.
 */
import { checkFactorAnswer } from '../../mfa/lock-notice.js';
import { verifyEmailCode } from '../../mfa/email.js';
import { MFA_OOB_GRANT } from '../mfa/grant-types.js';
import { liveChallenge } from '../mfa/mfa-token.js';
import { oobCodeMatches } from '../mfa/oob-code.js';
import { InvalidGrant } from '../user-tokens/errors.js';
import { finishMfaGrant, requireRight, startMfaGrant } from './mfa-grant.js';
import { requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export { MFA_OOB_GRANT };

export const mfaOob: GrantHandler = async (context) => {
  const start = await startMfaGrant(context, MFA_OOB_GRANT);
  const { services, request, params } = context;
  const { tenant } = request;
  const oobCode = requiredString(params, 'oob_code');
  const bindingCode = requiredString(params, 'binding_code');
  if (!oobCodeMatches(services, tenant, start.claims, oobCode)) throw new InvalidGrant('Invalid oob_code.', 403);
  const challenge = await liveChallenge(services, tenant, start.claims, 'grant');
  requireRight(context, start, 'email', await checkFactorAnswer(services, tenant, start.claims.userId, () => verifyEmailCode(services, challenge, bindingCode)), 'Invalid binding_code.');
  return finishMfaGrant(context, start, []);
};
