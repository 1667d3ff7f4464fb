/** What Gatehouse adds to Fastify's request and route config types. */
import type { CorsPolicy } from './http/cors.js';
import type { RateLimitRule } from './http/rate-limit/buckets.js';
import type { ManagementPrincipal } from './management/authenticate.js';
import type { Tenant } from './store/tenants.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered so far, HEAD and OPTIONS included (http/openapi.ts). */
    registeredRoutes(): { method: string; url: string }[];
  }
  interface FastifyContextConfig {
    /** CORS policy of the route; none means no CORS headers. */
    cors?: CorsPolicy;
    /** Rate-limit bucket of the route; none means not rate limited. */
    rateLimit?: RateLimitRule;
    /** Served whatever the Host (health checks): no tenant is resolved. */
    tenantless?: boolean;
    /** Management API: the scopes that allow this operation (any one suffices). */
    scopes?: readonly string[];
  }
  interface FastifyRequest {
    /** The tenant selected by the Host header; set on every route that is not `tenantless`. */
    tenant: Tenant;
    /** Who called the Management API; set on every /api/v2 operation. */
    principal: ManagementPrincipal;
  }
}

export {};
