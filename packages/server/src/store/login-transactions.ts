/** Login transactions: an /authorize request waiting while the user is on the hosted pages. */
import type { Kysely } from 'kysely';
import type { Database, LoginTransactionsTable } from './schema.js';

export type LoginTransactionRow = LoginTransactionsTable;

export async function insertLoginTransaction(db: Kysely<Database>, row: LoginTransactionRow): Promise<void> {
  await db.insertInto('login_transactions').values(row).execute();
}

export async function findLoginTransaction(db: Kysely<Database>, tenantId: string, id: string, now = Date.now()): Promise<LoginTransactionRow | undefined> {
  const row = await db
    .selectFrom('login_transactions')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row && { ...row, expires_at: Number(row.expires_at), created_at: Number(row.created_at) };
}

export async function updateLoginTransactionRequest(db: Kysely<Database>, id: string, request: string): Promise<void> {
  await db.updateTable('login_transactions').set({ request }).where('id', '=', id).execute();
}

/** True when this call removed it: a transaction completes once. */
export async function deleteLoginTransaction(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('login_transactions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function purgeExpiredLoginTransactions(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('login_transactions').where('expires_at', '<', now).execute();
}

/** Keeps the WebAuthn ceremony a page started on its transaction (replacing any earlier one). */
export async function setWebauthnCeremony(db: Kysely<Database>, id: string, ceremony: string): Promise<void> {
  await db.updateTable('login_transactions').set({ webauthn_ceremony: ceremony }).where('id', '=', id).execute();
}

/**
 * Takes the ceremony `ceremony` (as read with the transaction): true for the one request that cleared it, so
 * an answer to one challenge is accepted once, even when sent twice at once.
 */
export async function takeWebauthnCeremony(db: Kysely<Database>, id: string, ceremony: string): Promise<boolean> {
  const result = await db.updateTable('login_transactions').set({ webauthn_ceremony: null }).where('id', '=', id).where('webauthn_ceremony', '=', ceremony).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
