/**
 * Attack-protection settings of a tenant, under the Management API's names (reference C.10), with Auth0's
 * defaults for new tenants. Stored in TenantSettings.attack_protection only once an admin changed them; a
 * tenant that never did gets the defaults below.
 */

export const BRUTE_FORCE_MODES = ['count_per_identifier_and_ip', 'count_per_identifier'] as const;
export const BRUTE_FORCE_SHIELDS = ['block', 'user_notification'] as const;
export const BREACHED_PASSWORD_SHIELDS = ['block', 'user_notification', 'admin_notification'] as const;
export const BREACHED_PASSWORD_STAGE_SHIELDS = ['block', 'admin_notification'] as const;
export const ADMIN_NOTIFICATION_FREQUENCIES = ['immediately', 'daily', 'weekly', 'monthly'] as const;
export const BREACHED_PASSWORD_METHODS = ['standard', 'enhanced'] as const;
export const SUSPICIOUS_IP_SHIELDS = ['block', 'admin_notification'] as const;

export interface BruteForceSettings {
  enabled: boolean;
  shields: (typeof BRUTE_FORCE_SHIELDS)[number][];
  allowlist: string[];
  mode: (typeof BRUTE_FORCE_MODES)[number];
  max_attempts: number;
}

export interface BreachedPasswordSettings {
  enabled: boolean;
  shields: (typeof BREACHED_PASSWORD_SHIELDS)[number][];
  admin_notification_frequency: (typeof ADMIN_NOTIFICATION_FREQUENCIES)[number][];
  method: (typeof BREACHED_PASSWORD_METHODS)[number];
  stage: {
    'pre-user-registration': { shields: (typeof BREACHED_PASSWORD_STAGE_SHIELDS)[number][] };
    'pre-change-password': { shields: (typeof BREACHED_PASSWORD_STAGE_SHIELDS)[number][] };
  };
}

export interface ThrottleStage {
  /** Attempts an IP may make at once (the bucket's size). */
  max_attempts: number;
  /** Milliseconds per attempt given back. */
  rate: number;
}

export interface SuspiciousIpSettings {
  enabled: boolean;
  shields: (typeof SUSPICIOUS_IP_SHIELDS)[number][];
  allowlist: string[];
  stage: {
    'pre-login': ThrottleStage;
    'pre-user-registration': ThrottleStage;
    /** Accepted and kept for tools that round-trip Auth0 exports; Gatehouse has no custom token exchange to throttle. */
    'pre-custom-token-exchange'?: ThrottleStage;
  };
}

/** What TenantSettings.attack_protection holds: each part as last written through the Management API. */
export interface AttackProtectionSettings {
  brute_force_protection?: BruteForceSettings;
  breached_password_detection?: BreachedPasswordSettings;
  suspicious_ip_throttling?: SuspiciousIpSettings;
}

export type EffectiveAttackProtection = Required<AttackProtectionSettings>;

export function defaultBruteForce(): BruteForceSettings {
  return { enabled: true, shields: ['block', 'user_notification'], allowlist: [], mode: 'count_per_identifier_and_ip', max_attempts: 10 };
}

/**
 * Enabled and blocking by default (the reference: "enabled default true in the schema"). The method is `standard`;
 * `enhanced` is accepted and behaves the same, since the corpus is local either way (breached-passwords.ts).
 */
export function defaultBreachedPassword(): BreachedPasswordSettings {
  return {
    enabled: true,
    shields: ['block'],
    admin_notification_frequency: [],
    method: 'standard',
    stage: { 'pre-user-registration': { shields: ['block'] }, 'pre-change-password': { shields: ['block'] } },
  };
}

/** 100 failed logins a day refilled one per 14.4 min; 50 signups refilled one per 28.8 min (C.10). */
export function defaultSuspiciousIp(): SuspiciousIpSettings {
  return {
    enabled: true,
    shields: ['admin_notification', 'block'],
    allowlist: [],
    stage: { 'pre-login': { max_attempts: 100, rate: 864_000 }, 'pre-user-registration': { max_attempts: 50, rate: 1_728_000 } },
  };
}

export function effectiveSettings(stored: AttackProtectionSettings | undefined): EffectiveAttackProtection {
  return {
    brute_force_protection: stored?.brute_force_protection ?? defaultBruteForce(),
    breached_password_detection: stored?.breached_password_detection ?? defaultBreachedPassword(),
    suspicious_ip_throttling: stored?.suspicious_ip_throttling ?? defaultSuspiciousIp(),
  };
}
