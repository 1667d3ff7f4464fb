#!/usr/bin/env node
/**
 * npm run bench: every scenario of scenarios/index.js against the real Gatehouse server and against what
 * the scenario compares it with (a peer server, the raw signing rate), one after the other, with the same
 * settings. Prints the machine, a table, and per scenario its ratios.
 *
 * Processes: the load generator (autocannon) runs here; Gatehouse, each peer and the raw signer run in child
 * processes, so nothing measured shares this event loop. The children and the temp dirs are removed at the
 * end, on error, and on Ctrl-C.
 *
 * Environment: BENCH_DURATION (seconds per measured run, default 10), BENCH_CONNECTIONS (default 50),
 * BENCH_SCENARIO (comma-separated scenario names; all by default). See README.md.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { restartGatehouse, startGatehouse } from './lib/gatehouse.js';
import { cleanUp, cleanUpNow } from './lib/processes.js';
import { table } from './lib/report.js';
import { scenarios } from './scenarios/index.js';

/** @import { Gatehouse, ServerSettings } from './lib/gatehouse.js' */
/** @import { LoadSettings } from './lib/load.js' */
/** @import { Scenario, ScenarioResult } from './scenarios/index.js' */

/** Requests per connection in flight at once; 1 is what browsers and HTTP clients of a JWKS do. */
const PIPELINING = 1;
/** Seconds of the unreported run before each measured one (JIT, caches, connection setup). */
const WARMUP_SECONDS = 2;

/** A bad BENCH_* setting: reported without a stack trace, exit code 2. */
class UsageError extends Error {
  /** @override */
  name = 'UsageError';
}

/**
 * A whole number from the environment, or the default; anything else stops the bench with a message.
 * @param {string} name
 * @param {number} fallback
 * @param {number} max
 */
function wholeNumber(name, fallback, max) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > max) {
    throw new UsageError(`${name}=${raw}: expected a whole number from 1 to ${max}`);
  }
  return value;
}

/** @param {ServerSettings} a @param {ServerSettings} b */
function sameSettings(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/** @param {string} message */
function progress(message) {
  process.stderr.write(`bench: ${message}\n`);
}

/** @param {string} name */
function packageVersion(name) {
  try {
    const require = createRequire(import.meta.url);
    return /** @type {{ version: string }} */ (require(`${name}/package.json`)).version;
  } catch {
    return 'unknown';
  }
}

/** @param {LoadSettings} settings */
function machineFacts(settings) {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  const memory = (os.totalmem() / 2 ** 30).toFixed(1);
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return [
    `machine:  ${cpus.length} CPUs, ${model}, ${memory} GiB RAM, ${os.platform()} ${os.release()} ${os.arch()}`,
    `software: node ${process.version} (OpenSSL ${process.versions.openssl}), fastify ${packageVersion('fastify')}, ` +
      `autocannon ${packageVersion('autocannon')}, oidc-provider ${packageVersion('oidc-provider')}, jose ${packageVersion('jose')}`,
    `load avg: ${load} (1/5/15 min, at start)`,
    `settings: ${settings.connections} connections, pipelining ${settings.pipelining}, ` +
      `${settings.duration} s measured after ${settings.warmup} s warm-up, per target; ` +
      'autocannon in this process, each server in its own; ' +
      `libuv thread pool ${process.env.UV_THREADPOOL_SIZE ?? 4} threads per process`,
  ].join('\n');
}

/**
 * The scenarios BENCH_SCENARIO names (comma-separated), in the order of scenarios/index.js; all by default.
 * @returns {Scenario[]}
 */
function selectedScenarios() {
  const raw = process.env.BENCH_SCENARIO?.trim();
  if (!raw) return scenarios;
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length > 0) {
    throw new UsageError(`BENCH_SCENARIO=${raw}: unknown ${unknown.join(', ')}; the scenarios are ${scenarios.map((s) => s.name).join(', ')}`);
  }
  return scenarios.filter((s) => names.includes(s.name));
}

async function main() {
  /** @type {LoadSettings} */
  const settings = {
    duration: wholeNumber('BENCH_DURATION', 10, 3600),
    connections: wholeNumber('BENCH_CONNECTIONS', 50, 10_000),
    pipelining: PIPELINING,
    warmup: WARMUP_SECONDS,
  };
  const selected = selectedScenarios();
  console.log(machineFacts(settings));
  console.log('');

  const rateLimitBuckets = [...new Set(selected.flatMap((s) => s.rateLimitBuckets))];
  /** @type {Gatehouse | undefined} */
  let gatehouse;
  /**
   * Gatehouse with `workers` server processes and the settings `env`: started on first use (first start
   * bootstraps the data dir, then a restart with raised rate limits), restarted on the same data dir and port
   * when a scenario asks for another worker count or other settings.
   * @param {number} workers
   * @param {ServerSettings} [env]
   */
  const running = async (workers, env = {}) => {
    if (gatehouse && gatehouse.workers === workers && sameSettings(gatehouse.env, env)) return gatehouse;
    const described = [`GATEHOUSE_WORKERS=${workers}`, ...Object.entries(env).map(([key, value]) => `${key}=${value}`)].join(' ');
    if (gatehouse) {
      progress(`restarting Gatehouse with ${described}`);
      gatehouse = await restartGatehouse(gatehouse, { workers, env });
    } else {
      progress('starting Gatehouse (first start bootstraps the data dir, then a restart with raised rate limits)');
      gatehouse = await startGatehouse({ rateLimitBuckets, workers });
      if (Object.keys(env).length > 0) gatehouse = await restartGatehouse(gatehouse, { workers, env });
    }
    progress(`Gatehouse is up on ${gatehouse.url} (tenant Host ${gatehouse.tenantHost}, ${described})`);
    return gatehouse;
  };

  /** @type {ScenarioResult[]} */
  const results = [];
  for (const scenario of selected) results.push(await scenario.run({ gatehouse: running, settings, progress }));

  const rows = results.flatMap((r) => r.rows);
  console.log(table(rows));
  console.log('');
  console.log(`load avg: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (1/5/15 min, at the end)`);
  for (const line of results.flatMap((r) => r.figures)) console.log(line);
  const failures = rows.filter((row) => row.measurement.problems.length > 0);
  for (const row of failures) {
    console.error(`FAILED ${row.scenario} on ${row.target}: ${row.measurement.problems.join('; ')}`);
  }
  if (failures.length > 0) {
    console.error('A failed run measures something other than the endpoint (a 429, a crash, a full backlog): no figure.');
    process.exitCode = 1;
  }
}

// Children and temp dirs go away however the bench ends: normally and on error (finally below), on
// Ctrl-C or kill (signal handlers), and, without waiting, on any other exit.
process.on('exit', cleanUpNow);
for (const [signal, code] of /** @type {const} */ ([
  ['SIGINT', 130],
  ['SIGTERM', 143],
])) {
  process.once(signal, () => {
    progress(`${signal}: stopping the servers`);
    cleanUp().finally(() => process.exit(code));
  });
}

try {
  await main();
} catch (err) {
  console.error(err instanceof UsageError ? err.message : `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
} finally {
  await cleanUp();
}
