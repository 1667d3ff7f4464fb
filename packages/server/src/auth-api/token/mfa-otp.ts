/**
 * grant_type=http://auth0.com/oauth/grant-type/mfa-otp (the reference's MFA API): `mfa_token` and `otp`, a code
 * of the user's authenticator app. The first code after /mfa/associate confirms the enrollment. A code's time
 * step is accepted once (mfa/totp.ts): a replayed code is wrong. Wrong codes count toward the factor lock.
 */
import { checkFactorAnswer } from '../../mfa/lock-notice.js';
import { totp } from '../../mfa/totp.js';
import { listMfaEnrollments } from '../../store/mfa-enrollments.js';
import { MFA_OTP_GRANT } from '../mfa/grant-types.js';
import { totpEnrollment } from '../mfa/user-authenticators.js';
import { InvalidGrant } from '../user-tokens/errors.js';
import { finishMfaGrant, requireRight, startMfaGrant } from './mfa-grant.js';
import { requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export { MFA_OTP_GRANT };

export const mfaOtp: GrantHandler = async (context) => {
  const start = await startMfaGrant(context, MFA_OTP_GRANT);
  const otp = requiredString(context.params, 'otp');
  const { services, request } = context;
  const { tenant } = request;
  const userId = start.claims.userId;
  const enrollment = totpEnrollment(await listMfaEnrollments(services.store.db, tenant.id, userId));
  if (!enrollment) throw new InvalidGrant('User is not enrolled with otp.', 403);
  const factor = { db: services.store.db, sealer: services.sealer, tenantId: tenant.id, userId, now: Date.now() };
  const checked = await checkFactorAnswer(services, tenant, userId, () => totp.verify(factor, enrollment, otp));
  requireRight(context, start, 'totp', checked, 'Invalid otp_code.', !enrollment.confirmed);
  return finishMfaGrant(context, start, ['otp']);
};
