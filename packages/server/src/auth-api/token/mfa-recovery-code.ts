/**
 * grant_type=http://auth0.com/oauth/grant-type/mfa-recovery-code (the reference's MFA API): `mfa_token` and
 * `recovery_code`. The code is used up, and the response carries the user's next one as `recovery_code` (shown
 * this once), as the reference's does. It stands in for a factor the user has: without one enrolled it is wrong.
 * Wrong codes count toward the factor lock.
 */
import { checkFactorAnswer } from '../../mfa/lock-notice.js';
import { recoveryCode } from '../../mfa/recovery-code.js';
import { listMfaEnrollments } from '../../store/mfa-enrollments.js';
import { MFA_RECOVERY_CODE_GRANT } from '../mfa/grant-types.js';
import { hasEnrolledFactor } from '../mfa/user-authenticators.js';
import { finishMfaGrant, requireRight, startMfaGrant } from './mfa-grant.js';
import { requiredString } from './params.js';
import type { GrantHandler } from './types.js';

export { MFA_RECOVERY_CODE_GRANT };

export const mfaRecoveryCode: GrantHandler = async (context) => {
  const start = await startMfaGrant(context, MFA_RECOVERY_CODE_GRANT);
  const { services, request, params } = context;
  const { tenant } = request;
  const answer = requiredString(params, 'recovery_code');
  const userId = start.claims.userId;
  const enrollments = await listMfaEnrollments(services.store.db, tenant.id, userId);
  const stored = hasEnrolledFactor(tenant, enrollments) ? enrollments.find((e) => e.type === 'recovery-code') : undefined;
  const factor = { db: services.store.db, sealer: services.sealer, tenantId: tenant.id, userId, now: Date.now() };
  requireRight(context, start, 'recovery-code', await checkFactorAnswer(services, tenant, userId, async () => stored !== undefined && recoveryCode.verify(factor, stored, answer)), 'Invalid recovery_code.');
  return finishMfaGrant(context, start, [], async () => ({ recovery_code: (await recoveryCode.enroll(factor, { issuer: '', label: '' })).code }));
};
