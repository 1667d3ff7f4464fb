/**
 * One autocannon measurement: a warm-up run (not reported), then the measured run, with the same settings.
 * A run with any non-2xx answer, connection error or timeout fails: its requests per second would mix the
 * endpoint with something else (a 429 path, a crash, a full backlog) and the ratio would be meaningless.
 *
 * Around the measured run it also reads the CPU time of the server (its process tree) and of this process
 * (autocannon), per completed request: see lib/cpu.js.
 */
import autocannon from 'autocannon';
import { treeCpuSeconds } from './cpu.js';

/**
 * @typedef {object} LoadSettings
 * @property {number} connections
 * @property {number} pipelining
 * @property {number} duration  seconds of the measured run
 * @property {number} warmup    seconds of the warm-up run before it
 */

/**
 * @typedef {object} HttpRequest
 * @property {'GET' | 'POST'} [method]  GET by default
 * @property {Record<string, string>} headers
 * @property {string} [body]  sent as is with every request (autocannon sets content-length)
 * @property {(request: import('autocannon').Request) => import('autocannon').Request} [setupRequest]
 *   called before each request is written (autocannon's hook): for what must differ per request, such as a
 *   single-use DPoP proof; keep it cheap, it runs in the load generator
 */

/**
 * @typedef {object} Measurement
 * @property {number} requestsPerSecond  average over the run's one-second samples
 * @property {number} p50                latency, ms
 * @property {number} p99                latency, ms
 * @property {number} total              completed requests
 * @property {number | null} non2xx  null where there is no HTTP (the raw signing rate)
 * @property {string[]} problems         why the figure cannot be used; empty when it can
 * @property {number | null} cpuPerOp    µs of CPU the target used per completed request (all its processes and
 *   threads); null where it could not be read
 * @property {number | null} loadCpuPerOp  µs of CPU the load generator (this process) used per request; null
 *   where there is no load generator
 */

/**
 * @param {string} url  full URL of the request (path included)
 * @param {HttpRequest} request
 * @param {LoadSettings} settings
 * @param {number} duration
 */
function run(url, { method = 'GET', headers, body, setupRequest }, settings, duration) {
  return autocannon({
    url,
    method,
    headers,
    ...(body !== undefined && { body }),
    ...(setupRequest && { requests: [{ setupRequest }] }),
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration,
  });
}

/**
 * What is wrong with a run, in words; empty when nothing is.
 * @param {import('autocannon').Result} result
 */
function problemsOf(result) {
  const problems = [];
  if (result.non2xx > 0) {
    const byStatus = Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, { count }]) => `${count ?? 0}× ${status}`)
      .join(', ');
    problems.push(`${result.non2xx} non-2xx responses${byStatus ? ` (${byStatus})` : ''}`);
  }
  if (result.errors > 0) problems.push(`${result.errors} connection errors (${result.timeouts} of them timeouts)`);
  if (result['2xx'] === 0) problems.push('no successful response at all');
  return problems;
}

/**
 * Warm-up, then the measured run. A warm-up that already shows problems skips the measured run.
 * @param {string} url
 * @param {HttpRequest} request
 * @param {LoadSettings} settings
 * @param {number} [serverPid]  the target's process (its descendants count too), for CPU per request
 * @returns {Promise<Measurement>}
 */
export async function measure(url, request, settings, serverPid) {
  if (settings.warmup > 0) {
    const warmup = await run(url, request, settings, settings.warmup);
    const problems = problemsOf(warmup);
    if (problems.length > 0) {
      return {
        requestsPerSecond: warmup.requests.average,
        p50: warmup.latency.p50,
        p99: warmup.latency.p99,
        total: warmup.requests.total,
        non2xx: warmup.non2xx,
        problems: problems.map((p) => `warm-up: ${p}`),
        cpuPerOp: null,
        loadCpuPerOp: null,
      };
    }
  }
  const serverBefore = serverPid === undefined ? undefined : treeCpuSeconds(serverPid);
  const ownBefore = process.cpuUsage();
  const result = await run(url, request, settings, settings.duration);
  const own = process.cpuUsage(ownBefore);
  const serverAfter = serverPid === undefined ? undefined : treeCpuSeconds(serverPid);
  const requests = result.requests.total;
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    problems: problemsOf(result),
    cpuPerOp: serverBefore !== undefined && serverAfter !== undefined && requests > 0 ? ((serverAfter - serverBefore) * 1e6) / requests : null,
    loadCpuPerOp: requests > 0 ? (own.user + own.system) / requests : null,
  };
}
