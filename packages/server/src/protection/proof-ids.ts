/**
 * Which DPoP proof ids (`jti`) were used, so that a proof works once (RFC 9449 §11.1), kept where every process
 * that could see a replay looks:
 *  - with Redis, in Redis (every node shares it; nothing is evicted);
 *  - one SQLite process, in its memory, in a store of its own (proofIdsInMemory): the attack-protection store
 *    drops its oldest keys at 100,000, and a flood of proofs (any key signs one) must not push out a user's
 *    brute-force count; nor, below MAX_IDS_IN_MEMORY, may a proof's own id be dropped before it lapses;
 *  - otherwise (PostgreSQL nodes, or SQLite with several workers) in the database, the one thing they share.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Store } from '../store/db.js';
import type { Database } from '../store/schema.js';
import { usedOnceTable } from '../store/used-once.js';
import type { AttackCounterStore } from './counter-store.js';

export interface ProofIds {
  /** Where the ids are kept: `memory`, `redis` or `database`. */
  readonly kind: 'memory' | 'redis' | 'database';
  /**
   * Records `id` for `ttlMs`; false when it was recorded before and has not lapsed (a replay). The memory kind
   * answers at once (a boolean), the others with a promise: the caller awaits only those.
   */
  useOnce(id: string, ttlMs: number): boolean | Promise<boolean>;
  close(): Promise<void>;
}

/** In Redis, through the attack-protection counters (a count of one), which their owner closes. */
function inRedis(counters: AttackCounterStore): ProofIds {
  return {
    kind: 'redis',
    useOnce: async (id, ttlMs) => (await counters.reserve(id, 1, ttlMs)).allowed,
    close: () => Promise.resolve(),
  };
}

/**
 * Ids held in memory at most (about 200 bytes each): past it the oldest is dropped, and a replay of that proof
 * would pass, the price of bounded memory under a flood of valid proofs. 500,000 holds the 120 s a DPoP id is kept
 * at over 4,000 proofs a second, about what one process can verify besides serving HTTP.
 */
export const MAX_IDS_IN_MEMORY = 500_000;

/**
 * In this process's memory, in a store of its own (see above): a Map from id to when it lapses, for the lookup,
 * and the ids in the order they were recorded, so that lapsed ones leave from the front as later ones are
 * recorded (no timer, no scan; a Map's oldest key found with keys().next() gets slower with every key deleted
 * before it, which the attack-protection store's eviction pays from 100,000 keys on). A synchronous answer: one
 * process's check-and-record cannot interleave with another's.
 */
export function proofIdsInMemory(clock: () => number = Date.now): ProofIds {
  const lapsesAt = new Map<string, number>();
  let order: string[] = [];
  let first = 0;
  const dropOldest = () => {
    lapsesAt.delete(order[first]!);
    first++;
  };
  return {
    kind: 'memory',
    useOnce(id, ttlMs) {
      const now = clock();
      // Lapsed ids leave from the front; an id behind one with a longer ttl waits for it (kept longer, never shorter).
      while (first < order.length && (lapsesAt.get(order[first]!) ?? 0) <= now) dropOldest();
      if (first > 1024 && first * 2 > order.length) {
        order = order.slice(first);
        first = 0;
      }
      const recorded = lapsesAt.get(id);
      if (recorded !== undefined && recorded > now) return false;
      // A lapsed id used again: its old place in the order goes (the sweep above may not have reached it).
      if (recorded !== undefined) {
        lapsesAt.delete(id);
        const at = order.indexOf(id, first);
        if (at >= 0) order.splice(at, 1);
      }
      if (lapsesAt.size >= MAX_IDS_IN_MEMORY) dropOldest();
      lapsesAt.set(id, now + ttlMs);
      order.push(id);
      return true;
    },
    close() {
      lapsesAt.clear();
      order = [];
      first = 0;
      return Promise.resolve();
    },
  };
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
  if (config.redisUrl) return inRedis(attackCounters);
  if (store.dialect === 'sqlite' && config.workers === 1) return proofIdsInMemory();
  return proofIdsInDatabase(store.db);
}
