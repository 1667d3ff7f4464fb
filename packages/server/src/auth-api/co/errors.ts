/**
 * The answers of POST /co/authenticate (the contract's error table), beside the shared OAuth errors. Rendered
 * centrally like every ProtocolError, as `{error, error_description}`.
 */
import { ProtocolError } from '../../http/errors.js';

/** 401: the client does not exist or does not allow cross-origin authentication. */
export class CrossOriginLoginNotAllowed extends ProtocolError {
  constructor(description = 'Cross origin login not allowed.') {
    super(401, 'unauthorized_client', description);
  }
}

export class UnsupportedCredentialType extends ProtocolError {
  constructor(credentialType: string) {
    super(400, 'unsupported_credential_type', `Unknown credential type parameter: ${credentialType.slice(0, 100)}`);
  }
}

export class BlockedUser extends ProtocolError {
  constructor() {
    super(403, 'blocked_user', 'user is blocked');
  }
}

export class PasswordLeaked extends ProtocolError {
  constructor() {
    super(
      401,
      'password_leaked',
      'This login attempt has been blocked because the password you are using was previously disclosed through a data breach (not in this application). Reset your password to log in.',
    );
  }
}

/** 429 in two cases: the identifier is locked from this IP (brute force), or the IP is throttled as suspicious. */
export class TooManyAttempts extends ProtocolError {
  constructor(reason: 'brute_force' | 'suspicious_ip') {
    super(
      429,
      'too_many_attempts',
      reason === 'brute_force'
        ? 'Your account has been blocked after multiple consecutive login attempts. We have sent you an email with instructions on how to unblock it.'
        : 'We have detected suspicious login behavior and further attempts will be blocked. Please contact the administrator.',
    );
  }
}
