/**
 * A user's second factors as the MFA API names them (the reference's authenticator shape:
 * `{id, authenticator_type, active, oob_channel?, name?}`):
 *  - a TOTP enrollment is `otp` (inactive while pending: associated, not yet confirmed by a first code);
 *  - the recovery code is `recovery-code`;
 *  - email is `oob` with `oob_channel: "email"`, listed where the hosted pages offer it (mfa/email.ts): the tenant
 *    enables the email factor, the address is verified, and the user has a factor it stands in for. It is not an
 *    enrollment: its id is derived from the user, stable while the user exists;
 *  - WebAuthn credentials need a browser: the API neither lists nor challenges them, but they count as the
 *    factor a recovery code or email stands in for.
 */
import { createHash } from 'node:crypto';
import { canReceiveEmailCodes } from '../../mfa/email.js';
import { factorEnabled } from '../../mfa/policy.js';
import type { MfaEnrollment } from '../../store/mfa-enrollments.js';
import type { Tenant } from '../../store/tenants.js';
import type { User } from '../../store/users.js';

export interface ApiAuthenticator {
  id: string;
  authenticator_type: 'otp' | 'oob' | 'recovery-code';
  active: boolean;
  oob_channel?: 'email';
  name?: string;
}

export interface UserFactors {
  /** The TOTP enrollment, confirmed or pending. */
  totp: MfaEnrollment | undefined;
  recoveryCode: MfaEnrollment | undefined;
  /** A confirmed factor one enrolls (TOTP, or a WebAuthn factor the tenant enables). */
  enrolled: boolean;
  /** Whether codes by email may answer for this user. */
  email: boolean;
}

export function emailAuthenticatorId(user: Pick<User, 'user_id'>): string {
  return `email|dev_${createHash('sha256').update(`mfa-email:${user.user_id}`).digest('base64url').slice(0, 16)}`;
}

/** The TOTP enrollment: the confirmed one, else a pending one (which its first code confirms). */
export function totpEnrollment(enrollments: MfaEnrollment[]): MfaEnrollment | undefined {
  return enrollments.find((e) => e.type === 'totp' && e.confirmed) ?? enrollments.find((e) => e.type === 'totp');
}

/** Whether the user has a confirmed factor one enrolls: TOTP, or a WebAuthn factor the tenant enables. */
export function hasEnrolledFactor(tenant: Tenant, enrollments: MfaEnrollment[]): boolean {
  return enrollments.some((e) => e.confirmed && (e.type === 'totp' || ((e.type === 'webauthn-roaming' || e.type === 'webauthn-platform') && factorEnabled(tenant, e.type))));
}

export function userFactors(tenant: Tenant, user: User, enrollments: MfaEnrollment[]): UserFactors {
  const totp = totpEnrollment(enrollments);
  const enrolled = hasEnrolledFactor(tenant, enrollments);
  return {
    totp,
    recoveryCode: enrollments.find((e) => e.type === 'recovery-code'),
    enrolled,
    email: enrolled && factorEnabled(tenant, 'email') && canReceiveEmailCodes(user),
  };
}

/** a•••@example.com: enough to recognise one's address, not to learn it. */
function maskedAddress(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}\u2022\u2022\u2022${email.slice(at)}`;
}

export function apiAuthenticators(user: User, factors: UserFactors): ApiAuthenticator[] {
  const list: ApiAuthenticator[] = [];
  if (factors.totp) list.push({ id: factors.totp.id, authenticator_type: 'otp', active: factors.totp.confirmed });
  if (factors.email) list.push({ id: emailAuthenticatorId(user), authenticator_type: 'oob', active: true, oob_channel: 'email', name: maskedAddress(user.email!) });
  if (factors.recoveryCode && factors.enrolled) list.push({ id: factors.recoveryCode.id, authenticator_type: 'recovery-code', active: true });
  return list;
}
