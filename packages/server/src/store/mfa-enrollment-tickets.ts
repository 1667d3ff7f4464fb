/**
 * MFA enrollment tickets (mfa_enrollment_tickets, 0035): kept by the SHA-256 of their secret only. Spending is a
 * conditional write, so of two requests with one ticket at most one spends it.
 */
import type { Kysely } from 'kysely';
import type { Database, MfaEnrollmentTicketsTable } from './schema.js';

export interface MfaEnrollmentTicket {
  id: string;
  tenantId: string;
  userId: string;
  factor: string | null;
  allowMultiple: boolean;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

function fromRow(row: MfaEnrollmentTicketsTable): MfaEnrollmentTicket {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    factor: row.factor,
    allowMultiple: Number(row.allow_multiple) === 1,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
  };
}

export async function insertMfaEnrollmentTicket(db: Kysely<Database>, ticket: MfaEnrollmentTicket, tokenHash: string): Promise<void> {
  await db
    .insertInto('mfa_enrollment_tickets')
    .values({
      id: ticket.id,
      token_hash: tokenHash,
      tenant_id: ticket.tenantId,
      user_id: ticket.userId,
      factor: ticket.factor,
      allow_multiple: ticket.allowMultiple ? 1 : 0,
      created_at: ticket.createdAt,
      expires_at: ticket.expiresAt,
      used_at: null,
    })
    .execute();
}

/** The ticket of this secret's hash in the tenant, spent or not. */
export async function findMfaEnrollmentTicket(db: Kysely<Database>, tenantId: string, tokenHash: string): Promise<MfaEnrollmentTicket | undefined> {
  const row = await db.selectFrom('mfa_enrollment_tickets').selectAll().where('token_hash', '=', tokenHash).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Spends the ticket; false when it was spent already or has expired (a race lost). */
export async function spendMfaEnrollmentTicket(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_enrollment_tickets')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Drops tickets that expired a day ago or more (kept a while, so a late click still reads "expired"). */
export async function purgeExpiredMfaEnrollmentTickets(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('mfa_enrollment_tickets').where('expires_at', '<', now - 24 * 3_600_000).execute();
}
