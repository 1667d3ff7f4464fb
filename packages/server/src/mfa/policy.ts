/**
 * The tenant's MFA policy, kept in its settings document (TenantSettings.mfa) and written through the
 * Management API's Guardian routes:
 *  - `policies`: [] (never) or ["all-applications"] (every login of every application);
 *  - `factors`: which Guardian factors are enabled: `otp`, `webauthn-roaming` (security keys),
 *    `webauthn-platform` (this device's authenticator), `recovery-code`, and `email` (codes by email, only
 *    ever another way at the challenge for a verified address, never the factor one enrolls: mfa/email.ts).
 * MFA is required when the policy says all-applications and a factor one can enroll is enabled (otp or a
 * WebAuthn one): a recovery code alone cannot be a person's first second factor, so with those off there is
 * nothing to enroll and the policy has no effect (the reference prompts for no factor when none is enabled).
 *
 * Passkeys as a first factor are switched per database connection, under the reference's names:
 * `options.authentication_methods.passkey.enabled`, and `options.passkey_options.progressive_enrollment_enabled`
 * (default on) for offering a passkey after a password login. A passkey login (user verification required)
 * satisfies the MFA policy: it is possession and knowledge or inherence in one.
 */
import type { Connection } from '../store/connections.js';
import type { Tenant } from '../store/tenants.js';
import type { GuardianFactorName } from './factor.js';

export const MFA_POLICIES = ['all-applications'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

export const SUPPORTED_FACTORS: readonly GuardianFactorName[] = ['email', 'otp', 'webauthn-roaming', 'webauthn-platform', 'recovery-code'];
/** The factors a person can enroll as their (first) second factor. */
export const ENROLLABLE_FACTORS = ['otp', 'webauthn-roaming', 'webauthn-platform'] as const satisfies readonly GuardianFactorName[];

export interface MfaSettings {
  policies?: MfaPolicy[];
  factors?: Partial<Record<GuardianFactorName, boolean>>;
}

export function mfaPolicies(tenant: Tenant): MfaPolicy[] {
  return tenant.settings.mfa?.policies ?? [];
}

export function factorEnabled(tenant: Tenant, name: GuardianFactorName): boolean {
  return SUPPORTED_FACTORS.includes(name) && tenant.settings.mfa?.factors?.[name] === true;
}

export function mfaRequired(tenant: Tenant): boolean {
  return mfaPolicies(tenant).includes('all-applications') && ENROLLABLE_FACTORS.some((name) => factorEnabled(tenant, name));
}

interface PasskeyConnectionOptions {
  authentication_methods?: { passkey?: { enabled?: boolean } };
  passkey_options?: { progressive_enrollment_enabled?: boolean };
}

export function passkeysEnabled(connection: Connection): boolean {
  return (connection.options as PasskeyConnectionOptions).authentication_methods?.passkey?.enabled === true;
}

/** Whether a person who logged in with a password and has no passkey is offered to create one. */
export function passkeyProgressiveEnrollment(connection: Connection): boolean {
  return passkeysEnabled(connection) && (connection.options as PasskeyConnectionOptions).passkey_options?.progressive_enrollment_enabled !== false;
}
