/**
 * The real Gatehouse server, as `gatehouse start` runs it, on a fresh SQLite data dir in a child process.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describeOutput, freePort, makeTempDir, startChild, stopChild, waitForHttp } from './processes.js';

/** @import { Child } from './processes.js' */

/**
 * @typedef {object} Gatehouse
 * @property {Child} child
 * @property {number} port
 * @property {string} url       http://127.0.0.1:<port>
 * @property {string} tenantHost  the Host header that selects the default tenant (localhost:<port>)
 * @property {string} dataDir
 * @property {number} workers  server processes (GATEHOUSE_WORKERS; with more than 1, node:cluster shares the port)
 * @property {string | undefined} databaseUrl  a postgres:// URL, or undefined for SQLite in the data dir
 * @property {ServerSettings} env  settings beyond the bench's own it runs with (e.g. GATEHOUSE_TENANT_LOGS=off)
 */

/**
 * Extra GATEHOUSE_* settings for a scenario that compares the server with itself (logs_cost: tenant logs on and
 * off); they win over the bench's defaults.
 * @typedef {Record<string, string>} ServerSettings
 */

/**
 * `<dataDir>/admin-credentials.json`, written by the first start: the admin client of the default tenant,
 * which holds a client_credentials grant for the Management API.
 * @typedef {object} AdminCredentials
 * @property {string} client_id
 * @property {string} client_secret
 * @property {string} audience        the Management API, http://localhost:<port>/api/v2/
 * @property {string} token_endpoint
 */

const CLI = fileURLToPath(new URL('../../packages/server/dist/cli.js', import.meta.url));

/**
 * A rate limit no bench run can reach. The token bucket is per tenant, bucket and client IP, and every
 * autocannon connection comes from 127.0.0.1, so with the defaults (jwks: capacity 100, 20/s) nearly every
 * request of a run would be a 429 and the bench would measure the limiter's refusal path, not the endpoint.
 * The limiter itself still runs on every request (bucket lookup, arithmetic, X-RateLimit-* headers), as it
 * does in production; only its ceiling is out of the way.
 */
const UNREACHABLE_LIMIT = { capacity: 1_000_000_000, per_second: 1_000_000_000 };

/**
 * The environment of the server: the bench's own, minus everything that configures Gatehouse (a
 * DATABASE_URL or GATEHOUSE_CONFIG_FILE in the shell must not point the bench at a real database), plus the
 * bench's settings (and the database the bench chose, when it is not the data dir's SQLite).
 * @param {number} port
 * @param {string} dataDir
 * @param {number} workers
 * @param {string} [databaseUrl]
 * @param {ServerSettings} [extra]
 * @returns {NodeJS.ProcessEnv}
 */
function serverEnv(port, dataDir, workers, databaseUrl, extra = {}) {
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('GATEHOUSE_') || ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST'].includes(key)) continue;
    env[key] = value;
  }
  return {
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_LOG_LEVEL: 'warn',
    GATEHOUSE_WORKERS: String(workers),
    ...(databaseUrl && { DATABASE_URL: databaseUrl }),
    ...extra,
  };
}

/**
 * @param {number} port
 * @param {string} dataDir
 * @param {number} workers
 * @param {string} [databaseUrl]
 * @param {ServerSettings} [extra]
 * @returns {Promise<Child>}
 */
async function startOnce(port, dataDir, workers, databaseUrl, extra = {}) {
  const child = startChild(workers > 1 ? `Gatehouse (${workers} workers)` : 'Gatehouse', CLI, ['start'], serverEnv(port, dataDir, workers, databaseUrl, extra));
  // BENCH_START_TIMEOUT_MS: on a machine busy with other work, starting (migrations included) can take longer.
  await waitForHttp(child, `http://127.0.0.1:${port}/healthz`, { timeoutMs: Number(process.env.BENCH_START_TIMEOUT_MS ?? 30_000) });
  return child;
}

/**
 * Sets `settings.rate_limits.<bucket>` of the default tenant to UNREACHABLE_LIMIT for every bucket named,
 * straight in the SQLite file. Only while no server has the file open: the server caches tenants (about
 * 5 s) and would not see the change at once, so the caller restarts it afterwards.
 * @param {string} dataDir
 * @param {string[]} buckets
 */
