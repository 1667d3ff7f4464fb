/**
 * The raw RS256 signing rate of this machine, measured the way Gatehouse signs an access token
 * (packages/server/src/crypto/jwt.ts): the header encoded once per key, the claims
 * `{ jti: randomUUID(), ...claims, iat, exp }` as base64url JSON, and node:crypto
 * `sign('sha256', input, keyObject, callback)` with an RSA 2048 KeyObject made by `createPrivateKey` from the JWK.
 * The callback form does the RSA work on libuv's thread pool, so one thread with many signs in flight already
 * uses every core the pool can reach; worker_threads add JavaScript parallelism on top.
 *
 * No HTTP, no database, no client authentication: this is the ceiling of "issue an RS256 JWT" on this
 * machine, and Gatehouse's tokens per second are read as a fraction of it.
 *
 * It keeps BENCH_SIGN_IN_FLIGHT signs outstanding (a new one starts as soon as one finishes) for
 * BENCH_SIGN_WARMUP + BENCH_SIGN_DURATION seconds, and counts the signs that complete within the last
 * BENCH_SIGN_DURATION seconds. With BENCH_SIGN_THREADS=0 they all run in this thread; with N > 0 they are split
 * over N worker_threads (BENCH_SIGN_IN_FLIGHT in total, as evenly as possible), all in this one process.
 *
 * Environment:
 *   BENCH_SIGN_TEMPLATE   JSON { header, claims, lifetime }: the protected header and the claims (without
 *                         jti, iat, exp, which are fresh per token) of a token Gatehouse issued
 *   BENCH_SIGN_IN_FLIGHT  (default 50), BENCH_SIGN_THREADS (default 0),
 *   BENCH_SIGN_DURATION   seconds (default 10), BENCH_SIGN_WARMUP seconds (default 2)
 * Prints one line `RESULT <json>` on stdout: { signsPerSecond, total, p50, p99, threads, inFlight, tokenBytes,
 * cpuPerSign }, where cpuPerSign is the µs of CPU this process (all its threads) used per counted sign.
 */
import { createPrivateKey, randomUUID, sign as rsaSign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { exportJWK, generateKeyPair } from 'jose';

/** @import { JWK, JWTPayload, JWTHeaderParameters } from 'jose' */

/**
 * @typedef {object} Template
 * @property {JWTHeaderParameters} header
 * @property {JWTPayload} claims
 * @property {number} lifetime  seconds
 */

/**
 * @typedef {object} LoopOptions
 * @property {Template} template
 * @property {JWK} jwk          the private key; imported here as the server imports it
 * @property {number} inFlight
 * @property {number} windowStart  Date.now() at which counting starts
 * @property {number} windowEnd    Date.now() at which the run stops
 */

/**
 * @typedef {object} LoopResult
 * @property {number} count        signs completed within the window
 * @property {number[]} latencies  ms, of those signs
 * @property {number} tokenBytes   length of one signed token
 */

/**
 * Keeps `inFlight` signs outstanding until the window ends; counts those that finish inside it.
 * @param {LoopOptions} options
 * @returns {Promise<LoopResult>}
 */
async function signLoop({ template, jwk, inFlight, windowStart, windowEnd }) {
  const key = createPrivateKey({ key: /** @type {import('node:crypto').JsonWebKey} */ (jwk), format: 'jwk' });
  const { header, claims, lifetime } = template;
  const encodedHeader = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.`;
  // Date.now() is shared between threads; performance.now() is cheaper and monotonic, so convert once.
  const offset = performance.now() - Date.now();
  const start = windowStart + offset;
  const end = windowEnd + offset;

  /** @returns {Promise<string>} */
  const sign = () => {
    const now = Math.floor(Date.now() / 1000);
    const input = encodedHeader + Buffer.from(JSON.stringify({ jti: randomUUID(), ...claims, iat: now, exp: now + lifetime })).toString('base64url');
    return new Promise((resolve, reject) =>
      rsaSign('sha256', Buffer.from(input), key, (err, signature) => (err ? reject(err) : resolve(`${input}.${signature.toString('base64url')}`))),
    );
  };
  const tokenBytes = (await sign()).length;

  /** @type {number[]} */
  const latencies = [];
  let count = 0;
  const lane = async () => {
    for (;;) {
      const began = performance.now();
      if (began >= end) return;
      await sign();
      const finished = performance.now();
      if (finished >= start && finished < end) {
        count++;
        latencies.push(finished - began);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return { count, latencies, tokenBytes };
}

/** @param {string} name @param {number} fallback */
function numberFromEnv(name, fallback) {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`raw-sign: ${name}=${raw}: expected a whole number`);
    process.exit(2);
  }
  return value;
}

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main() {
  const rawTemplate = process.env.BENCH_SIGN_TEMPLATE;
  if (!rawTemplate) {
    console.error('raw-sign: BENCH_SIGN_TEMPLATE is required');
    process.exit(2);
  }
  /** @type {Template} */
  const template = JSON.parse(rawTemplate);
  const inFlight = numberFromEnv('BENCH_SIGN_IN_FLIGHT', 50);
  const threads = numberFromEnv('BENCH_SIGN_THREADS', 0);
  const duration = numberFromEnv('BENCH_SIGN_DURATION', 10);
  const warmup = numberFromEnv('BENCH_SIGN_WARMUP', 2);

  // The same kind of key the server signs with: generated extractable, exported as a JWK, imported again.
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);

  // A little slack for the worker threads to start before the warm-up begins.
  const windowStart = Date.now() + (threads > 0 ? 500 : 0) + warmup * 1000;
  const windowEnd = windowStart + duration * 1000;

  // CPU of the whole process (every thread) over the counting window.
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpuAtStart;
  /** @type {NodeJS.CpuUsage | undefined} */
  let cpuInWindow;
  setTimeout(() => (cpuAtStart = process.cpuUsage()), windowStart - Date.now());
  setTimeout(() => (cpuInWindow = process.cpuUsage(cpuAtStart)), windowEnd - Date.now());

  /** @type {LoopResult[]} */
  let results;
  if (threads === 0) {
    results = [await signLoop({ template, jwk, inFlight, windowStart, windowEnd })];
  } else {
    const script = fileURLToPath(import.meta.url);
    results = await Promise.all(
      Array.from({ length: threads }, (_, i) => {
        // inFlight in total, spread as evenly as possible.
        const share = Math.floor(inFlight / threads) + (i < inFlight % threads ? 1 : 0);
        /** @type {LoopOptions} */
        const options = { template, jwk, inFlight: share, windowStart, windowEnd };
        return new Promise((resolve, reject) => {
          const worker = new Worker(script, { workerData: options });
          worker.once('message', resolve);
          worker.once('error', reject);
          worker.once('exit', (code) => {
            if (code !== 0) reject(new Error(`raw-sign worker exited with ${code}`));
          });
        });
      }),
    );
  }

  cpuInWindow ??= process.cpuUsage(cpuAtStart);
  const total = results.reduce((sum, r) => sum + r.count, 0);
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const result = {
    signsPerSecond: total / duration,
    total,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    threads,
    inFlight,
    tokenBytes: results[0]?.tokenBytes ?? 0,
    cpuPerSign: cpuInWindow && total > 0 ? (cpuInWindow.user + cpuInWindow.system) / total : null,
  };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

if (isMainThread) {
  await main();
} else {
  const result = await signLoop(/** @type {LoopOptions} */ (workerData));
  parentPort?.postMessage(result);
}
