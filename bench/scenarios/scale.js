/**
 * Cost against the tenant's size (issue #18 item 5): the same requests on a tenant of 1,000 users and on one of
 * BENCH_SCALE_USERS (default 100,000 for a quick run; the goal is stated at 1,000,000), on SQLite and then on
 * PostgreSQL (when BENCH_POSTGRES_URL, by default the local test database, answers; a fresh schema each run).
 *
 * Each size is a fresh Gatehouse whose users are seeded directly into its database, through the server's own
 * store functions (packages/server/dist: rows, search terms; the counts follow by trigger), with as many events
 * and a tenth as many refresh tokens, then the database is ANALYZEd (PostgreSQL) as a running one would be.
 * Each request is then made one at a time, 3 warm-up calls and 15 measured, each on a different user, and the
 * median is compared: the goal is ≤ 2× the 1,000-user median.
 *
 * Seeded users are alike at both sizes where a search must find as many: names `Seeded P<7 digits>` (a name
 * prefix of 6 digits matches 10 users), `user_metadata.plan` shared by 10 users, one argon2id hash for all
 * (so any of them can log in).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { sql } from 'kysely';
import { hashPassword } from '../../packages/server/dist/crypto/passwords.js';
import { openStore } from '../../packages/server/dist/store/db.js';
import { insertUsers, newUser } from '../../packages/server/dist/store/users.js';
import { startGatehouse } from '../lib/gatehouse.js';
import { httpRequest, keepAliveAgent } from '../lib/http-client.js';
import { createSpaClient, DATABASE_CONNECTION, management, PASSWORD_REALM_GRANT } from '../lib/management.js';
import { POSTGRES_URL, postgresSchema } from '../lib/postgres-schema.js';
import { stopChild } from '../lib/processes.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'scale';
const BASE = 1000;
const GOAL = 2;
const WARM_UP = 3;
const MEASURED = 15;
const PASSWORD = 'Seeded-Passw0rd!';
const DIALECTS = /** @type {('sqlite' | 'postgres')[]} */ ((process.env.BENCH_SCALE_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim()).filter((d) => d === 'sqlite' || d === 'postgres'));
const SEED_BATCH = 5000;

function scaleCount() {
  const raw = process.env.BENCH_SCALE_USERS;
  if (raw === undefined || raw.trim() === '') return 100_000;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 10_000) throw new Error(`BENCH_SCALE_USERS=${raw}: expected a whole number of at least 10000`);
  return Number(raw);
}

const pad = (/** @type {number} */ i) => String(i).padStart(7, '0');
const seededId = (/** @type {number} */ i) => `auth0|seed${pad(i)}`;
const seededEmail = (/** @type {number} */ i) => `seeded${pad(i)}@scale.example`;

/**
 * Users, events and refresh tokens written straight into the database of `gatehouse` (which keeps running:
 * SQLite in WAL mode and PostgreSQL both take a second writer).
 * @param {Gatehouse} gatehouse
 * @param {number} count
 * @param {string} clientId  the refresh tokens' client
 * @param {(message: string) => void} progress
 */
