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
  /** The Guardian settings (GET/PUT /api/v2/guardian/settings): remember this browser. */
  remember?: Partial<RememberBrowserSettings>;
}

export function mfaPolicies(tenant: Tenant): MfaPolicy[] {
  return tenant.settings.mfa?.policies ?? [];
}

export function factorEnabled(tenant: Tenant, name: GuardianFactorName): boolean {
  return SUPPORTED_FACTORS.includes(name) && tenant.settings.mfa?.factors?.[name] === true;
}

/** Whether a second factor can be asked for at all: a factor one can enroll is enabled. */
export function mfaAvailable(tenant: Tenant): boolean {
  return ENROLLABLE_FACTORS.some((name) => factorEnabled(tenant, name));
}

export function mfaRequired(tenant: Tenant): boolean {
  return mfaPolicies(tenant).includes('all-applications') && mfaAvailable(tenant);
}

/** The `acr` value an application asks for (`acr_values`) to have the second factor now: step-up. */
export const MULTI_FACTOR_ACR = 'http://schemas.openid.net/pape/policies/2007/06/multi-factor';

/**
 * Whether this login owes a second factor: the tenant's policy, or the application's step-up request. A step-up
 * on a tenant with no factor one can enroll cannot be met; the login goes on without it, and the ID token then
 * has no `acr`, which is how the application learns it (as OIDC Core §3.1.2.1 leaves acr_values voluntary).
 */
export function secondFactorOwed(tenant: Tenant, acrValues: readonly string[] | undefined): boolean {
  return mfaRequired(tenant) || (stepUpRequested(acrValues) && mfaAvailable(tenant));
}

export function stepUpRequested(acrValues: readonly string[] | undefined): boolean {
  return acrValues?.includes(MULTI_FACTOR_ACR) ?? false;
}

/** The ID token's `acr` for a session's `amr`: multi-factor once a second factor was given, else none. */
export function acrOf(amr: readonly string[]): string | undefined {
  return amr.includes('mfa') ? MULTI_FACTOR_ACR : undefined;
}

/**
 * The Guardian settings, in the reference's names and units (seconds). A remembered browser is asked for no
 * second factor by the tenant's policy until `mfa_session_overall_timeout` after it was remembered, or after
 * `mfa_session_inactivity_timeout` without a login from it; never instead of a step-up (mfa/remember-browser.ts).
 */
export interface RememberBrowserSettings {
  /** Whether the MFA pages offer "Remember this browser". */
  display_remember_me_checkbox: boolean;
  /** Whether that checkbox starts ticked. */
  remember_me_default_value: boolean;
  mfa_session_inactivity_timeout: number;
  mfa_session_overall_timeout: number;
}

export const REMEMBER_DEFAULTS: RememberBrowserSettings = {
  display_remember_me_checkbox: true,
  remember_me_default_value: false,
  mfa_session_inactivity_timeout: 7 * 86_400,
  mfa_session_overall_timeout: 30 * 86_400,
};

export function rememberBrowserSettings(tenant: Tenant): RememberBrowserSettings {
  return { ...REMEMBER_DEFAULTS, ...tenant.settings.mfa?.remember };
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
