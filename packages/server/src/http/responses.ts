/**
 * What a route answers, declared in its `schema.response`, so that both OpenAPI documents say exactly what it
 * does: the success body, every error in its family's shape, redirects with `Location`, HTML pages, and the
 * headers that go with them. http/openapi.test.ts holds every registered route to its declaration (no status
 * answered that is not declared, bodies valid, headers present).
 *
 *   response: { 201: RoleBody, ...errorResponses('management', { 404: 'The role does not exist', 409: 'Name taken' }) }
 *
 * What every route of a family answers anyway (400 for malformed input, 404 for an unknown tenant, 413 and 415
 * for bodies, 429 where the route is rate limited, 401 and 403 on the Management API) is added by
 * common-responses.ts, so that a route declares only what is its own.
 *
 * Error bodies are sent by http/error-handler.ts with JSON.stringify, never through a response schema, so a
 * declaration here documents an error and cannot change its body.
 */
import { Type, type TSchema, type TUnsafe } from '@fastify/type-provider-typebox';
import type { ErrorFamily } from './errors.js';

/** `{ error, error_description }`: OAuth endpoints and everything outside the two families below. */
export const OAuthError = Type.Object(
  {
    error: Type.String({ description: 'A machine-readable code, e.g. invalid_request' }),
    error_description: Type.String({ description: 'Human-readable; do not parse it' }),
    mfa_token: Type.Optional(Type.String({ description: 'mfa_required from a password grant: the token for the MFA API (/mfa/*, the mfa-* grants), 10 minutes' })),
  },
  { $id: 'OAuthError', additionalProperties: false, title: 'OAuthError' },
);

/** `{ name, code, description, statusCode }` of /dbconnections/*; password policy errors add `message` and `policy`. */
export const DbConnectionsError = Type.Object(
  {
    name: Type.String({ description: 'e.g. BadRequestError, PasswordStrengthError' }),
    code: Type.String({ description: 'A machine-readable code, e.g. invalid_signup, user_exists, invalid_password' }),
    description: Type.Union(
      [
        Type.String(),
        Type.Object(
          { rules: Type.Array(Type.Object({}, { additionalProperties: true })), verified: Type.Boolean() },
          { additionalProperties: false, description: 'PasswordStrengthError: the rules of the policy, each with whether it was met' },
        ),
      ],
      { description: 'Human-readable text, or for a password strength error the rules of the policy' },
    ),
    statusCode: Type.Integer(),
    message: Type.Optional(Type.String({ description: 'Password policy errors only' })),
    policy: Type.Optional(Type.String({ description: 'Password policy errors only: the policy in words' })),
  },
  { $id: 'DbConnectionsError', additionalProperties: false, title: 'DbConnectionsError' },
);

/** `{ statusCode, error, message, errorCode }` of the Management API. */
export const ManagementError = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String({ description: 'The HTTP reason phrase, e.g. Bad Request' }),
    message: Type.String({ description: 'Human-readable; do not parse it' }),
    errorCode: Type.String({ description: 'A machine-readable code, e.g. invalid_body, inexistent_role' }),
  },
  { $id: 'ManagementError', additionalProperties: false, title: 'ManagementError' },
);

/** Registered once with app.addSchema, so that the documents list each error body once, under components. */
export const ERROR_BODY_SCHEMAS = [OAuthError, DbConnectionsError, ManagementError] as const;

const ERROR_BODY_OF: Record<ErrorFamily, string> = {
  oauth: 'OAuthError',
  dbconnections: 'DbConnectionsError',
  management: 'ManagementError',
};

export const SENT_AS_IS = Symbol('sent as is');

/**
 * A success body documented as the handler sends it, serialized with JSON.stringify rather than through this
 * schema (http/serializers.ts), for handlers that build their body themselves: the documents say what is sent,
 * and the conformance test checks every real body against it.
 */
export function asSent<T extends TSchema>(schema: T): T {
  return { ...schema, [SENT_AS_IS]: true };
}

/** A response header as OpenAPI describes it: its value's schema, with `required` when it is always sent. */
export interface HeaderSpec {
  type: 'string' | 'integer';
  description: string;
  required?: boolean;
  format?: string;
}

/** One `schema.response` entry: a description, bodies by media type (none: no body), headers. */
export interface ResponseSpec {
  description: string;
  content?: Record<string, { schema: TSchema | Record<string, unknown> }>;
  headers?: Record<string, HeaderSpec>;
  /** A response without a body (204, redirects); OpenAPI then lists no content. */
  type?: 'null';
}

