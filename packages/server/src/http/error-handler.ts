/**
 * The one place errors become responses. Checks throw ProtocolErrors; Fastify's own errors (bad JSON, wrong
 * content type, body too large, schema validation) are translated here; anything else is a 500 whose details go
 * to the log only. The body always has the shape of the request's family.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderErrorFor } from './error-render.js';
import {
  InvalidInput,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ProtocolError,
  ServerError,
  UnsupportedMediaType,
  type RequestPart,
} from './errors.js';
import type { RouteIndex } from './route-index.js';
import { validationMessage } from './validation-message.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const ACCEPTED_CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded'] as const;

function isFastifyError(err: unknown): err is FastifyError {
  return err instanceof Error && typeof (err as FastifyError).code === 'string';
}

/** PostgreSQL "data exception" errors (class 22: NUL bytes, invalid text) are bad input that got past the schemas. */
function isPostgresDataException(err: unknown): boolean {
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && typeof severity === 'string';
}

function toProtocolError(err: unknown, request: FastifyRequest): ProtocolError {
  const contentType = request.headers['content-type'];
  if (err instanceof ProtocolError) return err;
  if (isPostgresDataException(err)) return new InvalidInput('body', 'A value contains characters that cannot be stored (such as NUL)');
  if (!isFastifyError(err)) return new ServerError();
  if (err.validation) {
    const part = (err.validationContext ?? 'body') as RequestPart;
    return new InvalidInput(part, validationMessage(err.validation, part, request, err.message));
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLarge(BODY_LIMIT_BYTES);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaType(contentType, ACCEPTED_CONTENT_TYPES);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidInput('body', 'The body is empty but the content type says JSON');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidInput('body', 'The body is not valid JSON');
    case 'FST_ERR_BAD_URL':
      return new InvalidInput('params', 'The request URL is malformed');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new InvalidInput('params', 'A path parameter is too long');
  }
  // Body parsers raise SyntaxError-based errors with a 400 status for malformed JSON.
  if (err.statusCode === 400 && err instanceof SyntaxError) return new InvalidInput('body', 'The body is not valid JSON');
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new InvalidRequest(err.message);
  return new ServerError();
}

/** Sends any error as its family's body. Also used for the router's own errors (see app.ts frameworkErrors). */
export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const protocolError = toProtocolError(err, request);
  if (protocolError.statusCode >= 500) request.log.error({ err }, 'request failed');
  return reply
    .code(protocolError.statusCode)
    .headers(protocolError.headers)
    .type('application/json; charset=utf-8')
    .send(renderErrorFor(request.url, protocolError));
}

/** What a request no route serves is told: 405 with Allow when the path has other methods, else 404. */
export function routeMiss(routes: RouteIndex, method: string, url: string): ProtocolError {
  const path = url.split('?')[0] || '/';
  let allowed: string[];
  try {
    allowed = routes.allowedMethods(path);
  } catch {
    allowed = [];
  }
  if (allowed.length > 0) return new MethodNotAllowed(method, allowed);
  return new NotFound(`No route for ${method} ${path.slice(0, 300)}`);
}

/**
 * Errors Fastify raises while reading the body of a request it has already sent to the not-found handler
 * (a QUERY without a content type, a POST in text/plain to a path with no POST): the request has no route, so
 * that is the answer, not a complaint about its body.
 */
const BODY_READING_ERRORS = new Set([
  'FST_ERR_ROUTE_MISSING_CONTENT_TYPE',
  'FST_ERR_CTP_INVALID_MEDIA_TYPE',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_BODY_TOO_LARGE',
]);

export function registerErrorHandling(app: FastifyInstance, routes: RouteIndex): void {
  app.setErrorHandler((err, request, reply) => {
    const missed = request.is404 && !(err instanceof ProtocolError) && (BODY_READING_ERRORS.has((err as FastifyError).code) || err instanceof SyntaxError);
    return sendError(missed ? routeMiss(routes, request.method, request.url) : err, request, reply);
  });

  app.setNotFoundHandler(async (request) => {
    throw routeMiss(routes, request.method, request.url);
  });
}

/** Form bodies as a flat object. OAuth forbids repeating a parameter (RFC 6749 §3.1), so a repeat is a 400. */
export function parseFormBody(body: string): Record<string, string> {
  const params = new URLSearchParams(body);
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of params) {
    if (key in out) throw new InvalidInput('body', `Parameter ${key} is repeated`);
    out[key] = value;
  }
  return out;
}