async function seed(gatehouse, count, clientId, progress) {
  const store = await openStore(gatehouse.databaseUrl ?? `sqlite:${path.join(gatehouse.dataDir, 'gatehouse.sqlite')}`);
  try {
    const tenant = /** @type {{ id: string }} */ (await store.db.selectFrom('tenants').select('id').orderBy('created_at').executeTakeFirstOrThrow());
    const connection = /** @type {{ id: string }} */ (
      await store.db.selectFrom('connections').select('id').where('tenant_id', '=', tenant.id).where('name', '=', DATABASE_CONNECTION).executeTakeFirstOrThrow()
    );
    const hash = await hashPassword(PASSWORD);
    const started = Date.now();
    const epoch = Date.UTC(2025, 0, 1);
    for (let from = 0; from < count; from += SEED_BATCH) {
      /** @type {import('../../packages/server/dist/store/users.js').User[]} */
      const users = [];
      for (let i = from; i < Math.min(count, from + SEED_BATCH); i++) {
        users.push(
          newUser(
            {
              user_id: seededId(i),
              tenant_id: tenant.id,
              connection_id: connection.id,
              email: seededEmail(i),
              email_verified: true,
              password_hash: hash,
              profile: { name: `Seeded P${pad(i)}`, given_name: 'Seeded', family_name: `P${pad(i)}` },
              user_metadata: { plan: `plan${Math.floor(i / 10)}` },
              app_metadata: { tier: i % 2 === 0 ? 'free' : 'pro' },
            },
            epoch + i * 1000,
          ),
        );
      }
      const events = users.map((u, k) => ({ id: `evt_seed${pad(from + k)}`, tenant_id: tenant.id, type: 'user.created', data: '{}', created_at: u.created_at }));
      const tokens = users
        .filter((_, k) => (from + k) % 10 === 0)
        .map((u) => ({
          id: `rt_seed_${u.user_id}`,
          token_hash: `seed-${u.user_id}`,
          tenant_id: tenant.id,
          family_id: `rtf_seed_${u.user_id}`,
          parent_id: null,
          client_id: clientId,
          user_id: u.user_id,
          audience: null,
          scopes: '["openid","offline_access"]',
          session_id: null,
          authenticated_at: u.created_at,
          rotating: 1,
          created_at: u.created_at,
          last_used_at: null,
          rotated_at: null,
          revoked_at: null,
          expires_at: null,
          idle_expires_at: null,
        }));
      await store.db.transaction().execute(async (trx) => {
        await insertUsers(trx, users);
        for (let k = 0; k < events.length; k += 1000) await trx.insertInto('events').values(events.slice(k, k + 1000)).execute();
        for (let k = 0; k < tokens.length; k += 1000) await trx.insertInto('refresh_tokens').values(tokens.slice(k, k + 1000)).execute();
      });
      if ((from / SEED_BATCH) % 20 === 19) progress(`${NAME}: seeded ${(from + SEED_BATCH).toLocaleString('en-US')} users (${Math.round((from + SEED_BATCH) / ((Date.now() - started) / 1000))}/s)`);
    }
    if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
    return Math.round((Date.now() - started) / 1000);
  } finally {
    await store.close();
  }
}

/**
 * The requests measured, each given a call number (a different seeded user each time, within the first 1,000).
 * @param {Gatehouse} gatehouse
 * @param {string} token  Management API
 * @param {string} clientId
 * @returns {Promise<Record<string, (n: number) => Promise<void>>>}
 */
