/**
 * A load loop for what autocannon's fixed request list cannot express: an operation made of several
 * dependent HTTP requests (a browser login: authorize, login page, form POST, resume, token), or one that
 * differs per virtual user (each logs in its own user). `settings.connections` virtual users each run the
 * operation again as soon as it ends, like autocannon's connections each send the next request.
 *
 * Unlike lib/load.js `measure`, warm-up and measured window are one continuous run: the virtual users start
 * together, run through the warm-up (not counted), and the measured window follows without a restart. An
 * operation here can take a second or more (a queue of password hashes), and a restart would make every user
 * start in step again, which the first seconds of the window would measure. The rate counts operations that
 * finished inside the window (those in flight at its end are let finish, not counted). Latency is of a whole
 * operation, in ms (performance.now(), so not rounded to whole ms like autocannon's). CPU per operation is read
 * as in lib/load.js, over exactly the window.
 *
 * An operation fails by throwing. A FlowFailure (an answer other than the one the step expects) counts in
 * `non2xx` ("failed operations"); anything else (connection reset, timeout) is a connection error. Any failure
 * makes the run unusable, as in lib/load.js, whether it happened in the warm-up or in the window.
 */
import { performance } from 'node:perf_hooks';
import { treeCpuSeconds } from './cpu.js';

/** @import { LoadSettings, Measurement } from './load.js' */

/** A step of an operation got an answer other than the one it expects. */
export class FlowFailure extends Error {
  /** @override */
  name = 'FlowFailure';
}

/** Distinct failure messages kept for the report. */
const MAX_REASONS = 5;

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** @param {number} ms  to 2 decimals, so that the table shows it as such */
function round(ms) {
  return Math.round(ms * 100) / 100;
}

/**
 * Warm-up then the measured window, in one run of `settings.connections` virtual users (numbered 0 … n-1).
 * @param {(user: number) => Promise<void>} operation  one whole operation; throws when anything is wrong
 * @param {LoadSettings} settings
 * @param {number} [serverPid]  the target's process (its descendants count too), for CPU per operation
 * @returns {Promise<Measurement>}
 */
export async function measureFlows(operation, settings, serverPid) {
  const begin = performance.now();
  const start = begin + settings.warmup * 1000;
  const end = start + settings.duration * 1000;
  /** @type {number[]} */
  const latencies = [];
  let failed = 0;
  let errors = 0;
  /** @type {Map<string, number>} */
  const reasons = new Map();

  const cpuNow = () => ({ server: serverPid === undefined ? undefined : treeCpuSeconds(serverPid), own: process.cpuUsage() });
  /** @type {ReturnType<typeof cpuNow> | undefined} */
  let atStart;
  /** @type {ReturnType<typeof cpuNow> | undefined} */
  let atEnd;
  const timers = [setTimeout(() => (atStart = cpuNow()), start - begin), setTimeout(() => (atEnd = cpuNow()), end - begin)];

  const lane = async (/** @type {number} */ user) => {
    while (performance.now() < end) {
      const began = performance.now();
      try {
        await operation(user);
      } catch (err) {
        if (err instanceof FlowFailure) failed++;
        else errors++;
        const reason = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
        if (reasons.has(reason) || reasons.size < MAX_REASONS) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        continue;
      }
      const finished = performance.now();
      if (finished >= start && finished < end) latencies.push(finished - began);
    }
  };
  await Promise.all(Array.from({ length: settings.connections }, (_, user) => lane(user)));
  for (const timer of timers) clearTimeout(timer);
  atEnd ??= cpuNow();

  const completed = latencies.length;
  latencies.sort((a, b) => a - b);
  const problems = [];
  if (failed > 0) problems.push(`${failed} failed operations`);
  if (errors > 0) problems.push(`${errors} connection errors`);
  if (reasons.size > 0) problems.push(`(${[...reasons].map(([reason, count]) => `${count}× ${reason}`).join('; ')})`);
  if (completed === 0) problems.push('no operation completed in the measured window');
  const serverCpu = atStart?.server !== undefined && atEnd.server !== undefined ? atEnd.server - atStart.server : undefined;
  const ownCpu = atStart ? atEnd.own.user + atEnd.own.system - (atStart.own.user + atStart.own.system) : undefined;
  return {
    requestsPerSecond: completed / settings.duration,
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    total: completed,
    non2xx: failed,
    problems,
    cpuPerOp: serverCpu !== undefined && completed > 0 ? (serverCpu * 1e6) / completed : null,
    loadCpuPerOp: ownCpu !== undefined && completed > 0 ? ownCpu / completed : null,
  };
}