function raiseRateLimits(dataDir, buckets) {
  const db = new Database(path.join(dataDir, 'gatehouse.sqlite'));
  try {
    const update = db.transaction(() => {
      const row = /** @type {{ id: string, settings: string } | undefined} */ (
        db.prepare('SELECT id, settings FROM tenants WHERE is_default = 1').get()
      );
      if (!row) throw new Error('no default tenant in the bench database: the first start did not bootstrap it');
      /** @type {{ rate_limits?: Record<string, { capacity: number, per_second: number }> }} */
      const settings = JSON.parse(row.settings);
      settings.rate_limits = { ...settings.rate_limits };
      for (const bucket of buckets) settings.rate_limits[bucket] = UNREACHABLE_LIMIT;
      db.prepare('UPDATE tenants SET settings = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(settings), Date.now(), row.id);
    });
    update();
  } finally {
    db.close();
  }
}

/**
 * The same change in a PostgreSQL database (URL with `?schema=`), for the scenarios that run on it.
 * @param {string} databaseUrl
 * @param {string[]} buckets
 */
async function raisePostgresRateLimits(databaseUrl, buckets) {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    if (schema) await client.query(`SET search_path TO "${schema}"`);
    const { rows } = await client.query('SELECT id, settings FROM tenants WHERE is_default = 1');
    const row = /** @type {{ id: string, settings: string } | undefined} */ (rows[0]);
    if (!row) throw new Error('no default tenant in the bench database: the first start did not bootstrap it');
    /** @type {{ rate_limits?: Record<string, { capacity: number, per_second: number }> }} */
    const settings = JSON.parse(row.settings);
    settings.rate_limits = { ...settings.rate_limits };
    for (const bucket of buckets) settings.rate_limits[bucket] = UNREACHABLE_LIMIT;
    await client.query('UPDATE tenants SET settings = $1, updated_at = $2 WHERE id = $3', [JSON.stringify(settings), Date.now(), row.id]);
  } finally {
    await client.end();
  }
}

/**
 * Starts Gatehouse on a fresh data dir with the named rate-limit buckets out of the way:
 *  1. start it once, so it creates the database, the default tenant and its signing keys (the bootstrap);
 *  2. stop it (SIGTERM: it drains and closes the database cleanly);
 *  3. raise the tenant's limits for `buckets` in the database (there is no switch or environment variable
 *     for rate limits: they are tenant settings, see UNREACHABLE_LIMIT);
 *  4. start it again on the same data dir and port, so it reads the new settings from the start, with
 *     `workers` server processes.
 * With `databaseUrl` (a postgres:// URL, a fresh schema), the database is PostgreSQL instead of the data dir's SQLite.
 * @param {{ rateLimitBuckets: string[], workers?: number, databaseUrl?: string }} options
 * @returns {Promise<Gatehouse>}
 */
export async function startGatehouse({ rateLimitBuckets, workers = 1, databaseUrl }) {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build the server first (npm run build -w @gatehouse/server, or npm run bench)`);
  }
  const dataDir = makeTempDir('gatehouse-bench-');
  const port = await freePort();

  const first = await startOnce(port, dataDir, 1, databaseUrl);
  const code = await stopChild(first);
  if (code !== 0) throw new Error(`Gatehouse did not stop cleanly after its first start (exit ${code}).\n${describeOutput(first)}`);

  if (databaseUrl) await raisePostgresRateLimits(databaseUrl, rateLimitBuckets);
  else raiseRateLimits(dataDir, rateLimitBuckets);

  const child = await startOnce(port, dataDir, workers, databaseUrl);
  return { child, port, url: `http://127.0.0.1:${port}`, tenantHost: `localhost:${port}`, dataDir, workers, databaseUrl, env: {} };
}

/**
 * Stops `gatehouse` and starts it again on the same data dir and port (the tenant's URLs, and so the token
 * audience, name the port) with `workers` server processes. The raised rate limits are in the database, so
 * they stay. With several workers, /healthz answers as soon as the first one listens; the others are up
 * within the warm-up run that precedes every measurement. `env`: the settings it runs with from now on (none
 * beyond the bench's own by default).
 * @param {Gatehouse} gatehouse
 * @param {{ workers: number, env?: ServerSettings }} options
 * @returns {Promise<Gatehouse>}
 */
export async function restartGatehouse(gatehouse, { workers, env = {} }) {
  const code = await stopChild(gatehouse.child);
  if (code !== 0) throw new Error(`Gatehouse did not stop cleanly (exit ${code}).\n${describeOutput(gatehouse.child)}`);
  const child = await startOnce(gatehouse.port, gatehouse.dataDir, workers, gatehouse.databaseUrl, env);
  return { ...gatehouse, child, workers, env };
}

/**
 * @param {Gatehouse} gatehouse
 * @returns {AdminCredentials}
 */
export function adminCredentials(gatehouse) {
  return JSON.parse(readFileSync(path.join(gatehouse.dataDir, 'admin-credentials.json'), 'utf8'));
}
