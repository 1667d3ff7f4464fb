/**
 * Tickets: the single-use secrets in emailed links (password reset, email verification, a factor lock's unblock). Random 256-bit
 * values; only their SHA-256 is stored, bound to tenant, user, purpose and the address the link went to.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { randomSecret } from '../crypto/ids.js';
import type { Database, UserTicketPurpose, UserTicketsTable } from '../store/schema.js';

export const TICKET_LIFETIME_MS: Record<UserTicketPurpose, number> = {
  password_reset: 24 * 3_600_000,
  email_verification: 5 * 24 * 3_600_000,
  // As long as the factor lock would last anyway (mfa/lockout.ts).
  mfa_unblock: 30 * 24 * 3_600_000,
};

/** A ticket as links carry it: 32 random bytes, base64url. */
const TICKET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export type UserTicket = UserTicketsTable;

function hashOf(ticket: string): string {
  return createHash('sha256').update(ticket, 'utf8').digest('hex');
}

export async function issueTicket(
  db: Kysely<Database>,
  fields: { tenantId: string; userId: string; purpose: UserTicketPurpose; email: string; clientId?: string | undefined; lifetimeMs?: number | undefined },
  now = Date.now(),
): Promise<string> {
  const ticket = randomSecret(32);
  await db
    .insertInto('user_tickets')
    .values({
      token_hash: hashOf(ticket),
      tenant_id: fields.tenantId,
      user_id: fields.userId,
      purpose: fields.purpose,
      email: fields.email,
      client_id: fields.clientId ?? null,
      created_at: now,
      // The tenant's template may set the link's lifetime (urlLifetimeInSeconds).
      expires_at: now + (fields.lifetimeMs ?? TICKET_LIFETIME_MS[fields.purpose]),
      used_at: null,
    })
    .execute();
  return ticket;
}

/** The ticket's row, used or not, when it exists for this tenant and purpose (callers check `usable`). */
export async function findTicket(db: Kysely<Database>, tenantId: string, purpose: UserTicketPurpose, ticket: unknown): Promise<UserTicket | undefined> {
  if (typeof ticket !== 'string' || !TICKET_FORMAT.test(ticket)) return undefined;
  return db
    .selectFrom('user_tickets')
    .selectAll()
    .where('token_hash', '=', hashOf(ticket))
    .where('tenant_id', '=', tenantId)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
}

export function usable(ticket: UserTicket, now = Date.now()): boolean {
  return ticket.used_at === null && ticket.expires_at > now;
}

/**
 * Spends the ticket, and with it every other open ticket of the same user and purpose (an older reset link
 * must not work after a newer one was used). False when it was already spent or expired (a race lost).
 */
export async function spendTicket(db: Kysely<Database>, ticket: UserTicket, now = Date.now()): Promise<boolean> {
  const spent = await db
    .updateTable('user_tickets')
    .set({ used_at: now })
    .where('token_hash', '=', ticket.token_hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1) return false;
  await db
    .updateTable('user_tickets')
    .set({ used_at: now })
    .where('tenant_id', '=', ticket.tenant_id)
    .where('user_id', '=', ticket.user_id)
    .where('purpose', '=', ticket.purpose)
    .where('used_at', 'is', null)
    .execute();
  return true;
}

/** How many tickets of this purpose the user was sent since `since` (a brake on mail-bombing one address). */
export async function countTicketsSince(db: Kysely<Database>, tenantId: string, userId: string, purpose: UserTicketPurpose, since: number): Promise<number> {
  const row = await db
    .selectFrom('user_tickets')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Drops tickets that expired a day ago or more (kept a little while so a late click still reads "expired"). */
export async function purgeExpiredTickets(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('user_tickets').where('expires_at', '<', now - 24 * 3_600_000).execute();
}

/** Spends every open ticket of the user and purpose (a newer link, or an administrator, made them moot). */
export async function revokeTickets(db: Kysely<Database>, tenantId: string, userId: string, purpose: UserTicketPurpose, now = Date.now()): Promise<void> {
  await db
    .updateTable('user_tickets')
    .set({ used_at: now })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}
