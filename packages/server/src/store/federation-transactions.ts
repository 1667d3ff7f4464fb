/** Trips to an upstream identity provider (federation_transactions, 0025): created at the redirect, consumed once by the callback. */
import type { Kysely } from 'kysely';
import type { Database, FederationTransactionsTable } from './schema.js';

export type FederationTransactionRow = FederationTransactionsTable;

export async function insertFederationTransaction(db: Kysely<Database>, row: FederationTransactionRow): Promise<void> {
  await db.insertInto('federation_transactions').values(row).execute();
}

/**
 * Removes the trip and returns it, if it existed in the tenant and had not expired. Whoever deletes the row owns
 * the trip: a replayed or concurrent callback finds nothing.
 */
export async function consumeFederationTransaction(db: Kysely<Database>, tenantId: string, id: string, now = Date.now()): Promise<FederationTransactionRow | undefined> {
  const row = await db.selectFrom('federation_transactions').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) return undefined;
  const deleted = await db.deleteFrom('federation_transactions').where('id', '=', id).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1 || Number(row.expires_at) <= now) return undefined;
  return { ...row, expires_at: Number(row.expires_at), created_at: Number(row.created_at) };
}

export async function purgeExpiredFederationTransactions(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('federation_transactions').where('expires_at', '<', now).execute();
}
