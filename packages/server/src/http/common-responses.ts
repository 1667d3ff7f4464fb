/**
 * The responses every route of a family can give whatever it does, added to each route's `schema.response` as
 * the route is registered, next to what the route declares itself (http/responses.ts):
 *  - 400 in the family's shape: malformed input (a NUL character, a bad URL, a value its schema refuses);
 *  - 404 when no tenant is served at the Host (every route that is not `tenantless`);
 *  - 413 and 415 on methods that carry a body (over 1 MB; a content type other than JSON or form);
 *  - 429 with `Retry-After` on rate-limited routes, whose every success also carries the `X-RateLimit-*` headers;
 *  - 401 (with `WWW-Authenticate`) and 403 on Management API operations (management/authenticate.ts).
 * A status both declare gets both descriptions and both media types (a hosted page's 400 is its HTML error page,
 * or JSON when the request never reached the page).
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { familyOf } from './errors.js';
import { ERROR_BODY_SCHEMAS, errorResponses, mergeResponse, RATE_LIMIT_HEADERS, RETRY_AFTER, unauthorized, type ErrorSpec, type ResponseSpec } from './responses.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const MERGED = Symbol('common responses added');

type Responses = Record<string, ResponseSpec>;

function commonErrors(route: RouteOptions): Record<number, ErrorSpec> {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const config = route.config ?? {};
  const errors: Record<number, ErrorSpec> = {
    400: 'Malformed input: a parameter, query or body that its schema refuses, a NUL character, or a malformed URL',
  };
  if (!config.tenantless) errors[404] = 'No tenant is served at this Host';
  if (methods.some((m) => BODY_METHODS.has(m))) {
    errors[413] = 'The body is larger than 1 MB';
    errors[415] = 'The body is neither application/json nor application/x-www-form-urlencoded';
  }
  if (config.scopes) {
    errors[401] = unauthorized('No, a malformed, an expired or a foreign bearer token, or its client no longer exists', 'Bearer realm="api", error="…"');
    errors[403] = `The token has none of the scopes this operation accepts (any one of: ${config.scopes.join(', ')})`;
  }
  if (config.rateLimit) {
    errors[429] = {
      description: `Too many requests (rate-limit bucket \`${config.rateLimit.bucket}\`)`,
      headers: { ...RETRY_AFTER, ...RATE_LIMIT_HEADERS },
    };
  }
  return errors;
}

const SUCCESS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted' };

/**
 * The route's own responses with the common ones merged in. A success given as a bare schema (`200: RoleBody`)
 * keeps it, with a description; successes of rate-limited routes get the X-RateLimit-* headers.
 */
export function withCommonResponses(route: RouteOptions): Responses {
  const own = ((route.schema as { response?: Responses } | undefined)?.response ?? {}) as Responses;
  const family = familyOf(route.url ?? '/');
  const merged: Responses = {};
  for (const [status, spec] of Object.entries(own)) merged[status] = spec.description ? spec : { ...spec, description: SUCCESS[status] ?? 'OK' };
  for (const [status, spec] of Object.entries(errorResponses(family, commonErrors(route)) as unknown as Responses)) {
    merged[status] = merged[status] ? mergeResponse(merged[status], spec) : spec;
  }
  if (route.config?.rateLimit) {
    for (const [status, spec] of Object.entries(merged)) {
      if (/^[23]/.test(status)) merged[status] = { ...spec, headers: { ...RATE_LIMIT_HEADERS, ...spec.headers } };
    }
  }
  return merged;
}

export function registerCommonResponses(app: FastifyInstance): void {
  for (const schema of ERROR_BODY_SCHEMAS) app.addSchema(schema);
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as Record<string | symbol, unknown>;
    // Fastify derives the HEAD route from the GET route's options, which already have them.
    if (schema[MERGED] || schema.hide) return;
    route.schema = { ...schema, response: withCommonResponses(route), [MERGED]: true } as typeof route.schema;
  });
}
