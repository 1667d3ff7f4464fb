/**
 * One autocannon measurement: a warm-up run (not reported), then the measured run, with the same settings.
 * A run with any non-2xx answer, connection error or timeout fails: its requests per second would mix the
 * endpoint with something else (a 429 path, a crash, a full backlog) and the ratio would be meaningless.
 */
import autocannon from 'autocannon';

/**
 * @typedef {object} LoadSettings
 * @property {number} connections
 * @property {number} pipelining
 * @property {number} duration  seconds of the measured run
 * @property {number} warmup    seconds of the warm-up run before it
 */

/**
 * @typedef {object} Measurement
 * @property {number} requestsPerSecond  average over the run's one-second samples
 * @property {number} p50                latency, ms
 * @property {number} p99                latency, ms
 * @property {number} total              completed requests
 * @property {number} non2xx
 * @property {string[]} problems         why the figure cannot be used; empty when it can
 */

/**
 * @param {string} url  full URL of the request (path included)
 * @param {Record<string, string>} headers
 * @param {LoadSettings} settings
 * @param {number} duration
 */
function run(url, headers, settings, duration) {
  return autocannon({
    url,
    method: 'GET',
    headers,
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
 * @param {Record<string, string>} headers
 * @param {LoadSettings} settings
 * @returns {Promise<Measurement>}
 */
export async function measure(url, headers, settings) {
  if (settings.warmup > 0) {
    const warmup = await run(url, headers, settings, settings.warmup);
    const problems = problemsOf(warmup);
    if (problems.length > 0) {
      return {
        requestsPerSecond: warmup.requests.average,
        p50: warmup.latency.p50,
        p99: warmup.latency.p99,
        total: warmup.requests.total,
        non2xx: warmup.non2xx,
        problems: problems.map((p) => `warm-up: ${p}`),
      };
    }
  }
  const result = await run(url, headers, settings, settings.duration);
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    problems: problemsOf(result),
  };
}
