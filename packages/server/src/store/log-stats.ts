/**
 * Tenant stats (/api/v2/stats), read from the rollups of migration 0033 (kept by logs/rollups.ts as logs are
 * written and pruned): their cost follows the days asked for and the active users, not the tenant's log rows.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export const DAY_MS = 86_400_000;

/** A successful login: `s` (the hosted pages, passwordless) or `sepft` (a password grant). */
export const LOGIN_TYPES = ['s', 'sepft'] as const;

/** Users with at least one successful login since `since` (one range of the (tenant_id, last_login) index). */
export async function countActiveUsers(db: Kysely<Database>, tenantId: string, since: number): Promise<number> {
  const row = await db
    .selectFrom('log_user_logins')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('last_login', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface DailyCount {
  /** Days since the epoch (UTC). */
  day: number;
  type: string;
  n: number;
  first: number;
  last: number;
}

/** Events of `types` in the UTC days [from, to) (both midnights), per day and type, with each group's first and last time. */
export async function countDaily(db: Kysely<Database>, tenantId: string, types: readonly string[], from: number, to: number): Promise<DailyCount[]> {
  const rows = await db
    .selectFrom('log_daily_counts')
    .select(['day', 'type', 'n', 'first_at', 'last_at'])
    .where('tenant_id', '=', tenantId)
    .where('type', 'in', [...types])
    .where('day', '>=', Math.floor(from / DAY_MS))
    .where('day', '<', Math.ceil(to / DAY_MS))
    .where('n', '>', 0)
    .execute();
  return rows.map((r) => ({ day: Number(r.day), type: r.type, n: Number(r.n), first: Number(r.first_at), last: Number(r.last_at) }));
}
