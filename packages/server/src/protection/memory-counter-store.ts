/** Attack-protection counters in Maps, for a single process. Bounded: lapsed entries are swept, the oldest evicted. */
import { refill, take, type BucketState } from '../http/rate-limit/token-bucket.js';
import type { AttackCounterStore } from './counter-store.js';

const MAX_KEYS = 100_000;
const SWEEP_MS = 60_000;

/** Re-inserts so that Map order is least-recently-used first, evicting the oldest entry when full. */
function put<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_KEYS) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

export function createMemoryCounterStore(clock: () => number = Date.now): AttackCounterStore {
  const counters = new Map<string, { count: number; lapsesAt: number }>();
  const buckets = new Map<string, BucketState & { fullAt: number }>();
  const sweep = setInterval(() => {
    const now = clock();
    for (const [key, counter] of counters) if (counter.lapsesAt <= now) counters.delete(key);
    for (const [key, bucket] of buckets) if (bucket.fullAt <= now) buckets.delete(key);
  }, SWEEP_MS);
  sweep.unref();
  return {
    kind: 'memory',
    // Each method runs to completion without awaiting: a single process's calls are atomic by construction.
    reserve(key, limit, ttlMs) {
      const now = clock();
      const current = counters.get(key);
      const count = current && current.lapsesAt > now ? current.count : 0;
      if (count === limit) return Promise.resolve({ allowed: false, count });
      const next = count < limit ? count + 1 : limit;
      put(counters, key, { count: next, lapsesAt: now + ttlMs });
      return Promise.resolve({ allowed: true, count: next });
    },
    refund(key) {
      const current = counters.get(key);
      if (current && current.count > 0 && current.lapsesAt > clock()) current.count -= 1;
      return Promise.resolve();
    },
    reset(key) {
      return Promise.resolve(counters.delete(key));
    },
    take(key, limit) {
      const now = clock();
      const { state, result } = take(buckets.get(key), limit, now);
      put(buckets, key, { ...state, fullAt: result.resetAt * 1000 });
      return Promise.resolve(result);
    },
    giveBack(key, limit) {
      const now = clock();
      const bucket = buckets.get(key);
      if (bucket) {
        const tokens = Math.min(limit.capacity, refill(bucket, limit, now) + 1);
        put(buckets, key, { tokens, updatedAt: now, fullAt: now + ((limit.capacity - tokens) * 1000) / limit.perSecond });
      }
      return Promise.resolve();
    },
    close() {
      clearInterval(sweep);
      counters.clear();
      buckets.clear();
      return Promise.resolve();
    },
  };
}
