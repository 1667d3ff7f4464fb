/**
 * Tenant logs at scale (issue #16: "a query over 1 million rows answers in under 100 ms on both dialects"): the
 * same GET /api/v2/logs searches and pages, and the /stats endpoints, on a tenant with 1,000 log events and on
 * one with BENCH_LOGS_ROWS (default 1,000,000), on SQLite and then on PostgreSQL (BENCH_POSTGRES_URL, a fresh
 * schema each run).
 *
 * Each size is a fresh Gatehouse whose events are written into its database through the server's own
 * `writeLogEvents` (packages/server/dist: the rows and the stats rollups, in transactions of SEED_BATCH), dated
 * evenly over the last 28 days (inside the default 30-day retention, so pruning leaves them alone), then
 * PostgreSQL is ANALYZEd as a running one would be. Events look alike at both sizes where a search must find as
 * many: a user has 10 events (users = rows / 10), each of 10 clients has a tenth of them, the types keep their
 * shares. Each request is made one at a time, 3 warm-up calls and 15 measured, and the median is compared twice:
 * against the 1,000-event median (goal ≤ 2×) and against the issue's 100 ms. Beside them, the same page read
 * straight from the database (no HTTP: an indexed SELECT of 50 rows in the bench process) is the floor.
 */
import path from 'node:path';
import { sql } from 'kysely';
import { logRow } from '../../packages/server/dist/logs/log-event.js';
import { writeLogEvents } from '../../packages/server/dist/logs/writer.js';
import { openStore } from '../../packages/server/dist/store/db.js';
import { startGatehouse } from '../lib/gatehouse.js';
import { httpRequest, keepAliveAgent } from '../lib/http-client.js';
import { management } from '../lib/management.js';
import { POSTGRES_URL, postgresSchema } from '../lib/postgres-schema.js';
import { stopChild } from '../lib/processes.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'logs';
const BASE = 1000;
const GOAL_RATIO = 2;
const GOAL_MS = 100;
const WARM_UP = 3;
const MEASURED = 15;
const SEED_BATCH = 5000;
const DAY = 86_400_000;
const SPAN_DAYS = 28;
const CLIENTS = 10;
const DIALECTS = /** @type {('sqlite' | 'postgres')[]} */ ((process.env.BENCH_LOGS_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim()).filter((d) => d === 'sqlite' || d === 'postgres'));
/** Event types and their shares (of 20): logins, password grants, failures, machine tokens, API calls, signups. */
const TYPES = /** @type {const} */ (['s', 's', 's', 's', 's', 's', 'sepft', 'sepft', 'sepft', 'sepft', 'fp', 'fp', 'seccft', 'seccft', 'seccft', 'sapi', 'sapi', 'ss', 'fu', 'pwd_leak']);

function rowCount() {
  const raw = process.env.BENCH_LOGS_ROWS;
  if (raw === undefined || raw.trim() === '') return 1_000_000;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 10_000) throw new Error(`BENCH_LOGS_ROWS=${raw}: expected a whole number of at least 10000`);
  return Number(raw);
}

const userId = (/** @type {number} */ i) => `auth0|logs${String(i).padStart(7, '0')}`;
const clientId = (/** @type {number} */ i) => `benchclient${i}`;
const isoDay = (/** @type {number} */ time) => new Date(time).toISOString().slice(0, 10);

/**
 * `count` events of the default tenant, written through the server's own writer, the newest a minute ago.
 * @param {Gatehouse} gatehouse
 * @param {number} count
 * @param {number} end  the newest event's time
 * @param {(message: string) => void} progress
 */
