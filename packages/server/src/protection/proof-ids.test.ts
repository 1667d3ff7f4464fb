/**
 * Where DPoP proof ids are kept (proof-ids.ts), each kind against the same rules with a real store: a first use
 * is allowed, a replay refused until it lapses; the database kind on both dialects, where one node's use is seen by
 * another (two stores on one database), and the in-memory kind beside the attack-protection counters it must not
 * evict, nor drop its own ids before they lapse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openStore, type Store } from '../store/db.js';
import { freshPostgresSchema, postgresAvailable } from '../test-support/services.js';
import { createMemoryCounterStore } from './memory-counter-store.js';
import { proofIdsFor, proofIdsInDatabase, proofIdsInMemory } from './proof-ids.js';

let now = 1_800_000_000_000;
const clock = () => now;

describe('proof ids in memory', () => {
  it('allows a first use, refuses a replay until it lapses', async () => {
    const ids = proofIdsInMemory(clock);
    expect(await ids.useOnce('dpop:t:k:1', 1000)).toBe(true);
    expect(await ids.useOnce('dpop:t:k:1', 1000)).toBe(false);
    now += 1001;
    expect(await ids.useOnce('dpop:t:k:1', 1000)).toBe(true);
    await ids.close();
  });

  it('keeps every id until it lapses, past the 100,000 keys where the attack counters drop their oldest', async () => {
    const ids = proofIdsInMemory(clock);
    expect(ids.useOnce('dpop:t:k:first', 120_000)).toBe(true);
    let refused = 0;
    for (let i = 0; i < 150_000; i++) if (ids.useOnce(`dpop:t:k:${i}`, 120_000) !== true) refused++;
    expect(refused).toBe(0);
    expect(ids.useOnce('dpop:t:k:first', 120_000)).toBe(false);
    expect(ids.useOnce('dpop:t:k:149999', 120_000)).toBe(false);
    // All lapse together: the next use sweeps them, and each id is new again.
    now += 120_001;
    expect(ids.useOnce('dpop:t:k:first', 120_000)).toBe(true);
    expect(ids.useOnce('dpop:t:k:0', 120_000)).toBe(true);
    expect(ids.useOnce('dpop:t:k:0', 120_000)).toBe(false);
    await ids.close();
  });

  it('keeps an id for its own ttl when ids with other ttls come before and after it', async () => {
    const ids = proofIdsInMemory(clock);
    expect(ids.useOnce('long', 10_000)).toBe(true);
    expect(ids.useOnce('short', 1_000)).toBe(true);
    expect(ids.useOnce('medium', 5_000)).toBe(true);
    now += 1_001;
    expect(ids.useOnce('short', 1_000)).toBe(true);
    expect(ids.useOnce('medium', 5_000)).toBe(false);
    expect(ids.useOnce('long', 10_000)).toBe(false);
    now += 4_000;
    expect(ids.useOnce('medium', 5_000)).toBe(true);
    expect(ids.useOnce('long', 10_000)).toBe(false);
    expect(ids.useOnce('short', 1_000)).toBe(true);
    await ids.close();
  });

  it('one SQLite process keeps them apart from the attack counters: 100,001 proofs leave a brute-force count as it was', async () => {
    const counters = createMemoryCounterStore();
    const ids = proofIdsFor({ redisUrl: undefined, workers: 1 }, { dialect: 'sqlite', db: undefined as never }, counters);
    expect(ids.kind).toBe('memory');
    const key = 'brute-force:t:someone@example.com';
    for (let i = 1; i <= 3; i++) await counters.reserve(key, 10, 3_600_000);
    for (let i = 0; i <= 100_000; i++) await ids.useOnce(`dpop:t:k:${i}`, 120_000);
    expect(await counters.reserve(key, 10, 3_600_000)).toEqual({ allowed: true, count: 4 });
    await ids.close();
    await counters.close();
  });
});

const sqliteDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-proof-ids-'));
const databases: [string, () => Promise<Store>, () => Promise<void>][] = [
  ['SQLite', () => openStore(`sqlite:${path.join(sqliteDir, 'test.sqlite')}`), async () => rmSync(sqliteDir, { recursive: true, force: true })],
];
if (await postgresAvailable()) {
  const schema = freshPostgresSchema();
  databases.push(['PostgreSQL', () => openStore(schema.url), schema.drop]);
}

describe.each(databases)('proof ids in the database (%s)', (_name, open, dispose) => {
  const stores: Store[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
    await dispose();
  });

  it('is where several workers or PostgreSQL nodes without Redis keep them: a use on one is a replay on the other', async () => {
    const first = await open();
    stores.push(first);
    await migrateToLatest(first);
    const second = await open();
    stores.push(second);
    const config = { redisUrl: undefined, workers: first.dialect === 'sqlite' ? 2 : 1 };
    const [a, b] = [proofIdsFor(config, first, createMemoryCounterStore()), proofIdsInDatabase(second.db)];
    expect(a.kind).toBe('database');
    expect(await a.useOnce('dpop:t:k:shared', 120_000)).toBe(true);
    expect(await b.useOnce('dpop:t:k:shared', 120_000)).toBe(false);
    // Twenty uses of one id at once, across both: exactly one is allowed.
    const uses = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).useOnce('dpop:t:k:race', 120_000)));
    expect(uses.filter(Boolean)).toHaveLength(1);
  });

  it('lets a lapsed id be used again, and purges lapsed rows as it goes', async () => {
    const store = stores[0]!;
    const ids = proofIdsInDatabase(store.db, clock);
    expect(await ids.useOnce('dpop:t:k:lapsing', 1000)).toBe(true);
    now += 1001;
    expect(await ids.useOnce('dpop:t:k:lapsing', 1000)).toBe(true);
    expect(await ids.useOnce('dpop:t:k:lapsing', 1000)).toBe(false);
    for (let i = 0; i < 500; i++) await ids.useOnce(`dpop:t:k:filler-${i}`, 1);
    now += 10;
    for (let i = 0; i < 500; i++) await ids.useOnce(`dpop:t:k:more-${i}`, 60_000);
    const lapsed = await store.db.selectFrom('used_proof_ids').select('id').where('id', 'like', 'dpop:t:k:filler-%').execute();
    expect(lapsed).toEqual([]);
  });
});
