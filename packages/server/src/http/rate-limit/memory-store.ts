/** Bucket state in a Map, for a single process. Bounded: idle buckets are swept and the oldest evicted. */
import type { RateLimitStore } from './store.js';
import { take, type BucketLimit, type BucketState, type TakeResult } from './token-bucket.js';

const MAX_KEYS = 100_000;
const SWEEP_MS = 60_000;

export function createMemoryStore(clock: () => number = Date.now): RateLimitStore {
  const buckets = new Map<string, BucketState & { fullAt: number }>();
  const sweep = setInterval(() => {
    const now = clock();
    for (const [key, state] of buckets) if (state.fullAt <= now) buckets.delete(key);
  }, SWEEP_MS);
  sweep.unref();
  const takeNow = (key: string, limit: BucketLimit): TakeResult => {
    const now = clock();
    const { state, result } = take(buckets.get(key), limit, now);
    buckets.delete(key); // re-insert so Map order is least-recently-used first
    if (buckets.size >= MAX_KEYS) buckets.delete(buckets.keys().next().value as string);
    buckets.set(key, { ...state, fullAt: result.resetAt * 1000 });
    return result;
  };
  return {
    kind: 'memory',
    take: (key, limit) => Promise.resolve(takeNow(key, limit)),
    takeNow,
    close() {
      clearInterval(sweep);
      buckets.clear();
      return Promise.resolve();
    },
  };
}