async function seed(gatehouse, count, end, progress) {
  const store = await openStore(gatehouse.databaseUrl ?? `sqlite:${path.join(gatehouse.dataDir, 'gatehouse.sqlite')}`);
  try {
    const tenant = /** @type {{ id: string }} */ (await store.db.selectFrom('tenants').select('id').orderBy('created_at').executeTakeFirstOrThrow());
    const users = Math.max(1, Math.floor(count / 10));
    const step = (SPAN_DAYS * DAY) / count;
    const start = end - SPAN_DAYS * DAY;
    const origin = { ip: '203.0.113.5', user_agent: 'bench', hostname: 'localhost' };
    const connection = { id: 'con_bench', name: 'Username-Password-Authentication', strategy: 'auth0' };
    const started = Date.now();
    for (let from = 0; from < count; from += SEED_BATCH) {
      /** @type {import('../../packages/server/dist/store/schema.js').LogsTable[]} */
      const rows = [];
      for (let i = from; i < Math.min(count, from + SEED_BATCH); i++) {
        const type = /** @type {(typeof TYPES)[number]} */ (TYPES[i % TYPES.length]);
        const user = (i * 7919) % users;
        rows.push(
          logRow(
            tenant.id,
            { type, client: { client_id: clientId(i % CLIENTS), name: `Bench client ${i % CLIENTS}` }, connection, user_id: userId(user), user_name: `logs${user}@bench.example` },
            origin,
            Math.floor(start + i * step),
          ),
        );
      }
      await store.db.transaction().execute((trx) => writeLogEvents(trx, rows));
      if ((from / SEED_BATCH) % 20 === 19) progress(`${NAME}: seeded ${(from + SEED_BATCH).toLocaleString('en-US')} events (${Math.round((from + SEED_BATCH) / ((Date.now() - started) / 1000))}/s)`);
    }
    if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
    // The floor: the newest 50 `fp` events, straight from the (tenant_id, type, log_id) index, no HTTP.
    const bare = async () =>
      void (await store.db.selectFrom('logs').selectAll().where('tenant_id', '=', tenant.id).where('type', '=', 'fp').orderBy('log_id', 'desc').limit(50).execute());
    const floor = await medianOf(bare);
    return { seconds: Math.round((Date.now() - started) / 1000), floor };
  } finally {
    await store.close();
  }
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return /** @type {number} */ (sorted[Math.floor(sorted.length / 2)]);
}

