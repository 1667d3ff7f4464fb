/**
 * Errors are protocol objects: a check throws one, and error-handler.ts renders it in the shape of the family
 * the request belongs to (design.md "Error shapes"). The set of codes is closed: add a class here rather than
 * building ad-hoc error bodies in handlers.
 */

/** The three wire families. Which one applies is decided by the request path alone (familyOf). */
export type ErrorFamily = 'oauth' | 'dbconnections' | 'management';

export function familyOf(url: string): ErrorFamily {
  if (url.startsWith('/api/v2/') || url === '/api/v2' || url.startsWith('/api/v2?')) return 'management';
  if (url.startsWith('/dbconnections/')) return 'dbconnections';
  return 'oauth';
}

export class ProtocolError extends Error {
  override name = 'ProtocolError';
  /**
   * @param statusCode HTTP status
   * @param code the machine-readable code (`error` in OAuth, `code` in /dbconnections, `errorCode` in management)
   * @param description human-readable text (`error_description`, `description`, `message`)
   * @param headers response headers that belong to this error (Allow, WWW-Authenticate, rate-limit headers)
   * @param fields further members of the OAuth family's body (the MFA API's `mfa_token` beside `mfa_required`)
   */
  constructor(
    readonly statusCode: number,
    readonly code: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
    readonly fields: Record<string, string> = {},
  ) {
    super(description);
  }
}

export class InvalidRequest extends ProtocolError {
  constructor(description: string, code = 'invalid_request') {
    super(400, code, description);
  }
}

/** Request-shape errors carry the part of the request that failed, for the management family's errorCode. */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

export class InvalidInput extends ProtocolError {
  constructor(
    readonly part: RequestPart,
    description: string,
  ) {
    super(400, 'invalid_request', description);
  }
}

export class NotFound extends ProtocolError {
  constructor(description = 'Not found', code = 'not_found') {
    super(404, code, description);
  }
}

export class MethodNotAllowed extends ProtocolError {
  constructor(method: string, allowed: string[]) {
    super(405, 'method_not_allowed', `Method ${method} is not allowed here; allowed: ${allowed.join(', ')}`, { allow: allowed.join(', ') });
  }
}

export class Conflict extends ProtocolError {
  constructor(description: string, code = 'conflict') {
    super(409, code, description);
  }
}

export class PayloadTooLarge extends ProtocolError {
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `The request body exceeds the limit of ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaType extends ProtocolError {
  constructor(contentType: string | undefined, accepted: readonly string[]) {
    super(
      415,
      'unsupported_media_type',
      `Unsupported content type${contentType ? ` ${contentType.split(';')[0]}` : ''}; send ${accepted.join(' or ')}`,
    );
  }
}

/** Node's parser stopped reading: the request line and headers together exceed its limit (16 KB by default). */
export class HeaderFieldsTooLarge extends ProtocolError {
  constructor() {
    super(431, 'request_header_fields_too_large', 'The request line and headers are too large; send fewer or shorter headers');
  }
}

/** The request did not arrive whole within the server's request timeout. */
export class RequestTimeout extends ProtocolError {
  constructor() {
    super(408, 'request_timeout', 'The request did not arrive in time');
  }
}

export class TooManyRequests extends ProtocolError {
  constructor(headers: Record<string, string>) {
    super(
      429,
      'too_many_requests',
      'Too many requests. Check the X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset headers.',
      headers,
    );
  }
}

export class TenantNotFound extends ProtocolError {
  constructor(host: string) {
    super(404, 'unknown_tenant', `No tenant is served at host ${host || '(none)'}`);
  }
}

export class ServiceUnavailable extends ProtocolError {
  constructor(description: string) {
    super(503, 'temporarily_unavailable', description);
  }
}

/**
 * A feature of the reference this server does not offer: its reads answer the reference's empty shape, and a
 * write is refused with this rather than stored and ignored.
 */
export class NotOffered extends ProtocolError {
  constructor(feature: string, detail: string) {
    super(501, 'not_offered', `${feature} ${detail}`);
  }
}

/** Anything unexpected: the client learns nothing but that it was our fault. */
export class ServerError extends ProtocolError {
  constructor() {
    super(500, 'server_error', 'The server met an unexpected condition');
  }
}
