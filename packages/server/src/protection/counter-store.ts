/**
 * Where attack-protection counters live: this process's memory, or Redis when several nodes must agree on how
 * many guesses an identifier has had or how hard an IP is pushing. Two kinds of counter, both claimed *before*
 * the secret is checked (#19: checking first and counting after lets a burst of parallel guesses all be checked):
 *  - guess counters (brute force; later MFA codes): `reserve` takes a place below a limit atomically, the
 *    guess is checked only if it got one, and a right guess settles with `reset` or `refund`;
 *  - token buckets (suspicious IPs): `take` before the check, `giveBack` when the attempt turned out not to be
 *    one the bucket counts (a successful login). The arithmetic is http/rate-limit/token-bucket.ts's.
 */
import type { BucketLimit, TakeResult } from '../http/rate-limit/token-bucket.js';

export interface Reservation {
  /** Whether the caller may check its guess. */
  allowed: boolean;
  /** The counter after this call: this guess's place when allowed (`limit` for the last one), else what it holds. */
  count: number;
}

export interface AttackCounterStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Atomically takes the next place of the counter at `key` if it is below `limit` (allowed; the counter then
   * lapses `ttlMs` after this call) and refuses otherwise, leaving it as it is. A counter found *above* the
   * limit (the limit was lowered while it ran) is brought down to the limit, and that one caller is allowed, at
   * place `limit`: the streak ends on its outcome rather than silently, with nothing recorded.
   */
  reserve(key: string, limit: number, ttlMs: number): Promise<Reservation>;
  /** Gives one place back (never below zero), for a guess that turned out not to count. */
  refund(key: string): Promise<void>;
  /** Forgets the counter at `key`; true when this call removed it. */
  reset(key: string): Promise<boolean>;
  /** Takes one token from the bucket at `key` (refused when none is left). */
  take(key: string, limit: BucketLimit): Promise<TakeResult>;
  /** Puts back one token taken by `take` (never above the capacity). */
  giveBack(key: string, limit: BucketLimit): Promise<void>;
  close(): Promise<void>;
}
