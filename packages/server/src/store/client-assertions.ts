/** Used client-assertion `jti`s, kept until the assertion would have expired, then purged. */
import type { Kysely } from 'kysely';
import type { Database, UsedClientAssertionsTable } from './schema.js';

let insertsSincePurge = 0;
const PURGE_EVERY = 500;

/** Records a jti; false when it was seen before (a replay), on this node or any other. */
export async function recordClientAssertion(db: Kysely<Database>, used: UsedClientAssertionsTable, now = Date.now()): Promise<boolean> {
  if (++insertsSincePurge >= PURGE_EVERY) {
    insertsSincePurge = 0;
    await db.deleteFrom('used_client_assertions').where('expires_at', '<', now).execute();
  }
  const result = await db
    .insertInto('used_client_assertions')
    .values(used)
    .onConflict((oc) => oc.columns(['tenant_id', 'client_id', 'jti']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
