/**
 * Every failed login outcome maps to its row of the contract's /co/authenticate table (status, code), including
 * the two too_many_attempts cases, which differ only in their description.
 */
import { describe, expect, it } from 'vitest';
import { renderError } from '../../http/error-render.js';
import { otpLoginError, passwordLoginError } from './credentials.js';

describe('/co/authenticate outcome mapping', () => {
  it('maps each PasswordLogin failure to the table', () => {
    const rows = [
      [passwordLoginError({ outcome: 'wrong_credentials' }), 403, 'access_denied'],
      [passwordLoginError({ outcome: 'blocked', userId: 'auth0|1' }), 403, 'blocked_user'],
      [passwordLoginError({ outcome: 'password_leaked' }), 401, 'password_leaked'],
      [passwordLoginError({ outcome: 'too_many_attempts', reason: 'brute_force' }), 429, 'too_many_attempts'],
      [passwordLoginError({ outcome: 'too_many_attempts', reason: 'suspicious_ip' }), 429, 'too_many_attempts'],
    ] as const;
    for (const [error, status, code] of rows) {
      expect([error.statusCode, error.code]).toEqual([status, code]);
      expect(Object.keys(renderError('oauth', error)).sort()).toEqual(['error', 'error_description']);
    }
    const bruteForce = passwordLoginError({ outcome: 'too_many_attempts', reason: 'brute_force' });
    const suspicious = passwordLoginError({ outcome: 'too_many_attempts', reason: 'suspicious_ip' });
    expect(bruteForce.description).toMatch(/email with instructions/);
    expect(suspicious.description).toMatch(/suspicious login behavior/);
  });

  it('maps each passwordless OTP failure to the table', () => {
    expect(otpLoginError({ outcome: 'wrong_code' }, 'email')).toMatchObject({ statusCode: 403, code: 'access_denied', description: 'Wrong email or verification code.' });
    expect(otpLoginError({ outcome: 'wrong_code' }, 'sms')).toMatchObject({ statusCode: 403, code: 'access_denied', description: 'Wrong phone number or verification code.' });
    expect(otpLoginError({ outcome: 'expired' }, 'sms')).toMatchObject({ statusCode: 403, code: 'access_denied' });
    expect(otpLoginError({ outcome: 'blocked' }, 'email')).toMatchObject({ statusCode: 403, code: 'blocked_user' });
    expect(otpLoginError({ outcome: 'signup_disabled' }, 'email')).toMatchObject({ statusCode: 403, code: 'access_denied' });
  });
});
