/**
 * Second factors, one file per factor behind one interface: what enrolling one gives the person to keep (a TOTP
 * secret, a recovery code) and how an answer is checked against an enrollment. Names are the reference's: the
 * Guardian factor `name` (the tenant's switch) and the authentication method `type` (a user's enrollment).
 * Counting wrong answers toward the lockout is not a factor's concern (lockout.ts wraps every check).
 */
import type { Kysely } from 'kysely';
import type { Sealer } from '../crypto/sealing.js';
import type { MfaEnrollment } from '../store/mfa-enrollments.js';
import type { Database, MfaEnrollmentType } from '../store/schema.js';

/** Every factor name the reference's Guardian API knows; only SUPPORTED_FACTORS can be enabled here. */
export const GUARDIAN_FACTOR_NAMES = ['push-notification', 'sms', 'email', 'duo', 'otp', 'webauthn-roaming', 'webauthn-platform', 'recovery-code'] as const;
export type GuardianFactorName = (typeof GUARDIAN_FACTOR_NAMES)[number];

export interface FactorContext {
  db: Kysely<Database>;
  sealer: Sealer;
  tenantId: string;
  userId: string;
  now: number;
}

export interface Factor<Enrolled> {
  /** The Guardian factor that switches it on for the tenant. */
  readonly name: GuardianFactorName;
  /** The authentication method type its enrollments have. */
  readonly type: MfaEnrollmentType;
  /** Starts (or, for a pending one, resumes) an enrollment; what the person must be shown to complete it. */
  enroll(context: FactorContext, details: { issuer: string; label: string }): Promise<Enrolled>;
  /**
   * Whether `answer` is right for `enrollment`, and uses it up where it is single use (a TOTP time step, a
   * recovery code): of two requests with the same answer, at most one gets true.
   */
  verify(context: FactorContext, enrollment: MfaEnrollment, answer: string): Promise<boolean>;
}
