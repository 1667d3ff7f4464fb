/**
 * Tenant stats read from the log events (/api/v2/stats): both read the (tenant_id, type, date, user_id) index of
 * migration 0026 alone, one range per event type, so their cost follows the matching rows, not the tenant's logs.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export const DAY_MS = 86_400_000;

/** Users with at least one successful login (any of `loginTypes`) since `since`. */
export async function countActiveUsers(db: Kysely<Database>, tenantId: string, loginTypes: readonly string[], since: number): Promise<number> {
  const row = await db
    .selectFrom('logs')
    .select(sql<number | string>`count(distinct user_id)`.as('n'))
    .where('tenant_id', '=', tenantId)
    .where('type', 'in', [...loginTypes])
    .where('date', '>=', since)
    .where('user_id', 'is not', null)
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

/** Events of `types` in [from, to), counted per UTC day and type, with each group's first and last time. */
export async function countDaily(db: Kysely<Database>, tenantId: string, types: readonly string[], from: number, to: number): Promise<DailyCount[]> {
  // A literal divisor, so that the selected and grouped expressions are the same text (PostgreSQL); integer
  // division on both dialects.
  const day = sql<number>`date / ${sql.lit(DAY_MS)}`;
  const rows = await db
    .selectFrom('logs')
    .select([
      day.as('day'),
      'type',
      (eb) => eb.fn.countAll<number | string>().as('n'),
      (eb) => eb.fn.min('date').as('first'),
      (eb) => eb.fn.max('date').as('last'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('type', 'in', [...types])
    .where('date', '>=', from)
    .where('date', '<', to)
    .groupBy([day, 'type'])
    .execute();
  return rows.map((r) => ({ day: Number(r.day), type: r.type, n: Number(r.n), first: Number(r.first), last: Number(r.last) }));
}
