#!/usr/bin/env node
/**
 * npm run bench: every scenario of scenarios/index.js against the real Gatehouse server and against the
 * scenario's peer (a bare Fastify app serving the same body), one after the other, with the same autocannon
 * settings. Prints the machine, a table, and per scenario the ratio Gatehouse / peer in requests per second.
 *
 * Processes: the load generator (autocannon) runs here; Gatehouse and each peer run in child processes, so
 * nothing measured shares this event loop. The children and the temp dirs are removed at the end, on error,
 * and on Ctrl-C.
 *
 * Environment: BENCH_DURATION (seconds per measured run, default 10), BENCH_CONNECTIONS (default 50).
 * See README.md.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { startGatehouse } from './lib/gatehouse.js';
import { measure } from './lib/load.js';
import { cleanUp, cleanUpNow, describeOutput, freePort, makeTempDir, startChild, stopChild, waitForHttp } from './lib/processes.js';
import { scenarios } from './scenarios/index.js';

/** @import { Gatehouse } from './lib/gatehouse.js' */
/** @import { LoadSettings, Measurement } from './lib/load.js' */
/** @import { Scenario } from './scenarios/index.js' */

/**
 * @typedef {object} Row
 * @property {string} scenario
 * @property {string} target
 * @property {Measurement} measurement
 */

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
    `software: node ${process.version}, fastify ${packageVersion('fastify')}, autocannon ${packageVersion('autocannon')}`,
    `load avg: ${load} (1/5/15 min, at start)`,
    `settings: ${settings.connections} connections, pipelining ${settings.pipelining}, ` +
      `${settings.duration} s measured after ${settings.warmup} s warm-up, per target; ` +
      'autocannon in this process, each server in its own',
  ].join('\n');
}

/**
 * Gatehouse's answer on the scenario's path: the body the peer will serve. Also checks that the limiter is
 * out of the way (the X-RateLimit-Limit header shows the raised capacity), so a bench that would measure
 * 429s stops here instead of after a full run.
 * @param {Gatehouse} gatehouse
 * @param {Scenario} scenario
 */
async function captureResponse(gatehouse, scenario) {
  const response = await waitForHttp(gatehouse.child, `${gatehouse.url}${scenario.path}`, {
    headers: scenario.headers({ host: gatehouse.tenantHost }),
  });
  const body = await response.text();
  const limit = response.headers.get('x-ratelimit-limit');
  if (limit !== null && Number(limit) < 1_000_000) {
    throw new Error(`${scenario.name}: Gatehouse still reports X-RateLimit-Limit ${limit}; raising the limit did not take`);
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) {
    throw new Error(`${scenario.name}: expected a JSON answer from Gatehouse, got ${response.headers.get('content-type')}`);
  }
  return body;
}

/**
 * Measures one scenario on Gatehouse, then on its peer (started here, on the captured body, and stopped
 * again before the next scenario).
 * @param {Gatehouse} gatehouse
 * @param {Scenario} scenario
 * @param {LoadSettings} settings
 * @returns {Promise<Row[]>}
 */
async function runScenario(gatehouse, scenario, settings) {
  const body = await captureResponse(gatehouse, scenario);
  const bodyFile = path.join(makeTempDir(`gatehouse-bench-${scenario.name}-`), 'body.json');
  writeFileSync(bodyFile, body);

  const peerPort = await freePort();
  const peer = startChild(scenario.peer.label, scenario.peer.script, [], {
    ...process.env,
    PORT: String(peerPort),
    HOST: '127.0.0.1',
    BENCH_PEER_PATH: scenario.path,
    BENCH_PEER_BODY_FILE: bodyFile,
  });
  try {
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const peerHeaders = scenario.headers({ host: `localhost:${peerPort}` });
    const peerBody = await (await waitForHttp(peer, `${peerUrl}${scenario.path}`, { headers: peerHeaders })).text();
    if (peerBody !== body) {
      throw new Error(`${scenario.name}: ${scenario.peer.label} does not answer the same bytes as Gatehouse.\n${describeOutput(peer)}`);
    }

    progress(`${scenario.name}: Gatehouse (${settings.warmup} s warm-up + ${settings.duration} s)`);
    const own = await measure(`${gatehouse.url}${scenario.path}`, scenario.headers({ host: gatehouse.tenantHost }), settings);
    progress(`${scenario.name}: ${scenario.peer.label} (${settings.warmup} s warm-up + ${settings.duration} s)`);
    const reference = await measure(`${peerUrl}${scenario.path}`, peerHeaders, settings);
    return [
      { scenario: scenario.name, target: 'Gatehouse', measurement: own },
      { scenario: scenario.name, target: scenario.peer.label, measurement: reference },
    ];
  } finally {
    await stopChild(peer);
  }
}

/** @param {number} ms */
function formatMs(ms) {
  return Number.isInteger(ms) ? String(ms) : ms.toFixed(2);
}

/** @param {Row[]} rows */
function table(rows) {
  const header = ['scenario', 'target', 'req/s (average)', 'p50 ms', 'p99 ms', 'non-2xx'];
  const numeric = [false, false, true, true, true, true];
  const lines = rows.map(({ scenario, target, measurement: m }) => [
    scenario,
    target,
    Math.round(m.requestsPerSecond).toLocaleString('en-US'),
    formatMs(m.p50),
    formatMs(m.p99),
    String(m.non2xx),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => (line[i] ?? '').length)));
  /** @param {string[]} cells */
  const format = (cells) =>
    cells.map((cell, i) => (numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join(' | ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(format)].join('\n');
}

/**
 * The figure of a scenario: Gatehouse's requests per second as a fraction of its peer's.
 * @param {Row[]} rows  the two rows of the scenario, Gatehouse first
 */
function ratioLine(rows) {
  const [own, reference] = rows;
  if (!own || !reference) return undefined;
  const failed = rows.filter((row) => row.measurement.problems.length > 0);
  if (failed.length > 0) {
    return `${own.scenario}: no ratio, the ${failed.map((row) => row.target).join(' and ')} run failed`;
  }
  const ratio = own.measurement.requestsPerSecond / reference.measurement.requestsPerSecond;
  return `${own.scenario}: Gatehouse at ${ratio.toFixed(2)}× of ${reference.target}`;
}

async function main() {
  /** @type {LoadSettings} */
  const settings = {
    duration: wholeNumber('BENCH_DURATION', 10, 3600),
    connections: wholeNumber('BENCH_CONNECTIONS', 50, 10_000),
    pipelining: PIPELINING,
    warmup: WARMUP_SECONDS,
  };
  console.log(machineFacts(settings));
  console.log('');

  progress('starting Gatehouse (first start bootstraps the data dir, then a restart with raised rate limits)');
  const gatehouse = await startGatehouse({ rateLimitBuckets: [...new Set(scenarios.flatMap((s) => s.rateLimitBuckets))] });
  progress(`Gatehouse is up on ${gatehouse.url} (tenant Host ${gatehouse.tenantHost})`);

  /** @type {Row[][]} */
  const results = [];
  for (const scenario of scenarios) results.push(await runScenario(gatehouse, scenario, settings));

  console.log(table(results.flat()));
  console.log('');
  for (const rows of results) {
    const line = ratioLine(rows);
    if (line) console.log(line);
  }
  const failures = results.flat().filter((row) => row.measurement.problems.length > 0);
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
