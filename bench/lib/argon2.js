/**
 * The reference of the user-login scenarios (authorization_code, password_realm): this machine's raw argon2id
 * verification rate across all its cores (peers/raw-argon2.js in its own process), measured in the same run,
 * on a hash the server stored for a bench user. Every login costs Gatehouse one such verification, which is
 * most of its work, so its logins per second are read as a fraction of this rate.
 *
 * And the shape both scenarios share: Gatehouse with 1 then 2 server processes, then the raw rate, then the
 * ratio of the best Gatehouse row to it against the goal.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describeOutput, startChild } from './processes.js';
import { failedRuns } from './report.js';

/** @import { Gatehouse } from './gatehouse.js' */
/** @import { LoadSettings, Measurement } from './load.js' */
/** @import { Row } from './report.js' */

const RAW_ARGON2_SCRIPT = fileURLToPath(new URL('../peers/raw-argon2.js', import.meta.url));
export const RAW_ARGON2_LABEL = 'raw argon2id verify (all cores)';

/**
 * The password hash Gatehouse stored for the user with this email, read from its SQLite file (read-only; the
 * server keeps running, WAL lets both read).
 * @param {Gatehouse} gatehouse
 * @param {string} email
 */
export function storedPasswordHash(gatehouse, email) {
  const db = new Database(path.join(gatehouse.dataDir, 'gatehouse.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const row = /** @type {{ password_hash: string | null } | undefined} */ (db.prepare('SELECT password_hash FROM users WHERE email = ?').get(email));
    if (!row?.password_hash) throw new Error(`no stored password hash for ${email} in the bench database`);
    return row.password_hash;
  } finally {
    db.close();
  }
}

/**
 * @typedef {object} RawArgon2Result
 * @property {number} verificationsPerSecond
 * @property {number} total
 * @property {number} p50
 * @property {number} p99
 * @property {number} inFlight
 * @property {number} threadPool
 * @property {string} parameters  m=…,t=…,p=… of the hash
 * @property {number | null} cpuPerVerification
 */

/**
 * One run of peers/raw-argon2.js in its own process, with a thread pool of `threadPool` threads.
 * @param {{ hash: string, password: string, inFlight: number, threadPool: number }} options
 * @param {LoadSettings} settings
 * @returns {Promise<RawArgon2Result>}
 */
async function rawArgon2Run({ hash, password, inFlight, threadPool }, settings) {
  const child = startChild('raw argon2id', RAW_ARGON2_SCRIPT, [], {
    ...process.env,
    UV_THREADPOOL_SIZE: String(threadPool),
    BENCH_ARGON2_HASH: hash,
    BENCH_ARGON2_PASSWORD: password,
    BENCH_ARGON2_IN_FLIGHT: String(inFlight),
    BENCH_ARGON2_DURATION: String(settings.duration),
    BENCH_ARGON2_WARMUP: String(settings.warmup),
  });
  const code = await child.exited;
  const line = child
    .output()
    .split('\n')
    .find((l) => l.startsWith('RESULT '));
  if (code !== 0 || !line) throw new Error(`raw argon2id verification failed (exit ${code}).\n${describeOutput(child)}`);
  return /** @type {RawArgon2Result} */ (JSON.parse(line.slice('RESULT '.length)));
}

/**
 * The raw rate, measured with a thread pool of one thread per CPU and with twice that (at least libuv's
 * default of 4), each with max(connections, pool size) verifications in flight; the table gets the higher.
 * @param {string} scenario
 * @param {{ hash: string, password: string }} sample
 * @param {LoadSettings} settings
 * @param {(message: string) => void} progress
 * @returns {Promise<{ row: Row, figure: string }>}
 */
export async function rawArgon2Row(scenario, sample, settings, progress) {
  const cpus = os.cpus().length;
  const pools = [...new Set([cpus, Math.max(4, 2 * cpus)])];
  /** @type {RawArgon2Result[]} */
  const runs = [];
  for (const threadPool of pools) {
    const inFlight = Math.max(settings.connections, threadPool);
    progress(`${scenario}: raw argon2id verify, ${inFlight} in flight, thread pool of ${threadPool} (${settings.warmup} s warm-up + ${settings.duration} s)`);
    runs.push(await rawArgon2Run({ ...sample, inFlight, threadPool }, settings));
  }
  const best = runs.reduce((a, b) => (b.verificationsPerSecond > a.verificationsPerSecond ? b : a));
  /** @type {Measurement} */
  const measurement = {
    requestsPerSecond: best.verificationsPerSecond,
    p50: best.p50,
    p99: best.p99,
    total: best.total,
    non2xx: null,
    problems: best.total > 0 ? [] : ['no verification completed'],
    cpuPerOp: best.cpuPerVerification,
    loadCpuPerOp: null,
  };
  const figure =
    `${scenario}: raw argon2id is @node-rs/argon2 verify (thread pool) on the hash Gatehouse stored for a bench user (${best.parameters}): ` +
    runs.map((r) => `${fmt(r.verificationsPerSecond)}/s with a pool of ${r.threadPool} threads (${r.inFlight} in flight)`).join(', ') +
    `, on ${cpus} CPUs; the table shows the higher.`;
  return { row: { scenario, target: RAW_ARGON2_LABEL, unit: 'verifies/s', measurement }, figure };
}

/**
 * The ratio line of a login scenario: Gatehouse's best row against the raw rate.
 * @param {string} scenario
 * @param {Row[]} own  Gatehouse's rows
 * @param {Row} raw
 * @param {Row[]} rows  all the scenario's rows (for failures)
 * @param {number} goal  fraction of the raw rate
 */
export function argon2Ratio(scenario, own, raw, rows, goal) {
  const failed = failedRuns(rows);
  if (failed) return `${scenario}: no ratio, ${failed}`;
  const top = own.reduce((a, b) => (b.measurement.requestsPerSecond > a.measurement.requestsPerSecond ? b : a));
  const ratio = top.measurement.requestsPerSecond / raw.measurement.requestsPerSecond;
  return `${scenario}: Gatehouse (best) at ${(ratio * 100).toFixed(1)}% of raw argon2id verification (goal ≥ ${goal * 100}%): ${ratio >= goal ? 'met' : 'MISSED'}; best = ${top.target}`;
}

/**
 * A line on CPU per operation, which moves much less than the rates when something else on the machine takes
 * CPU time (see README, Reading the numbers): what a login costs Gatehouse (its processes plus the load
 * generator) against one raw verification, and the share of the raw rate that leaves on a saturated machine.
 * Informational; the goal is the ratio of the rates. Undefined when a figure is missing.
 * @param {string} scenario
 * @param {string} unit  what one operation is ("login", "flow")
 * @param {Row[]} own
 * @param {Row} raw
 */
export function argon2CpuLine(scenario, unit, own, raw) {
  const rawCpu = raw.measurement.cpuPerOp;
  const parts = own.flatMap(({ target, measurement: { cpuPerOp, loadCpuPerOp } }) =>
    cpuPerOp === null || rawCpu === null
      ? []
      : [`${target} ${fmt(cpuPerOp)} µs + load gen. ${fmt(loadCpuPerOp ?? 0)} µs (${((rawCpu / (cpuPerOp + (loadCpuPerOp ?? 0))) * 100).toFixed(0)}%)`],
  );
  if (parts.length === 0 || rawCpu === null) return undefined;
  return (
    `${scenario}: CPU per ${unit} against ${fmt(rawCpu)} µs per raw verification, and the share of the raw rate that leaves ` +
    `on a saturated machine: ${parts.join(', ')}.`
  );
}

/** @param {number} n */
export function fmt(n) {
  return Math.round(n).toLocaleString('en-US');
}
