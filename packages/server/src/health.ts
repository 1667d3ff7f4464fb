/**
 * /healthz: the process answers. /readyz: and its database does, and Redis when one is configured (REDIS_URL:
 * rate limits, attack-protection counters and the change bus live there). Neither needs a known Host.
 */
import { Type } from '@fastify/type-provider-typebox';
import { ServiceUnavailable } from './http/errors.js';
import { errorResponses } from './http/responses.js';
import type { App, Services } from './services.js';

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });

export function registerHealth(app: App, { store, rateLimitStore }: Pick<Services, 'store' | 'rateLimitStore'>): void {
  app.get('/healthz', {
    schema: { tags: ['health'], summary: 'The process answers', response: { 200: Status } },
    config: { tenantless: true },
    handler: async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'ok' };
    },
  });
  app.get('/readyz', {
    schema: {
      tags: ['health'],
      summary: 'The process answers, and its database (and Redis, when configured) are reachable',
      response: { 200: Status, ...errorResponses('oauth', { 503: 'temporarily_unavailable: the database, or the configured Redis, is unreachable' }) },
    },
    config: { tenantless: true },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        await store.ping();
      } catch (err) {
        request.log.warn({ err }, 'readiness: database unreachable');
        throw new ServiceUnavailable('The database is unreachable');
      }
      if (rateLimitStore.ping) {
        try {
          await rateLimitStore.ping();
        } catch (err) {
          request.log.warn({ err }, 'readiness: Redis unreachable');
          throw new ServiceUnavailable('Redis is unreachable');
        }
      }
      return { status: 'ready' };
    },
  });
}
