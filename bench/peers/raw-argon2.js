/**
 * The raw argon2id verification rate of this machine: @node-rs/argon2 `verify(storedHash, password)`, which is
 * what Gatehouse does for every password login (packages/server/src/crypto/passwords.ts verifyPassword), on a
 * hash the server itself stored for a bench user, so the parameters (m, t, p) are the server's own.
 *
 * The async `verify` runs on libuv's thread pool; this process keeps BENCH_ARGON2_IN_FLIGHT verifications
 * outstanding (a new one starts as soon as one finishes), so the pool's threads are never idle. The size of
 * the pool (UV_THREADPOOL_SIZE, set by the caller) is what decides how many cores it uses: the bench runs this
 * once per pool size and keeps the best.
 *
 * No HTTP, no database, no tokens: this is the ceiling of "check a password" on this machine, and Gatehouse's
 * logins per second are read as a fraction of it.
 *
 * Environment: BENCH_ARGON2_HASH (PHC string, required), BENCH_ARGON2_PASSWORD (required),
 *   BENCH_ARGON2_IN_FLIGHT (default 50), BENCH_ARGON2_DURATION seconds (default 10),
 *   BENCH_ARGON2_WARMUP seconds (default 2).
 * Prints one line `RESULT <json>` on stdout: { verificationsPerSecond, total, p50, p99, inFlight, threadPool,
 * parameters, cpuPerVerification }. Exits with 1 if any verification does not return true.
 */
import { performance } from 'node:perf_hooks';
import { parseOptions, verify } from '@node-rs/argon2';

/** @param {string} name */
function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`raw-argon2: ${name} is required`);
    process.exit(2);
  }
  return value;
}

/** @param {string} name @param {number} fallback */
function numberFromEnv(name, fallback) {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`raw-argon2: ${name}=${raw}: expected a whole number`);
    process.exit(2);
  }
  return value;
}

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const hash = required('BENCH_ARGON2_HASH');
const password = required('BENCH_ARGON2_PASSWORD');
const inFlight = numberFromEnv('BENCH_ARGON2_IN_FLIGHT', 50);
const duration = numberFromEnv('BENCH_ARGON2_DURATION', 10);
const warmup = numberFromEnv('BENCH_ARGON2_WARMUP', 2);

if (!hash.startsWith('$argon2id$')) {
  console.error(`raw-argon2: the stored hash is not argon2id: ${hash.slice(0, 30)}…`);
  process.exit(2);
}
if (!(await verify(hash, password))) {
  console.error('raw-argon2: the password does not verify against the stored hash');
  process.exit(1);
}

const start = performance.now() + warmup * 1000;
const end = start + duration * 1000;
/** @type {NodeJS.CpuUsage | undefined} */
let cpuAtStart;
/** @type {NodeJS.CpuUsage | undefined} */
let cpuInWindow;
setTimeout(() => (cpuAtStart = process.cpuUsage()), warmup * 1000);
setTimeout(() => (cpuInWindow = process.cpuUsage(cpuAtStart)), (warmup + duration) * 1000);

/** @type {number[]} */
const latencies = [];
let wrong = 0;
const lane = async () => {
  for (;;) {
    const began = performance.now();
    if (began >= end) return;
    const ok = await verify(hash, password);
    const finished = performance.now();
    if (!ok) wrong++;
    else if (finished >= start && finished < end) latencies.push(finished - began);
  }
};
await Promise.all(Array.from({ length: inFlight }, lane));
cpuInWindow ??= process.cpuUsage(cpuAtStart);

if (wrong > 0) {
  console.error(`raw-argon2: ${wrong} verifications returned false`);
  process.exit(1);
}
const total = latencies.length;
latencies.sort((a, b) => a - b);
const { memoryCost, timeCost, parallelism } = parseOptions(hash);
const result = {
  verificationsPerSecond: total / duration,
  total,
  p50: Math.round(percentile(latencies, 50) * 100) / 100,
  p99: Math.round(percentile(latencies, 99) * 100) / 100,
  inFlight,
  threadPool: Number(process.env.UV_THREADPOOL_SIZE || 4),
  parameters: `m=${memoryCost},t=${timeCost},p=${parallelism}`,
  cpuPerVerification: cpuInWindow && total > 0 ? (cpuInWindow.user + cpuInWindow.system) / total : null,
};
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
