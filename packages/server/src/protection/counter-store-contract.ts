/** What every attack-protection counter store must do; run against the memory and Redis stores in counter-stores.test.ts. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttackCounterStore } from './counter-store.js';
import { claimGuess } from './guesses.js';

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

    it('reserves places up to the limit, per key, then refuses without counting', async () => {
      const a = key();
      const b = key();
      expect(await store.reserve(a, 3, 60_000)).toEqual({ allowed: true, count: 1 });
      expect(await store.reserve(a, 3, 60_000)).toEqual({ allowed: true, count: 2 });
      expect(await store.reserve(b, 3, 60_000)).toEqual({ allowed: true, count: 1 });
      expect(await store.reserve(a, 3, 60_000)).toEqual({ allowed: true, count: 3 });
      expect(await store.reserve(a, 3, 60_000)).toEqual({ allowed: false, count: 3 });
      expect(await store.reserve(a, 3, 60_000)).toEqual({ allowed: false, count: 3 });
      expect(await store.reserve(a, 5, 60_000)).toEqual({ allowed: true, count: 4 }); // a raised limit
    });

    it('reserves atomically: of many concurrent guesses exactly the limit get a place, each its own', async () => {
      const k = key();
      const results = await Promise.all(Array.from({ length: 40 }, () => store.reserve(k, 10, 60_000)));
      const allowed = results.filter((r) => r.allowed).map((r) => r.count);
      expect(allowed.sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      expect(results.filter((r) => !r.allowed).every((r) => r.count === 10)).toBe(true);
    });

    it('brings a counter above a lowered limit down to it, allowing exactly one caller that last place', async () => {
      const k = key();
      for (let i = 0; i < 6; i++) await store.reserve(k, 10, 60_000);
      const results = await Promise.all(Array.from({ length: 8 }, () => store.reserve(k, 4, 60_000)));
      expect(results.filter((r) => r.allowed)).toEqual([{ allowed: true, count: 4 }]);
      expect(await store.reserve(k, 4, 60_000)).toEqual({ allowed: false, count: 4 });
    });

    it('refunds one place, never below zero, and resets to nothing', async () => {
      const k = key();
      await store.reserve(k, 2, 60_000);
      await store.reserve(k, 2, 60_000);
      expect((await store.reserve(k, 2, 60_000)).allowed).toBe(false);
      await store.refund(k);
      expect(await store.reserve(k, 2, 60_000)).toEqual({ allowed: true, count: 2 });
      expect(await store.reset(k)).toBe(true);
      expect(await store.reset(k)).toBe(false);
      await store.refund(k);
      await store.refund(k);
      expect(await store.reserve(k, 2, 60_000)).toEqual({ allowed: true, count: 1 });
    });

    it('settles guesses claimed with claimGuess: a right one resets the streak or refunds its own place', async () => {
      const streak = key();
      const reset = { maxGuesses: 3, windowMs: 60_000, onRight: 'reset' } as const;
      const guesses = await Promise.all(Array.from({ length: 5 }, () => claimGuess(store, streak, reset)));
      expect(guesses.filter((g) => g.allowed)).toHaveLength(3);
      expect(guesses.filter((g) => g.allowed && g.last)).toHaveLength(1);
      const right = guesses.find((g) => g.allowed && !g.last);
      if (!right?.allowed) throw new Error('expected an allowed guess');
      await right.right();
      expect(await store.reserve(streak, 3, 60_000)).toEqual({ allowed: true, count: 1 });

      const budget = key();
      const refund = { maxGuesses: 2, windowMs: 60_000, onRight: 'refund' } as const;
      const first = await claimGuess(store, budget, refund);
      await claimGuess(store, budget, refund);
      expect((await claimGuess(store, budget, refund)).allowed).toBe(false);
      if (!first.allowed) throw new Error('expected an allowed guess');
      await first.right();
      expect(await claimGuess(store, budget, refund)).toMatchObject({ allowed: true, last: true });
    });

    it('lets a counter lapse once its TTL has passed since the last place was taken', async () => {
      const k = key();
      await store.reserve(k, 10, 150);
      await store.reserve(k, 10, 150);
      await sleep(250);
      expect(await store.reserve(k, 10, 150)).toEqual({ allowed: true, count: 1 });
    });

    it('takes from a bucket until it is empty, and gives tokens back up to its capacity', async () => {
      const k = key();
      const limit = { capacity: 2, perSecond: 0.001 };
      expect(await store.take(k, limit)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await store.take(k, limit)).toMatchObject({ allowed: true, remaining: 0 });
      const empty = await store.take(k, limit);
      expect(empty).toMatchObject({ allowed: false, remaining: 0 });
      expect(empty.retryAfter).toBeGreaterThan(900); // one token per 1000 s
      await store.giveBack(k, limit);
      expect(await store.take(k, limit)).toMatchObject({ allowed: true, remaining: 0 });
      await store.giveBack(k, limit);
      await store.giveBack(k, limit);
      await store.giveBack(k, limit);
      expect(await store.take(k, limit)).toMatchObject({ allowed: true, remaining: 1 }); // capped at 2
      const untouched = key();
      await store.giveBack(untouched, limit); // a bucket never taken from stays full
      expect((await store.take(untouched, limit)).remaining).toBe(1);
    });

    it('refills a bucket at its rate', async () => {
      const k = key();
      const limit = { capacity: 1, perSecond: 10 }; // a token every 100 ms
      await store.take(k, limit);
      await sleep(180);
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
