/**
 * Ids that work once (DPoP proof ids, client assertion jtis) kept in a table of their own: a use is an insert
 * that does nothing when the id is there, and the table sheds its lapsed rows as it goes, with a delete every
 * so many inserts, rather than through a sweeper.
 */
import type { InsertResult } from 'kysely';

export interface UsedOnceTable {
  /** Runs `insert` (an insert that does nothing on a conflict), after `purgeLapsed` every so often; true when it inserted. */
  record(insert: () => Promise<InsertResult>, purgeLapsed: () => Promise<unknown>): Promise<boolean>;
}

/** `purgeEvery`: inserts between purges (in this process). */
export function usedOnceTable(purgeEvery: number): UsedOnceTable {
  let insertsSincePurge = 0;
  return {
    async record(insert, purgeLapsed) {
      if (++insertsSincePurge >= purgeEvery) {
        insertsSincePurge = 0;
        await purgeLapsed();
      }
      const inserted = await insert();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
  };
}
