/**
 * The rate-limit buckets and their default limits. A route names its bucket in `config.rateLimit`; a tenant
 * overrides a bucket's limit in its settings (`rate_limits.<bucket>`). Defaults sit near the reference's paid
 * tiers: generous for a self-hosted service, still a brake on floods.
 */
import type { FastifyRequest } from 'fastify';
import type { BucketLimit } from './token-bucket.js';

export const DEFAULT_LIMITS = {
  /** GET /.well-known/jwks.json, per client IP. */
  jwks: { capacity: 100, perSecond: 20 },
  /** GET /.well-known/openid-configuration and oauth-authorization-server, per client IP. */
  discovery: { capacity: 100, perSecond: 20 },
  /** POST /oauth/token, per client IP (the client is not known before the body is read). */
  token: { capacity: 200, perSecond: 100 },
  /** Every /api/v2 operation, per calling client, counted after authentication. */
  management: { capacity: 100, perSecond: 50 },
  /** GET/POST /userinfo, per client IP; generous, since relying parties call it on every page load. */
  userinfo: { capacity: 500, perSecond: 250 },
  /** GET/POST /authorize and its resume step, per client IP. */
  authorize: { capacity: 300, perSecond: 100 },
  /** Form posts of the hosted pages (log in, sign up, consent), per client IP: each may cost a password hash. */
  login: { capacity: 60, perSecond: 20 },
  /** POST /passwordless/start and /verify, per client IP: each start sends an email or a paid SMS (C.7: 50/hour). */
  passwordless: { capacity: 50, perSecond: 0.5 },
  /** POST /dbconnections/signup and /change_password, per client IP: each may hash a password or send an email. */
  dbconnections: { capacity: 30, perSecond: 1 },
} as const satisfies Record<string, BucketLimit>;

export type BucketName = keyof typeof DEFAULT_LIMITS;

export interface RateLimitRule {
  bucket: BucketName;
  /** What one bucket counts; the client IP unless the route says otherwise (a client id, a user id). */
  key?: (request: FastifyRequest) => string;
  /**
   * Counted by the route's own authentication (which calls consumeRateLimit) instead of on arrival, so that
   * unauthenticated requests cannot spend an authenticated caller's budget.
   */
  afterAuthentication?: boolean;
}

export function isBucketName(name: string): name is BucketName {
  return Object.hasOwn(DEFAULT_LIMITS, name);
}
