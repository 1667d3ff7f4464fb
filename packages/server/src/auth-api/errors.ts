/** OAuth 2.0 errors (RFC 6749 §5.2 and the reference's codes), thrown by checks and rendered centrally. */
import { ProtocolError } from '../http/errors.js';

/** 401 with no hint which part failed: unknown client, wrong secret, bad assertion all look the same. */
export class InvalidClient extends ProtocolError {
  constructor(basic = false) {
    super(401, 'invalid_client', 'Client authentication failed', basic ? { 'www-authenticate': 'Basic realm="token"' } : {});
  }
}

/** How the endpoints that authenticate clients document it (401 from client-auth/, the blocked-user and breached-password answers). */
export const CLIENT_AUTHENTICATION_ERRORS = {
  401: {
    description:
      'invalid_client (an unknown client, a wrong secret, a bad assertion); password grants: unauthorized (a blocked user) or password_leaked',
    headers: { 'WWW-Authenticate': { type: 'string' as const, description: 'Basic realm="token", when the client authenticated with HTTP Basic', required: false } },
  },
};

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

/** /authorize: the response type is not one this server or this client supports (RFC 6749 §4.1.2.1). */
export class UnsupportedResponseType extends ProtocolError {
  constructor(description: string) {
    super(400, 'unsupported_response_type', description);
  }
}

/** Silent authentication (`prompt=none`) could not answer without showing a page (OIDC Core §3.1.2.6). */
export class LoginRequired extends ProtocolError {
  constructor(description = 'Login required') {
    super(400, 'login_required', description);
  }
}

export class ConsentRequired extends ProtocolError {
  constructor(description = 'Consent required') {
    super(400, 'consent_required', description);
  }
}

export class InteractionRequired extends ProtocolError {
  constructor(description = 'Interaction required') {
    super(400, 'interaction_required', description);
  }
}

/** RFC 9101 §6.2 / RFC 9126 §4: the request_uri is unknown, expired, already used or another client's. */
export class InvalidRequestUri extends ProtocolError {
  constructor(description = 'request_uri is invalid, expired, or was already used') {
    super(400, 'invalid_request_uri', description);
  }
}

/** RFC 9101 §6.2: the request object is unsigned, badly signed, or its claims are wrong. */
export class InvalidRequestObject extends ProtocolError {
  constructor(description: string) {
    super(400, 'invalid_request_object', description);
  }
}
