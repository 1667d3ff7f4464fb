/** Where bucket state lives: this process's memory, or Redis when several nodes must share counters. */
import type { BucketLimit, TakeResult } from './token-bucket.js';

export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  take(key: string, limit: BucketLimit): Promise<TakeResult>;
  /** The same, answered at once: stores that need no I/O (memory) offer it, so the hot hook makes no promise. */
  takeNow?(key: string, limit: BucketLimit): TakeResult;
  /** Redis: a round trip, for /readyz (bounded by the client's command timeout). */
  ping?(): Promise<void>;
  close(): Promise<void>;
}
