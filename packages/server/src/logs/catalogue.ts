/**
 * The tenant log event types Gatehouse writes, with the reference's codes and descriptions ("Log Event Type
 * Codes"). A code names an outcome, not an endpoint: a wrong password is `fp` whichever door it came through.
 * Only codes some flow writes are listed; `q=type:<code>` accepts any string, as the reference does.
 */
export const LOG_EVENT_TYPES = {
  s: 'Success Login',
  f: 'Failed Login',
  fp: 'Failed Login (Incorrect Password)',
  fu: 'Failed Login (Invalid Email/Username)',
  ss: 'Success Signup',
  fs: 'Failed Signup',
  slo: 'Success Logout',
  flo: 'Failed Logout',
  scoa: 'Success cross-origin authentication',
  fcoa: 'Failed cross-origin authentication',
  seacft: 'Success Exchange (Authorization Code for Access Token)',
  feacft: 'Failed Exchange (Authorization Code for Access Token)',
  sepft: 'Success Exchange (Password for Access Token)',
  fepft: 'Failed Exchange (Password for Access Token)',
  seccft: 'Success Exchange (Client Credentials for Access Token)',
  feccft: 'Failed Exchange (Client Credentials for Access Token)',
  sertft: 'Success Exchange (Refresh Token for Access Token)',
  fertft: 'Failed Exchange (Refresh Token for Access Token)',
  srrt: 'Successfully revoked a Refresh Token',
  sapi: 'Success API Operation',
  fapi: 'Failed API Operation',
  limit_wc: 'Blocked Account',
  limit_mu: 'Blocked IP Address',
  api_limit: 'Rate Limit on the Authentication or Management APIs',
  pwd_leak: 'Breached password',
  signup_pwd_leak: 'Breached password on signup',
  scp: 'Success Change Password',
  fcp: 'Failed Change Password',
  scpr: 'Success Change Password Request',
  fcpr: 'Failed Change Password Request',
  sv: 'Success Verification Email',
  fv: 'Failed Verification Email',
  du: 'Deleted User',
  sd: 'Success Delegation',
  fd: 'Failed Delegation',
  cls: 'Code/Link Sent',
  cs: 'Code Sent',
  seotpft: 'Success Exchange (Password and OTP Challenge for Access Token)',
  feotpft: 'Failed Exchange (Password and OTP Challenge for Access Token)',
  seoobft: 'Success Exchange (Password and OOB Challenge for Access Token)',
  feoobft: 'Failed Exchange (Password and OOB Challenge for Access Token)',
  sercft: 'Success Exchange (Password and MFA Recovery code for Access Token)',
  fercft: 'Failed Exchange (Password and MFA Recovery code for Access Token)',
  // Guardian (MFA), as the reference's "Tracking your users' MFA events" names them.
  gd_start_enroll: 'Second factor enrollment started',
  gd_enrollment_complete: 'Second factor enrollment complete',
  gd_auth_succeed: 'Second factor authentication succeeded',
  gd_auth_failed: 'Second factor authentication failed',
  gd_recovery_succeed: 'Recovery code accepted',
  gd_recovery_failed: 'Recovery code refused',
  gd_otp_rate_limit_exceed: 'Too many failed second factor answers: MFA is locked for the user',
  gd_recovery_rate_limit_exceed: 'Too many failed recovery codes: MFA is locked for the user',
  gd_unenroll: 'Second factor removed',
} as const;

export type LogEventType = keyof typeof LOG_EVENT_TYPES;

/** `strategy_type` of the connection strategies this server has, as the reference names them. */
export function strategyType(strategy: string): string {
  if (strategy === 'auth0') return 'database';
  if (strategy === 'email' || strategy === 'sms') return 'passwordless';
  if (['oauth2', 'google-oauth2', 'github', 'windowslive', 'facebook', 'linkedin'].includes(strategy)) return 'social';
  return 'enterprise';
}
