/** The MFA API's grant types (the grants are auth-api/token/mfa-*.ts). */
export const MFA_OTP_GRANT = 'http://auth0.com/oauth/grant-type/mfa-otp';
export const MFA_OOB_GRANT = 'http://auth0.com/oauth/grant-type/mfa-oob';
export const MFA_RECOVERY_CODE_GRANT = 'http://auth0.com/oauth/grant-type/mfa-recovery-code';
export const MFA_GRANTS = [MFA_OTP_GRANT, MFA_OOB_GRANT, MFA_RECOVERY_CODE_GRANT] as const;
