/**
 * OAuth errors of the user grants and the endpoints that take user tokens, beside the shared ones in
 * auth-api/errors.ts: thrown by checks and rendered centrally like every ProtocolError.
 */
import { ProtocolError } from '../../http/errors.js';

/** RFC 6749 §5.2: the code, refresh token or credentials are invalid, expired, revoked or not this client's. */
export class InvalidGrant extends ProtocolError {
  constructor(description: string, statusCode = 400) {
    super(statusCode, 'invalid_grant', description);
  }
}

/** The password grants' answer to any wrong identifier or password, with the reference's wording and status. */
export class WrongCredentials extends InvalidGrant {
  constructor() {
    super('Wrong email or password.', 403);
  }
}

/** The password grants' answer for a blocked user (after the password was verified). */
export class UserBlocked extends ProtocolError {
  constructor() {
    super(401, 'unauthorized', 'user is blocked');
  }
}

/**
 * The reference's `mfa_required` for a grant whose user must give a second factor (the tenant's MFA policy).
 * With an `mfa_token` (the password grants) the client goes on through the MFA API (auth-api/mfa/): /mfa/challenge
 * and the mfa-otp, mfa-oob and mfa-recovery-code grants. A grant that cannot hand one out (the one-time-code
 * grant) says where the second factor can be given instead, rather than issuing tokens on the first factor alone.
 */
export class MfaRequired extends ProtocolError {
  constructor(mfaToken?: string) {
    super(
      403,
      'mfa_required',
      mfaToken === undefined
        ? 'Multifactor authentication required. This grant cannot continue through the MFA API: sign in through /authorize, whose hosted pages ask for the second factor.'
        : 'Multifactor authentication required',
      {},
      mfaToken === undefined ? {} : { mfa_token: mfaToken },
    );
  }
}

/** RFC 6750 §3.1: the bearer token is missing, malformed, expired, revoked or not for this endpoint. */
export class InvalidToken extends ProtocolError {
  constructor(description = 'The access token is invalid') {
    super(401, 'invalid_token', description, { 'www-authenticate': `Bearer error="invalid_token", error_description="${description}"` });
  }
}
