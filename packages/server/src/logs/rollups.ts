/**
 * The rollups /api/v2/stats reads (migration 0033), kept in step with the `logs` table:
 *
 *  - `rollUp` runs in the transaction that inserts log rows: per (tenant, day, type) it adds the batch's count and
 *    widens first/last, per user it raises the last login. Each is one multi-row upsert whose update is
 *    relative (`n + excluded.n`, the larger time), so concurrent writers (other processes, the signup transaction
 *    and the batched writer) add up instead of overwriting each other. Keys go in sorted order, so two PostgreSQL
 *    transactions that touch the same rows lock them in the same order and cannot deadlock each other.
 *  - `unroll` runs in the pruning transaction with the rows its DELETE … RETURNING actually removed, so two
 *    pruners racing over the same batch never take a row off twice.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, LogsTable } from '../store/schema.js';
import { DAY_MS, LOGIN_TYPES } from '../store/log-stats.js';

const LOGIN = new Set<string>(LOGIN_TYPES);

type Counted = Pick<LogsTable, 'tenant_id' | 'type' | 'date' | 'user_id'>;

const dayOf = (date: number) => Math.floor(date / DAY_MS);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Adds `rows` (just inserted in `db`'s transaction) to the rollups. */
export async function rollUp(db: Kysely<Database>, rows: readonly Counted[]): Promise<void> {
  const counts = new Map<string, { tenant_id: string; day: number; type: string; n: number; first_at: number; last_at: number }>();
  const logins = new Map<string, { tenant_id: string; user_id: string; last_login: number }>();
  for (const row of rows) {
    const date = Number(row.date);
    const day = dayOf(date);
    const key = `${row.tenant_id}\u0000${String(day).padStart(8, '0')}\u0000${row.type}`;
    const count = counts.get(key);
    if (count) {
      count.n += 1;
      count.first_at = Math.min(count.first_at, date);
      count.last_at = Math.max(count.last_at, date);
    } else counts.set(key, { tenant_id: row.tenant_id, day, type: row.type, n: 1, first_at: date, last_at: date });
    if (row.user_id && LOGIN.has(row.type)) {
      const userKey = `${row.tenant_id}\u0000${row.user_id}`;
      const login = logins.get(userKey);
      if (!login || login.last_login < date) logins.set(userKey, { tenant_id: row.tenant_id, user_id: row.user_id, last_login: date });
    }
  }
  if (counts.size > 0) {
    const values = [...counts.entries()].sort(([a], [b]) => compare(a, b)).map(([, v]) => v);
    await db
      .insertInto('log_daily_counts')
      .values(values)
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'day', 'type']).doUpdateSet({
          n: sql`log_daily_counts.n + excluded.n`,
          first_at: sql`case when excluded.first_at < log_daily_counts.first_at then excluded.first_at else log_daily_counts.first_at end`,
          last_at: sql`case when excluded.last_at > log_daily_counts.last_at then excluded.last_at else log_daily_counts.last_at end`,
        }),
      )
      .execute();
  }
  if (logins.size > 0) {
    const values = [...logins.entries()].sort(([a], [b]) => compare(a, b)).map(([, v]) => v);
    await db
      .insertInto('log_user_logins')
      .values(values)
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'user_id']).doUpdateSet({
          last_login: sql`case when excluded.last_login > log_user_logins.last_login then excluded.last_login else log_user_logins.last_login end`,
        }),
      )
      .execute();
  }
}

/**
 * Takes `deleted` (rows of `tenantId` that pruning just deleted) off the daily counts. A day left with events
 * gets its first time again from the logs (the (tenant_id, type, date) index); a day left without is removed.
 */
export async function unroll(db: Kysely<Database>, tenantId: string, deleted: readonly Pick<LogsTable, 'type' | 'date'>[]): Promise<void> {
  const counts = new Map<string, { day: number; type: string; n: number }>();
  for (const row of deleted) {
    const day = dayOf(Number(row.date));
    const key = `${String(day).padStart(8, '0')}\u0000${row.type}`;
    const count = counts.get(key);
    if (count) count.n += 1;
    else counts.set(key, { day, type: row.type, n: 1 });
  }
  for (const [, { day, type, n }] of [...counts.entries()].sort(([a], [b]) => compare(a, b))) {
    await db
      .updateTable('log_daily_counts')
      .set({
        n: sql`n - ${n}`,
        first_at: sql`coalesce((select min(logs.date) from logs where logs.tenant_id = ${tenantId} and logs.type = ${type} and logs.date >= ${day * DAY_MS} and logs.date < ${(day + 1) * DAY_MS}), first_at)`,
      })
      .where('tenant_id', '=', tenantId)
      .where('day', '=', day)
      .where('type', '=', type)
      .execute();
    await db.deleteFrom('log_daily_counts').where('tenant_id', '=', tenantId).where('day', '=', day).where('type', '=', type).where('n', '<=', 0).execute();
  }
}

/** Once every log before `before` is pruned: a user whose last login is older has no login left in the logs. */
export async function forgetLoginsBefore(db: Kysely<Database>, tenantId: string, before: number): Promise<void> {
  await db.deleteFrom('log_user_logins').where('tenant_id', '=', tenantId).where('last_login', '<', before).execute();
}
