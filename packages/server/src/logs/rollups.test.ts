/**
 * The stats rollups (migration 0033, logs/rollups.ts) against the logs they summarise, on SQLite and
 * PostgreSQL: after many writers insert at once (separate transactions, and the batched writer, racing on the
 * same day and type rows), after a retention prune whose cutoff falls inside a day, and after two pruners race,
 * every (day, type) count with its first and last time, and the active users, equal a GROUP BY over `logs`.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../store/schema.js';
import { postgresAvailable } from '../test-support/services.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { logRow } from './log-event.js';
import { pruneTenantLogs, writeLogEvents } from './writer.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const DAY = 86_400_000;
const ORIGIN = { ip: '203.0.113.9', user_agent: 'test', hostname: 'localhost' };
const TYPES = ['s', 'sepft', 'ss', 'fp', 'pwd_leak'] as const;

type Summary = Record<string, { n: number; first: number; last: number }>;

/** What the rollup says, and what counting the logs says, for one tenant. */
async function both(db: Kysely<Database>, tenantId: string): Promise<{ rollup: Summary; logs: Summary; activeRollup: number; activeLogs: number }> {
  const rollup: Summary = {};
  for (const r of await db.selectFrom('log_daily_counts').selectAll().where('tenant_id', '=', tenantId).execute()) {
    rollup[`${r.day}/${r.type}`] = { n: Number(r.n), first: Number(r.first_at), last: Number(r.last_at) };
  }
  const logs: Summary = {};
  const grouped = await sql<{ day: number | string; type: string; n: number | string; first: number | string; last: number | string }>`
    select date / ${sql.lit(DAY)} as day, type, count(*) as n, min(date) as first, max(date) as last
    from logs where tenant_id = ${tenantId} group by date / ${sql.lit(DAY)}, type`.execute(db);
  for (const r of grouped.rows) logs[`${Number(r.day)}/${r.type}`] = { n: Number(r.n), first: Number(r.first), last: Number(r.last) };
  const since = Date.now() - 30 * DAY;
  const activeRollup = Number(
    (await db.selectFrom('log_user_logins').select((eb) => eb.fn.countAll<number | string>().as('n')).where('tenant_id', '=', tenantId).where('last_login', '>=', since).executeTakeFirstOrThrow()).n,
  );
  const activeLogs = Number(
    (
      await sql<{ n: number | string }>`select count(distinct user_id) as n from logs where tenant_id = ${tenantId} and type in ('s', 'sepft') and user_id is not null and date >= ${since}`.execute(db)
    ).rows[0]!.n,
  );
  return { rollup, logs, activeRollup, activeLogs };
}

describe.each(dialects)('stats rollups on %s', (dialect) => {
  let server: TestServer;
  let tenantId: string;
  let db: Kysely<Database>;
  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    tenantId = server.server.prepared.bootstrap!.tenant.id;
    db = server.server.prepared.store.db;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('adds up concurrent writers exactly', async () => {
    // 40 transactions of 25 rows each, all on the same few days and types (the same rollup rows), at once,
    // beside 500 rows through the batched writer.
    let k = 0;
    const row = (i: number) => {
      k++;
      const day = today - (i % 4) * DAY;
      return logRow(tenantId, { type: TYPES[i % TYPES.length]!, user_id: `auth0|u${i % 37}` }, ORIGIN, day + ((i * 7919) % (DAY - 1)));
    };
    const writers = Array.from({ length: 40 }, (_, w) =>
      db.transaction().execute((trx) => writeLogEvents(trx, Array.from({ length: 25 }, (_, j) => row(w * 25 + j)))),
    );
    for (let i = 0; i < 500; i++) {
      const r = row(1000 + i);
      server.server.services.tenantLogs.record(tenantId, { type: r.type as 's', user_id: r.user_id! }, ORIGIN);
    }
    await Promise.all([...writers, server.server.services.tenantLogs.flush()]);
    await server.server.services.tenantLogs.flush();
    expect(k).toBe(1500);
    const { rollup, logs, activeRollup, activeLogs } = await both(db, tenantId);
    expect(Object.values(logs).reduce((sum, v) => sum + v.n, 0)).toBeGreaterThanOrEqual(1500);
    expect(rollup).toEqual(logs);
    expect(activeRollup).toBe(activeLogs);
    expect(activeRollup).toBe(37);
  });

  it('takes off exactly what pruning deleted, a day cut in half and two pruners racing included', async () => {
    // Logins long ago, over two days (early* users in the first 20 hours, late* after), one of which the cutoff cuts.
    const old = today - 20 * DAY;
    await writeLogEvents(
      db,
      Array.from({ length: 2400 }, (_, i) =>
        logRow(tenantId, { type: TYPES[i % TYPES.length]!, user_id: `auth0|${i < 1200 ? 'early' : 'late'}${i % 49}` }, ORIGIN, old + i * 60_000 /* 40 hours: two days */),
      ),
    );
    let state = await both(db, tenantId);
    expect(state.rollup).toEqual(state.logs);
    expect(state.activeRollup).toBe(37 + 49 + 49);
    // Retention 19 days, pruned at a moment that puts the cutoff 12 hours into the day after `old`.
    const pruneAt = old + DAY + 12 * 3_600_000 + 19 * DAY;
    const [a, b] = await Promise.all([pruneTenantLogs(db, tenantId, 19, pruneAt), pruneTenantLogs(db, tenantId, 19, pruneAt)]);
    // Each row went once, whichever pruner deleted it.
    expect(a + b).toBe(36 * 60);
    state = await both(db, tenantId);
    expect(state.rollup).toEqual(state.logs);
    expect(state.activeRollup).toBe(state.activeLogs);
    // The users seen only before the cut are no longer active; those seen after it still are.
    expect(state.activeRollup).toBe(37 + 49);
    // Everything old goes: nothing of those days is left in the rollup.
    await pruneTenantLogs(db, tenantId, 1, now + 1 * DAY);
    state = await both(db, tenantId);
    expect(state.rollup).toEqual(state.logs);
    expect(state.activeRollup).toBe(state.activeLogs);
    expect(Object.keys(state.rollup).every((key) => Number(key.split('/')[0]) >= Math.floor(today / DAY))).toBe(true);
  });
});
