/** What every attack-protection counter store must do; run against the memory and Redis stores in counter-stores.test.ts. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttackCounterStore } from './counter-store.js';

const key = () => `test:${randomBytes(6).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function runAttackCounterStoreContract(name: string, create: () => AttackCounterStore): void {
  describe(`attack counter store contract: ${name}`, () => {
    let store: AttackCounterStore;
    beforeAll(() => {
      store = create();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('counts consecutive failures per key and forgets them on reset', async () => {
      const a = key();
      const b = key();
      expect(await store.increment(a, 60_000)).toBe(1);
      expect(await store.increment(a, 60_000)).toBe(2);
      expect(await store.increment(b, 60_000)).toBe(1);
      expect(await store.increment(a, 60_000)).toBe(3);
      expect(await store.reset(a)).toBe(true);
      expect(await store.reset(a)).toBe(false);
      expect(await store.increment(a, 60_000)).toBe(1);
      expect(await store.increment(b, 60_000)).toBe(2);
    });

    it('lets a counter lapse once its TTL has passed since the last increment', async () => {
      const k = key();
      await store.increment(k, 150);
      await store.increment(k, 150);
      await sleep(250);
      expect(await store.increment(k, 150)).toBe(1);
    });

    it('increments atomically: concurrent failures each get their own count', async () => {
      const k = key();
      const counts = await Promise.all(Array.from({ length: 25 }, () => store.increment(k, 60_000)));
      expect([...counts].sort((x, y) => x - y)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    });

    it('peeks at a bucket without taking, and takes until it is empty', async () => {
      const k = key();
      const limit = { capacity: 2, perSecond: 0.001 };
      expect(await store.peek(k, limit)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await store.peek(k, limit)).toMatchObject({ allowed: true, remaining: 2 });
      expect((await store.take(k, limit)).allowed).toBe(true);
      expect(await store.peek(k, limit)).toMatchObject({ allowed: true, remaining: 1 });
      expect((await store.take(k, limit)).allowed).toBe(true);
      const empty = await store.peek(k, limit);
      expect(empty).toMatchObject({ allowed: false, remaining: 0 });
      expect(empty.retryAfter).toBeGreaterThan(900); // one token per 1000 s
      expect((await store.take(k, limit)).allowed).toBe(false);
      expect((await store.peek(key(), limit)).allowed).toBe(true);
    });

    it('refills a bucket at its rate, seen by peek too', async () => {
      const k = key();
      const limit = { capacity: 1, perSecond: 10 }; // a token every 100 ms
      await store.take(k, limit);
      expect((await store.peek(k, limit)).allowed).toBe(false);
      await sleep(180);
      expect((await store.peek(k, limit)).allowed).toBe(true);
      expect((await store.take(k, limit)).allowed).toBe(true);
    });

    it('takes atomically: exactly capacity concurrent takes pass', async () => {
      const k = key();
      const limit = { capacity: 7, perSecond: 0.001 };
      const results = await Promise.all(Array.from({ length: 20 }, () => store.take(k, limit)));
      expect(results.filter((r) => r.allowed)).toHaveLength(7);
    });
  });
}