async function operations(gatehouse, token, clientId) {
  const agent = keepAliveAgent(1);
  const origin = new URL(gatehouse.url);
  const host = gatehouse.tenantHost;
  /** @param {string} what @param {{ method?: 'GET' | 'POST', path: string, headers?: Record<string, string>, body?: string }} request @param {number} [status] */
  const send = async (what, request, status = 200) => {
    const answer = await httpRequest(agent, origin, { ...request, headers: { host, ...request.headers } });
    if (answer.status !== status) throw new Error(`${NAME}: ${what} answered HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
    return answer;
  };
  const api = (/** @type {string} */ what, /** @type {string} */ query) => send(what, { path: `/api/v2${query}`, headers: { authorization: `Bearer ${token}` } });
  const form = (/** @type {Record<string, string>} */ body) => ({
    method: /** @type {const} */ ('POST'),
    path: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  const user = (/** @type {number} */ n) => (n * 37) % BASE;
  const login = (/** @type {number} */ n, /** @type {string} */ scope) =>
    send('login', form({ grant_type: PASSWORD_REALM_GRANT, username: seededEmail(user(n)), password: PASSWORD, realm: DATABASE_CONNECTION, client_id: clientId, scope }));
  let refreshToken = /** @type {string} */ (JSON.parse((await login(0, 'openid offline_access')).body).refresh_token);
  const run = randomBytes(3).toString('hex');
  const q = (/** @type {string} */ text) => encodeURIComponent(text);
  return {
    'GET /users/{id}': (n) => api('read', `/users/${encodeURIComponent(seededId(user(n)))}`).then(() => undefined),
    'GET /users-by-email': (n) => api('by email', `/users-by-email?email=${encodeURIComponent(seededEmail(user(n)))}`).then(() => undefined),
    'q=email:"…"': (n) => api('search email', `/users?q=${q(`email:"${seededEmail(user(n))}"`)}`).then(() => undefined),
    'q=name prefix (10 match)': (n) => api('search name', `/users?q=${q(`name:"Seeded P${pad(user(n)).slice(0, 6)}*"`)}`).then(() => undefined),
    'q=user_metadata.plan': (n) => api('search metadata', `/users?q=${q(`user_metadata.plan:"plan${Math.floor(user(n) / 10)}"`)}`).then(() => undefined),
    'include_totals': () => api('totals', '/users?include_totals=true&per_page=50').then(() => undefined),
    'page 19 of 50': () => api('page', '/users?page=19&per_page=50').then(() => undefined),
    'sort=email:1': () => api('sort', '/users?sort=email:1&per_page=50').then(() => undefined),
    'signup': (n) =>
      send('signup', {
        method: /** @type {const} */ ('POST'),
        path: '/dbconnections/signup',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: clientId, connection: DATABASE_CONNECTION, email: `signup-${run}-${n}@scale.example`, password: PASSWORD }),
      }).then(() => undefined),
    'password-realm login': (n) => login(n, 'openid').then(() => undefined),
    'token refresh': async () => {
      const answer = await send('refresh', form({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken }));
      refreshToken = /** @type {string} */ (JSON.parse(answer.body).refresh_token);
    },
  };
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return /** @type {number} */ (sorted[Math.floor(sorted.length / 2)]);
}

/**
 * Median ms of each operation on a fresh Gatehouse with `count` seeded users.
 * @param {'sqlite' | 'postgres'} dialect
 * @param {number} count
 * @param {(message: string) => void} progress
 */
async function measureAt(dialect, count, progress) {
  const schema = dialect === 'postgres' ? await postgresSchema() : undefined;
  if (dialect === 'postgres' && !schema) return undefined;
  const gatehouse = await startGatehouse({ rateLimitBuckets: ['token', 'management', 'dbconnections'], ...(schema && { databaseUrl: schema.url }) });
  try {
    const api = await management(gatehouse, NAME);
    const clientId = await createSpaClient(api, { name: `bench ${NAME}`, callback: 'https://app.bench.example/callback' });
    progress(`${NAME} (${dialect}): seeding ${count.toLocaleString('en-US')} users, as many events, ${(count / 10).toLocaleString('en-US')} refresh tokens`);
    const seconds = await seed(gatehouse, count, clientId, progress);
    const ops = await operations(gatehouse, api.token, clientId);
    /** @type {Map<string, number>} */
    const medians = new Map();
    for (const [name, op] of Object.entries(ops)) {
      for (let n = 0; n < WARM_UP; n++) await op(1000 + n);
      const times = [];
      for (let n = 0; n < MEASURED; n++) {
        const start = process.hrtime.bigint();
        await op(n);
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      medians.set(name, median(times));
    }
    return { medians, seconds };
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
    const count = scaleCount();
    const figures = [
      `${NAME}: each request one at a time, median of ${MEASURED} (after ${WARM_UP} warm-up), on ${BASE.toLocaleString('en-US')} users and on ${count.toLocaleString('en-US')} seeded users (as many events, a tenth as many refresh tokens); goal ≤ ${GOAL}×.`,
    ];
    for (const dialect of DIALECTS) {
      let base;
      let large;
      try {
        base = await measureAt(dialect, BASE, progress);
        if (base) large = /** @type {NonNullable<typeof base>} */ (await measureAt(dialect, count, progress));
      } catch (err) {
        // One database's failure keeps the other's figures (a large seed takes minutes).
        figures.push(`${NAME} (${dialect}): FAILED: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      if (!base || !large) {
        figures.push(`${NAME} (${dialect}): PostgreSQL at ${POSTGRES_URL} does not answer; skipped`);
        continue;
      }
      figures.push(`${NAME} (${dialect}): seeding ${count.toLocaleString('en-US')} users took ${large.seconds} s`);
      for (const [name, small] of base.medians) {
        const big = /** @type {number} */ (large.medians.get(name));
        const ratio = big / small;
        figures.push(
          `${NAME} (${dialect}): ${name.padEnd(26)} ${small.toFixed(1).padStart(7)} ms → ${big.toFixed(1).padStart(7)} ms: ${ratio.toFixed(2)}× (goal ≤ ${GOAL}×): ${ratio <= GOAL ? 'met' : 'MISSED'}`,
        );
      }
    }
    return { rows: [], figures };
  },
};
