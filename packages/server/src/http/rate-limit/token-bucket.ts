/**
 * The token bucket every store implements: `capacity` tokens at most, refilled continuously at `perSecond`,
 * one token per request. Pure arithmetic here; the stores only decide where the state lives.
 */

export interface BucketLimit {
  capacity: number;
  perSecond: number;
}

export interface BucketState {
  tokens: number;
  /** Epoch ms of the last update. */
  updatedAt: number;
}

export interface TakeResult {
  allowed: boolean;
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Epoch seconds at which the bucket is full again (X-RateLimit-Reset). */
  resetAt: number;
  /** Seconds until the next token, when refused (Retry-After). */
  retryAfter: number;
}

export function refill(state: BucketState | undefined, limit: BucketLimit, now: number): number {
  if (!state) return limit.capacity;
  const elapsed = Math.max(0, now - state.updatedAt);
  return Math.min(limit.capacity, state.tokens + (elapsed * limit.perSecond) / 1000);
}

/** Takes one token if there is one; returns the new state and what to tell the client. */
export function take(state: BucketState | undefined, limit: BucketLimit, now: number): { state: BucketState; result: TakeResult } {
  const available = refill(state, limit, now);
  const allowed = available >= 1;
  const tokens = allowed ? available - 1 : available;
  return { state: { tokens, updatedAt: now }, result: describe(allowed, tokens, limit, now) };
}

export function describe(allowed: boolean, tokens: number, limit: BucketLimit, now: number): TakeResult {
  const msToFull = ((limit.capacity - tokens) * 1000) / limit.perSecond;
  return {
    allowed,
    limit: limit.capacity,
    remaining: Math.max(0, Math.floor(tokens)),
    resetAt: Math.ceil((now + msToFull) / 1000),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil(((1 - tokens) * 1000) / limit.perSecond / 1000)),
  };
}
