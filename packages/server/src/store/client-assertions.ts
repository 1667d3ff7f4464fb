/** Used client-assertion `jti`s, kept until the assertion would have expired, then purged. */
import type { Kysely } from 'kysely';
import type { Database, UsedClientAssertionsTable } from './schema.js';
import { usedOnceTable } from './used-once.js';

const PURGE_EVERY = 500;
const usedAssertions = usedOnceTable(PURGE_EVERY);

/** Records a jti; false when it was seen before (a replay), on this node or any other. */
export async function recordClientAssertion(db: Kysely<Database>, used: UsedClientAssertionsTable, now = Date.now()): Promise<boolean> {
  return usedAssertions.record(
    () =>
      db
        .insertInto('used_client_assertions')
        .values(used)
        .onConflict((oc) => oc.columns(['tenant_id', 'client_id', 'jti']).doNothing())
        .executeTakeFirst(),
    () => db.deleteFrom('used_client_assertions').where('expires_at', '<', now).execute(),
  );
}