/**
 * A response entry as the TypeBox type provider sees it. Typed `never`, so that a handler's return type is still
 * checked against its success schema alone: error and empty responses are not something a handler returns.
 */
export type Documented = TUnsafe<never>;

const documented = (spec: ResponseSpec): Documented => Type.Unsafe<never>(spec as unknown as Record<string, unknown>);

export const RATE_LIMIT_HEADERS: Record<string, HeaderSpec> = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests the bucket holds when full', required: true },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the bucket after this one', required: true },
  'X-RateLimit-Reset': { type: 'integer', description: 'When the bucket is full again (Unix epoch seconds)', required: true },
};

export const RETRY_AFTER: Record<string, HeaderSpec> = {
  'Retry-After': { type: 'integer', description: 'Seconds to wait before the next request is allowed', required: true },
};

/** What an error status says by itself: a description and, where it goes with one, a header. */
export type ErrorSpec = string | { description: string; headers?: Record<string, HeaderSpec> };

/** A header is required of the merged response only if both always send it. */
function mergeHeaders(a: ResponseSpec['headers'], b: ResponseSpec['headers']): ResponseSpec['headers'] {
  if (!a && !b) return undefined;
  const merged: NonNullable<ResponseSpec['headers']> = {};
  for (const name of new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])) {
    const [x, y] = [a?.[name], b?.[name]];
    merged[name] = { ...(x ?? y)!, required: Boolean(x?.required && y?.required) };
  }
  return merged;
}

/** One status, two answers: both media types and both descriptions. */
export function mergeResponse(a: ResponseSpec, b: ResponseSpec): ResponseSpec {
  const content = a.content || b.content ? { ...a.content, ...b.content } : undefined;
  const headers = mergeHeaders(a.headers, b.headers);
  return {
    description: a.description === b.description ? a.description : `${a.description}; or: ${b.description}`,
    ...(content && { content }),
    ...(headers && { headers }),
    ...(!content && (a.type === 'null' || b.type === 'null') && { type: 'null' as const }),
  };
}

/** One status that answers in more than one way (e.g. a JSON error or a plain-text refusal). */
export function either(...responses: Documented[]): Documented {
  const specs = responses as unknown as ResponseSpec[];
  return documented(specs.slice(1).reduce(mergeResponse, specs[0]!));
}

/** Error responses of one family, each with the family's body. */
export function errorResponses(family: ErrorFamily, errors: Record<number, ErrorSpec>): Record<number, Documented> {
  return Object.fromEntries(
    Object.entries(errors).map(([status, spec]) => {
      const { description, headers } = typeof spec === 'string' ? { description: spec, headers: undefined } : spec;
      return [status, documented({ description, content: { 'application/json': { schema: { $ref: `${ERROR_BODY_OF[family]}#` } } }, ...(headers && { headers }) })];
    }),
  );
}

/** 401 with the challenge that says how to authenticate (RFC 6750 §3, RFC 7235). */
export function unauthorized(description: string, challenge: string): ErrorSpec {
  return { description, headers: { 'WWW-Authenticate': { type: 'string', description: challenge, required: true } } };
}

/** A server-rendered page (the hosted pages, the error page). */
export function htmlPage(description: string): Documented {
  return documented({ description, content: { 'text/html': { schema: { type: 'string' } } } });
}

/** Plain text, e.g. /dbconnections/change_password's sentence. */
export function textBody(description: string, mediaType = 'text/plain'): Documented {
  return documented({ description, content: { [mediaType]: { schema: { type: 'string' } } } });
}

/** A redirect; `Location` says where to. */
export function redirect(description: string): Documented {
  return documented({
    type: 'null',
    description,
    headers: { Location: { type: 'string', format: 'uri-reference', description: 'Where the browser goes next', required: true } },
  });
}

/** A response without a body (204 No Content, 304 Not Modified, an empty 200). */
export function noContent(description: string): Documented {
  return documented({ type: 'null', description });
}

/**
 * A body the handler sends as it is (a file, a prepared document), never through a serializer: scripts,
 * stylesheets, images, or JSON held as text.
 */
export function fileBody(description: string, mediaTypes: readonly string[], schema: Record<string, unknown> = { type: 'string' }): Documented {
  return documented({ description, content: Object.fromEntries(mediaTypes.map((type) => [type, { schema }])) });
}

/** The response schema of both document routes (/openapi.json, /api/v2/openapi.json). */
export const OPENAPI_DOCUMENT = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
  description: 'An OpenAPI 3.1 document',
};
