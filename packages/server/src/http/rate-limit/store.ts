/** Where bucket state lives: this process's memory, or Redis when several nodes must share counters. */
import type { BucketLimit, TakeResult } from './token-bucket.js';

export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  take(key: string, limit: BucketLimit): Promise<TakeResult>;
  /** Redis: a round trip, for /readyz (bounded by the client's command timeout). */
  ping?(): Promise<void>;
  close(): Promise<void>;
}
