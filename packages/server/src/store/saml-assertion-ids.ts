/** Assertion ids a samlp connection has accepted (saml_assertion_ids, 0030): the replay cache, shared by every node. */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Records the assertion as used; false when it was already (a replay). The primary key decides, so two nodes
 * receiving the same assertion at once cannot both accept it.
 */
export async function useAssertionId(db: Kysely<Database>, row: { tenant_id: string; connection_id: string; assertion_id: string; expires_at: number }, now = Date.now()): Promise<boolean> {
  // An expired entry no longer protects anything (the assertion itself has expired): it may be taken again.
  await db.deleteFrom('saml_assertion_ids').where('connection_id', '=', row.connection_id).where('assertion_id', '=', row.assertion_id).where('expires_at', '<=', now).execute();
  const inserted = await db
    .insertInto('saml_assertion_ids')
    .values(row)
    .onConflict((conflict) => conflict.columns(['connection_id', 'assertion_id']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function purgeExpiredAssertionIds(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('saml_assertion_ids').where('expires_at', '<', now).execute();
}
