/**
 * Cross-origin login tickets, stored by SHA-256 hash. A ticket is used by deleting its row: one conditional
 * delete, so two requests racing with the same ticket cannot both win. Expired rows are swept now and then by
 * the requests that create new ones.
 */
import type { Kysely } from 'kysely';
import type { CrossOriginTicketsTable, Database } from './schema.js';

export type CrossOriginTicketRow = CrossOriginTicketsTable;

const PURGE_EVERY = 200;
let insertsSincePurge = 0;

/** PostgreSQL returns bigint columns as strings. */
function normalize(row: CrossOriginTicketRow | undefined): CrossOriginTicketRow | undefined {
  return row && { ...row, expires_at: Number(row.expires_at), created_at: Number(row.created_at) };
}

export async function insertCrossOriginTicket(db: Kysely<Database>, row: CrossOriginTicketRow): Promise<void> {
  if (++insertsSincePurge >= PURGE_EVERY) {
    insertsSincePurge = 0;
    await db.deleteFrom('cross_origin_tickets').where('expires_at', '<', row.created_at).execute();
  }
  await db.insertInto('cross_origin_tickets').values(row).execute();
}

/** The unexpired ticket whose hash is `ticketHash`. */
export async function findCrossOriginTicket(db: Kysely<Database>, tenantId: string, ticketHash: string, now = Date.now()): Promise<CrossOriginTicketRow | undefined> {
  const row = await db
    .selectFrom('cross_origin_tickets')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('ticket_hash', '=', ticketHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return normalize(row);
}

/** The unexpired ticket waiting for the verifier exchange of login transaction `transactionId`. */
export async function findCrossOriginTicketByTransaction(db: Kysely<Database>, tenantId: string, transactionId: string, now = Date.now()): Promise<CrossOriginTicketRow | undefined> {
  const row = await db
    .selectFrom('cross_origin_tickets')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('transaction_id', '=', transactionId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return normalize(row);
}

/** Hands the ticket to a login transaction for the verifier exchange, with a fresh deadline. */
export async function awaitCrossOriginVerification(db: Kysely<Database>, id: string, transactionId: string, expiresAt: number): Promise<void> {
  await db.updateTable('cross_origin_tickets').set({ transaction_id: transactionId, expires_at: expiresAt }).where('id', '=', id).execute();
}

/** Uses the ticket up; false when another request already did (or it is gone). */
export async function consumeCrossOriginTicket(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('cross_origin_tickets').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
