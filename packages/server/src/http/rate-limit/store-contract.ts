/** What every rate-limit store must do; run against the memory and Redis stores in stores.test.ts. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitStore } from './store.js';

const key = () => `test:${randomBytes(6).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function runRateLimitStoreContract(name: string, create: () => RateLimitStore): void {
  describe(`rate-limit store contract: ${name}`, () => {
    let store: RateLimitStore;
    beforeAll(() => {
      store = create();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('allows a full bucket, then refuses, counting remaining down', async () => {
      const k = key();
      const limit = { capacity: 3, perSecond: 0.01 };
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await store.take(k, limit));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
      expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
      expect(results.every((r) => r.limit === 3)).toBe(true);
      const refused = results[3]!;
      // One token comes back after 100 s at 0.01/s; a full bucket after 300 s.
      expect(refused.retryAfter).toBeGreaterThanOrEqual(99);
      expect(refused.retryAfter).toBeLessThanOrEqual(101);
      const nowSeconds = Date.now() / 1000;
      expect(refused.resetAt).toBeGreaterThan(nowSeconds + 290);
      expect(refused.resetAt).toBeLessThan(nowSeconds + 310);
    });

    it('keeps separate buckets per key', async () => {
      const limit = { capacity: 1, perSecond: 0.01 };
      const a = key();
      expect((await store.take(a, limit)).allowed).toBe(true);
      expect((await store.take(a, limit)).allowed).toBe(false);
      expect((await store.take(key(), limit)).allowed).toBe(true);
    });

    it('refills over time at the configured rate', async () => {
      const k = key();
      const limit = { capacity: 2, perSecond: 20 }; // a token every 50 ms
      await store.take(k, limit);
      await store.take(k, limit);
      expect((await store.take(k, limit)).allowed).toBe(false);
      await sleep(130);
      expect((await store.take(k, limit)).allowed).toBe(true);
    });

    it('is atomic under concurrent takes: exactly capacity requests pass', async () => {
      const k = key();
      const limit = { capacity: 10, perSecond: 0.001 };
      const results = await Promise.all(Array.from({ length: 30 }, () => store.take(k, limit)));
      expect(results.filter((r) => r.allowed)).toHaveLength(10);
    });
  });
}
