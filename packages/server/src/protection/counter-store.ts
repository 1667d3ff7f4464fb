/**
 * Where attack-protection counters live: this process's memory, or Redis when several nodes must agree on how
 * many times an identifier failed or how hard an IP is pushing. Two kinds of counter:
 *  - consecutive failures (brute force): incremented on each failure, reset on success, forgotten after a TTL;
 *  - token buckets (suspicious IPs): the rate-limit arithmetic of http/rate-limit/token-bucket.ts, plus a look
 *    that takes nothing, since an IP is refused *before* its attempt is known to fail.
 */
import type { BucketLimit, TakeResult } from '../http/rate-limit/token-bucket.js';

export interface AttackCounterStore {
  readonly kind: 'memory' | 'redis';
  /** Adds one to the counter at `key` and returns the new count; the counter lapses `ttlMs` after its last increment. */
  increment(key: string, ttlMs: number): Promise<number>;
  /**
   * Forgets the counter at `key`; true when this call removed it. Atomic: of several concurrent callers, one
   * gets true, which is how exactly one of the failures that crossed the limit writes the block.
   */
  reset(key: string): Promise<boolean>;
  /** Takes one token from the bucket at `key` (refused when none is left). */
  take(key: string, limit: BucketLimit): Promise<TakeResult>;
  /** Reports the bucket at `key` without taking from it: `allowed` when a whole token is left. */
  peek(key: string, limit: BucketLimit): Promise<TakeResult>;
  close(): Promise<void>;
}
