/**
 * Which DPoP proof ids (`jti`) were used, so that a proof works once (RFC 9449 §11.1), kept where every process
 * that could see a replay looks:
 *  - with Redis, in Redis (every node shares it; nothing is evicted);
 *  - one SQLite process, in its memory, in a store of its own: the in-memory attack-protection store drops its
 *    oldest keys when full, and a flood of proofs (any key signs one) must not push out a user's brute-force count;
 *  - otherwise (PostgreSQL nodes, or SQLite with several workers) in the database, the one thing they share.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Store } from '../store/db.js';
import type { Database } from '../store/schema.js';
import { usedOnceTable } from '../store/used-once.js';
import type { AttackCounterStore } from './counter-store.js';
import { createMemoryCounterStore } from './memory-counter-store.js';

export interface ProofIds {
  /** Where the ids are kept: `memory`, `redis` or `database`. */
  readonly kind: 'memory' | 'redis' | 'database';
  /** Records `id` for `ttlMs`; false when it was recorded before and has not lapsed (a replay). */
  useOnce(id: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** In a counter store: a count of one. `owned`: closed with this (else its owner closes it). */
function inCounterStore(counters: AttackCounterStore, owned: boolean): ProofIds {
  return {
    kind: counters.kind === 'redis' ? 'redis' : 'memory',
    useOnce: async (id, ttlMs) => (await counters.reserve(id, 1, ttlMs)).allowed,
    close: () => (owned ? counters.close() : Promise.resolve()),
  };
}

/** In this process's memory, in a store of its own (see above). */
export function proofIdsInMemory(clock: () => number = Date.now): ProofIds {
  return inCounterStore(createMemoryCounterStore(clock), true);
}

const PURGE_EVERY = 500;

/** In the `used_proof_ids` table (0042): a conditional insert, lapsed rows purged every PURGE_EVERY inserts. */
export function proofIdsInDatabase(db: Kysely<Database>, clock: () => number = Date.now): ProofIds {
  const usedProofIds = usedOnceTable(PURGE_EVERY);
  return {
    kind: 'database',
    async useOnce(id, ttlMs) {
      const now = clock();
      const inserted = await usedProofIds.record(
        () => db.insertInto('used_proof_ids').values({ id, expires_at: now + ttlMs }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst(),
        () => db.deleteFrom('used_proof_ids').where('expires_at', '<=', now).execute(),
      );
      if (inserted) return true;
      // Seen before: a replay, unless that use has lapsed (not yet purged), which then counts as this one.
      const renewed = await db.updateTable('used_proof_ids').set({ expires_at: now + ttlMs }).where('id', '=', id).where('expires_at', '<=', now).executeTakeFirst();
      return Number(renewed.numUpdatedRows) === 1;
    },
    close: () => Promise.resolve(),
  };
}

export function proofIdsFor(config: Pick<Config, 'redisUrl' | 'workers'>, store: Pick<Store, 'dialect' | 'db'>, attackCounters: AttackCounterStore): ProofIds {
  if (config.redisUrl) return inCounterStore(attackCounters, false);
  if (store.dialect === 'sqlite' && config.workers === 1) return proofIdsInMemory();
  return proofIdsInDatabase(store.db);
}
