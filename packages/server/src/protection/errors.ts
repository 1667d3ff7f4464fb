/**
 * The OAuth-family answers of attack protection (the contract's /co/authenticate table; the password grants use
 * the same): 429 too_many_attempts for a brute-force block or a throttled IP, 401 password_leaked.
 */
import { ProtocolError } from '../http/errors.js';
import type { LoginRefusal } from './attack-protection.js';

const TOO_MANY_ATTEMPTS: Record<LoginRefusal, string> = {
  brute_force: 'Your account has been blocked after multiple consecutive login attempts. We\u2019ve sent you an email with instructions on how to unblock it.',
  suspicious_ip: 'We have detected suspicious login behavior and further attempts will be blocked. Please contact the administrator.',
};

export class TooManyAttempts extends ProtocolError {
  constructor(readonly reason: LoginRefusal) {
    super(429, 'too_many_attempts', TOO_MANY_ATTEMPTS[reason]);
  }
}

export class PasswordLeaked extends ProtocolError {
  constructor() {
    super(401, 'password_leaked', 'This login attempt has been blocked because the password you\u2019re using was previously disclosed through a data breach (not in this application).');
  }
}
