/**
 * The Guardian (`gd_*`) events of the second factor, whichever door it came through (the hosted MFA page, the
 * MFA API, the Management API): an enrollment started and completed, an answer right or wrong, the recovery
 * code used or refused, the lock after too many wrong answers, a factor removed. The events carry who and
 * which factor (`details.authenticator`), never a code, secret or recovery code.
 */
import type { FastifyRequest } from 'fastify';
import type { CheckedAnswer } from '../mfa/lockout.js';
import type { Services } from '../services.js';
import type { MfaEnrollmentType } from '../store/schema.js';
import type { LogEventType } from './catalogue.js';
import { noteForLog } from './request-notes.js';

/** The factor an event is about, in the Management API's authentication-method words. */
export type SecondFactorKind = MfaEnrollmentType | 'email' | 'webauthn';

export interface SecondFactorWho {
  userId: string;
  userName?: string | undefined;
  client?: { client_id: string; name?: string | undefined } | undefined;
}

export function recordSecondFactorEvent(
  services: Services,
  request: FastifyRequest,
  type: Extract<LogEventType, `gd_${string}`>,
  who: SecondFactorWho,
  factor: SecondFactorKind | undefined,
): void {
  services.tenantLogs.recordFor(request, {
    type,
    user_id: who.userId,
    user_name: who.userName,
    client: who.client,
    ...(factor && { details: { authenticator: factor } }),
  });
}

/** The code of an answer's outcome: the recovery code has its own; a lock is logged when it begins and after. */
export function answerEventType(factor: SecondFactorKind, checked: CheckedAnswer): Extract<LogEventType, `gd_${string}`> {
  const recovery = factor === 'recovery-code';
  if (checked.outcome === 'right') return recovery ? 'gd_recovery_succeed' : 'gd_auth_succeed';
  if (checked.outcome === 'locked' || checked.nowLocked) return recovery ? 'gd_recovery_rate_limit_exceed' : 'gd_otp_rate_limit_exceed';
  return recovery ? 'gd_recovery_failed' : 'gd_auth_failed';
}

/**
 * Logs an answer (`enrolled`: a right one completed an enrollment). Through the MFA API the exchange's own event
 * (`seotpft`, `feotpft`, …) follows and names the user too: the guardian event says what happened to the factor,
 * the exchange event what happened to the token request.
 */
export function recordSecondFactorAnswer(services: Services, request: FastifyRequest, who: SecondFactorWho, factor: SecondFactorKind, checked: CheckedAnswer, enrolled = false): void {
  const type = checked.outcome === 'right' && enrolled ? 'gd_enrollment_complete' : answerEventType(factor, checked);
  recordSecondFactorEvent(services, request, type, who, factor);
  noteForLog(request, { user_id: who.userId, ...(who.userName && { user_name: who.userName }) });
}
