/**
 * CORS, declared per route in `config.cors`; routes without it send no CORS headers at all.
 *  - `{ kind: 'public' }`: any origin, no credentials (discovery, JWKS).
 *  - `{ kind: 'origins', credentials, isAllowed }`: the exact request origin is echoed only when `isAllowed`
 *    says so (later endpoints check a client's allowed origins), with `Vary: Origin`.
 * Headers are set in onRequest, so error responses carry them too and the browser can read the error.
 * Preflights (OPTIONS) find the policy of the route they ask about through the route index.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteIndex } from './route-index.js';

export type CorsPolicy =
  | { kind: 'public' }
  | {
      kind: 'origins';
      credentials: boolean;
      isAllowed: (request: FastifyRequest, origin: string) => Promise<boolean> | boolean;
    };

const PREFLIGHT_MAX_AGE = '600';
const ALLOWED_REQUEST_HEADERS = 'Authorization, Content-Type, Auth0-Client, X-Request-Id, X-Request-Language';

/** Sets the headers; true when the origin is allowed. Synchronous unless the policy's check is asynchronous. */
function applyPolicy(policy: CorsPolicy, request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> {
  const origin = request.headers.origin;
  if (policy.kind === 'public') {
    reply.header('access-control-allow-origin', '*');
    return true;
  }
  reply.header('vary', 'Origin');
  if (!origin) return false;
  const allow = (allowed: boolean): boolean => {
    if (!allowed) return false;
    reply.header('access-control-allow-origin', origin);
    if (policy.credentials) reply.header('access-control-allow-credentials', 'true');
    return true;
  };
  const allowed = policy.isAllowed(request, origin);
  return typeof allowed === 'boolean' ? allow(allowed) : allowed.then(allow);
}

export function registerCors(app: FastifyInstance, routes: RouteIndex): void {
  // A callback hook: most requests (no Origin, or a public route) need no promise at all.
  app.addHook('onRequest', (request, reply, done) => {
    const policy = request.routeOptions.config.cors;
    const applied = policy && request.method !== 'OPTIONS' ? applyPolicy(policy, request, reply) : undefined;
    if (applied instanceof Promise) applied.then(() => done(), done);
    else done();
  });

  app.options('/*', { schema: { hide: true } }, async (request, reply) => {
    const method = request.headers['access-control-request-method'];
    const allowed = routes.allowedMethods(request.url);
    const policy = typeof method === 'string' ? routes.configOf(method, request.url)?.cors : undefined;
    if (allowed.length === 0) return reply.callNotFound();
    reply.header('allow', [...allowed, 'OPTIONS'].join(', '));
    if (policy && (await applyPolicy(policy, request, reply))) {
      reply.header('access-control-allow-methods', allowed.join(', '));
      reply.header('access-control-allow-headers', ALLOWED_REQUEST_HEADERS);
      reply.header('access-control-max-age', PREFLIGHT_MAX_AGE);
    }
    return reply.code(204).send();
  });
}