/** Median ms of MEASURED calls after WARM_UP. @param {(n: number) => Promise<void>} op */
async function medianOf(op) {
  for (let n = 0; n < WARM_UP; n++) await op(1000 + n);
  const times = [];
  for (let n = 0; n < MEASURED; n++) {
    const start = process.hrtime.bigint();
    await op(n);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(times);
}

/**
 * The requests measured.
 * @param {Gatehouse} gatehouse
 * @param {string} token
 * @param {number} count
 * @param {number} end
 * @returns {Record<string, (n: number) => Promise<void>>}
 */
function operations(gatehouse, token, count, end) {
  const agent = keepAliveAgent(1);
  const origin = new URL(gatehouse.url);
  const users = Math.max(1, Math.floor(count / 10));
  /** @param {string} what @param {string} query @param {(body: unknown) => boolean} check */
  const api = async (what, query, check) => {
    const answer = await httpRequest(agent, origin, { path: `/api/v2${query}`, headers: { host: gatehouse.tenantHost, authorization: `Bearer ${token}` } });
    if (answer.status !== 200) throw new Error(`${NAME}: ${what} answered HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
    if (!check(JSON.parse(answer.body))) throw new Error(`${NAME}: ${what} answered ${answer.body.slice(0, 300)}`);
  };
  const q = (/** @type {string} */ text) => `q=${encodeURIComponent(text)}`;
  const page = (/** @type {number} */ size) => (/** @type {unknown} */ body) => Array.isArray(body) && body.length === size;
  const some = (/** @type {unknown} */ body) => Array.isArray(body) && body.length > 0;
  // A day in the middle of the span, a different one per call.
  const day = (/** @type {number} */ n) => isoDay(end - (3 + (n % 20)) * DAY);
  const middle = String(Math.floor(end - 14 * DAY)).padStart(15, '0');
  return {
    'newest 50': () => api('newest', '/logs?per_page=50', page(50)),
    'q=type:fp': () => api('type', `/logs?${q('type:fp')}&per_page=50`, page(50)),
    'q=user_id:"…" (10 match)': (n) => api('user', `/logs?${q(`user_id:"${userId((n * 37) % users)}"`)}&per_page=50`, page(10)),
    'q=client_id:"…"': (n) => api('client', `/logs?${q(`client_id:"${clientId(n % CLIENTS)}"`)}&per_page=50`, page(50)),
    'q=date:[day TO day]': (n) => api('date', `/logs?${q(`date:[${day(n)} TO ${day(n)}]`)}&per_page=50`, some),
    'q=type:s AND date:[…]': (n) => api('type and date', `/logs?${q(`type:s AND date:[${day(n)} TO ${day(n)}]`)}&per_page=50`, some),
    'q=type:s AND client_id': (n) => api('type and client', `/logs?${q(`type:s AND client_id:"${clientId(n % 6)}"`)}&per_page=50`, some),
    'page 19 of 50': () => api('page', '/logs?page=19&per_page=50', page(50)),
    'include_totals (q=type:fp)': () => api('totals', `/logs?${q('type:fp')}&per_page=50&include_totals=true`, (b) => /** @type {{ total?: number }} */ (b).total === Math.min(1000, count / 10)),
    'from=<checkpoint>&take=100': () => api('checkpoint', `/logs?from=${middle}&take=100`, page(100)),
    'GET /users/{id}/logs': (n) => api('user logs', `/users/${encodeURIComponent(userId((n * 41) % users))}/logs?per_page=50`, page(10)),
    'GET /stats/daily (30 days)': () => api('daily', '/stats/daily', (b) => Array.isArray(b) && b.length >= SPAN_DAYS),
    'GET /stats/active-users': () => api('active users', '/stats/active-users', (b) => typeof b === 'number' && b > 0),
  };
}

/**
 * Median ms of each operation on a fresh Gatehouse with `count` seeded events.
 * @param {'sqlite' | 'postgres'} dialect
 * @param {number} count
 * @param {(message: string) => void} progress
 */
async function measureAt(dialect, count, progress) {
  const schema = dialect === 'postgres' ? await postgresSchema() : undefined;
  if (dialect === 'postgres' && !schema) return undefined;
  const gatehouse = await startGatehouse({ rateLimitBuckets: ['management'], ...(schema && { databaseUrl: schema.url }) });
  try {
    const api = await management(gatehouse, NAME);
    progress(`${NAME} (${dialect}): seeding ${count.toLocaleString('en-US')} log events`);
    const end = Date.now() - 60_000;
    const { seconds, floor } = await seed(gatehouse, count, end, progress);
    /** @type {Map<string, number>} */
    const medians = new Map();
    for (const [name, op] of Object.entries(operations(gatehouse, api.token, count, end))) {
      progress(`${NAME} (${dialect}, ${count.toLocaleString('en-US')}): ${name}`);
      medians.set(name, await medianOf(op));
    }
    return { medians, seconds, floor };
  } finally {
    await stopChild(gatehouse.child);
    await schema?.drop();
  }
}

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: [],
  async run({ progress }) {
    const count = rowCount();
    const figures = [
      `${NAME}: each request one at a time over HTTP, median of ${MEASURED} (after ${WARM_UP} warm-up), on ${BASE.toLocaleString('en-US')} and on ${count.toLocaleString('en-US')} log events; goals ≤ ${GOAL_RATIO}× the ${BASE.toLocaleString('en-US')}-event median and < ${GOAL_MS} ms.`,
    ];
    for (const dialect of DIALECTS) {
      let base;
      let large;
      try {
        base = await measureAt(dialect, BASE, progress);
        if (base) large = /** @type {NonNullable<typeof base>} */ (await measureAt(dialect, count, progress));
      } catch (err) {
        figures.push(`${NAME} (${dialect}): FAILED: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      if (!base || !large) {
        figures.push(`${NAME} (${dialect}): PostgreSQL at ${POSTGRES_URL} does not answer; skipped`);
        continue;
      }
      const first = figures.length;
      figures.push(
        `${NAME} (${dialect}): seeding ${count.toLocaleString('en-US')} events took ${large.seconds} s; floor (the newest 50 fp events by a bare indexed SELECT, no HTTP): ${base.floor.toFixed(2)} ms → ${large.floor.toFixed(2)} ms`,
      );
      for (const [name, small] of base.medians) {
        const big = /** @type {number} */ (large.medians.get(name));
        const ratio = big / small;
        figures.push(
          `${NAME} (${dialect}): ${name.padEnd(28)} ${small.toFixed(1).padStart(7)} ms → ${big.toFixed(1).padStart(7)} ms: ${ratio.toFixed(2)}× (goal ≤ ${GOAL_RATIO}×): ${ratio <= GOAL_RATIO ? 'met' : 'MISSED'}; < ${GOAL_MS} ms: ${big < GOAL_MS ? 'met' : 'MISSED'}`,
        );
      }
      // Shown at once too: the other database's seeding takes minutes more.
      for (const line of figures.slice(first)) progress(line);
    }
    return { rows: [], figures };
  },
};
