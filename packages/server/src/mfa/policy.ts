/**
 * The tenant's MFA policy, kept in its settings document (TenantSettings.mfa) and written through the
 * Management API's Guardian routes:
 *  - `policies`: [] (never) or ["all-applications"] (every login of every application);
 *  - `factors`: which Guardian factors are enabled; only `otp` and `recovery-code` can be here.
 * MFA is required when the policy says all-applications and `otp` is enabled: a recovery code alone cannot be
 * a person's first second factor, so with `otp` off there is nothing to enroll and the policy has no effect
 * (the reference prompts for no factor when none is enabled either).
 */
import type { Tenant } from '../store/tenants.js';
import type { GuardianFactorName } from './factor.js';

export const MFA_POLICIES = ['all-applications'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

export const SUPPORTED_FACTORS: readonly GuardianFactorName[] = ['otp', 'recovery-code'];

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
  return mfaPolicies(tenant).includes('all-applications') && factorEnabled(tenant, 'otp');
}
