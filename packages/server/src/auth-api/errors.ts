/** OAuth 2.0 errors (RFC 6749 §5.2 and the reference's codes), thrown by checks and rendered centrally. */
import { ProtocolError } from '../http/errors.js';

/** 401 with no hint which part failed: unknown client, wrong secret, bad assertion all look the same. */
export class InvalidClient extends ProtocolError {
  constructor(basic = false) {
    super(401, 'invalid_client', 'Client authentication failed', basic ? { 'www-authenticate': 'Basic realm="token"' } : {});
  }
}

export class UnsupportedGrantType extends ProtocolError {
  constructor(grantType: string) {
    super(400, 'unsupported_grant_type', `Unsupported grant type: ${grantType}`);
  }
}

export class UnauthorizedClient extends ProtocolError {
  constructor(description: string) {
    super(403, 'unauthorized_client', description);
  }
}

export class AccessDenied extends ProtocolError {
  constructor(description: string) {
    super(403, 'access_denied', description);
  }
}

export class InvalidScope extends ProtocolError {
  constructor(description: string) {
    super(400, 'invalid_scope', description);
  }
}
