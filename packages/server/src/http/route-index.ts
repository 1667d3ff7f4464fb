/**
 * Every route's methods and config by path pattern, so that a miss can say 405 (with Allow) instead of 404,
 * and a CORS preflight can find the policy of the route it is asking about. Fastify's own router answers only
 * "this method on this path", hence this second, read-only router fed by the onRoute hook.
 */
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyContextConfig, FastifyInstance } from 'fastify';

// OPTIONS is left out: the CORS plugin answers it for every path, which would make every miss a 405.
const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface RouteIndex {
  /** Methods with a route on this path. */
  allowedMethods(path: string): string[];
  /** The config of the route that would serve `method` on `path`. */
  configOf(method: string, path: string): FastifyContextConfig | undefined;
}

export function createRouteIndex(app: FastifyInstance): RouteIndex {
  const router = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethod[];
    for (const method of methods) {
      if (!METHODS.includes(method) || router.hasRoute(method, route.url)) continue;
      // The route's options object, read when asked: onRoute hooks of plugins registered later (the Management
      // API's CORS policy) may still replace its config after this hook has run.
      router.on(method, route.url, () => undefined, { route });
    }
  });
  const find = (method: HTTPMethod, path: string) => router.find(method, path.split('?')[0] ?? '/');
  return {
    allowedMethods: (path) => METHODS.filter((m) => find(m, path) !== null),
    configOf: (method, path) => {
      const found = find(method.toUpperCase() as HTTPMethod, path);
      return (found?.store as { route?: { config?: FastifyContextConfig } } | undefined)?.route?.config;
    },
  };
}
