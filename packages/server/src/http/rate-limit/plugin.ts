/**
 * Applies `config.rateLimit` of each route: one token per request from the bucket
 * `<tenant>:<bucket>:<key>`, the three X-RateLimit-* headers on every response of such a route, and past the
 * limit a 429 in the route family's shape, with Retry-After.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequests } from '../errors.js';
import { DEFAULT_LIMITS, type RateLimitRule } from './buckets.js';
import type { RateLimitStore } from './store.js';
import type { BucketLimit, TakeResult } from './token-bucket.js';

function bucketOf(rule: RateLimitRule, request: FastifyRequest): { key: string; limit: BucketLimit } {
  const override = request.tenant.settings.rate_limits?.[rule.bucket];
  const limit: BucketLimit = override ? { capacity: override.capacity, perSecond: override.per_second } : DEFAULT_LIMITS[rule.bucket];
  return { key: `${request.tenant.id}:${rule.bucket}:${rule.key ? rule.key(request) : request.ip}`, limit };
}

/** Sets the headers of a taken token, or throws the 429. */
function answer(result: TakeResult, reply: FastifyReply): void {
  const headers = {
    'x-ratelimit-limit': String(result.limit),
    'x-ratelimit-remaining': String(result.remaining),
    'x-ratelimit-reset': String(result.resetAt),
  };
  if (!result.allowed) throw new TooManyRequests({ ...headers, 'retry-after': String(result.retryAfter) });
  reply.headers(headers);
}

/** Takes one token for `rule`; sets the headers, or throws the 429. */
export async function consumeRateLimit(store: RateLimitStore, rule: RateLimitRule, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { key, limit } = bucketOf(rule, request);
  let result;
  try {
    result = await store.take(key, limit);
  } catch (err) {
    // A shared counter store that is down must not take the service down with it: fail open, loudly.
    request.log.warn({ err, bucket: rule.bucket }, 'rate-limit store unavailable; request not counted');
    return;
  }
  answer(result, reply);
}

export function registerRateLimit(app: FastifyInstance, store: RateLimitStore): void {
  // A callback hook, and no promise at all with the in-memory store: this runs on every rate-limited request.
  app.addHook('onRequest', (request, reply, done) => {
    const rule = request.routeOptions.config.rateLimit;
    if (!rule || rule.afterAuthentication || !request.tenant) {
      done();
      return;
    }
    if (!store.takeNow) {
      consumeRateLimit(store, rule, request, reply).then(() => done(), done);
      return;
    }
    const { key, limit } = bucketOf(rule, request);
    try {
      answer(store.takeNow(key, limit), reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
}
