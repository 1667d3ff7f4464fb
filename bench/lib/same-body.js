/**
 * A GET scenario whose peer answers the same path with the same bytes Gatehouse gave (peers/bare-fastify.js
 * serves any JSON GET): the ratio is what Gatehouse's request pipeline costs over returning that document.
 *
 * Gatehouse runs with one worker. Its answer is captured first; the peer is started on it, and the bench
 * checks that the two bodies match before it measures anything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { measure } from './load.js';
import { describeOutput, freePort, makeTempDir, startChild, stopChild, waitForHttp } from './processes.js';
import { failedRuns } from './report.js';

/** @import { Gatehouse } from './gatehouse.js' */
/** @import { Scenario } from '../scenarios/index.js' */

/**
 * @typedef {object} SameBodyOptions
 * @property {string} name
 * @property {string} path  the GET request path, the same on Gatehouse and on the peer
 * @property {(target: { host: string }) => Record<string, string>} headers
 *   request headers for a target; `host` is the Host that target expects (on Gatehouse, the one that selects
 *   the default tenant)
 * @property {{ label: string, script: string }} peer  how the report names it, and the absolute path of a
 *   Node script that serves GET PORT/BENCH_PEER_PATH with the JSON in BENCH_PEER_BODY_FILE on 127.0.0.1
 * @property {string[]} rateLimitBuckets
 * @property {number} [goal]  the least ratio of Gatehouse's rate to the peer's that meets the goal (printed met or MISSED)
 */

/**
 * Gatehouse's answer on the scenario's path: the body the peer will serve. Also checks that the limiter is
 * out of the way (the X-RateLimit-Limit header shows the raised capacity), so a bench that would measure
 * 429s stops here instead of after a full run.
 * @param {Gatehouse} gatehouse
 * @param {SameBodyOptions} options
 */
async function captureResponse(gatehouse, options) {
  const response = await waitForHttp(gatehouse.child, `${gatehouse.url}${options.path}`, {
    headers: options.headers({ host: gatehouse.tenantHost }),
  });
  const body = await response.text();
  const limit = response.headers.get('x-ratelimit-limit');
  if (limit !== null && Number(limit) < 1_000_000) {
    throw new Error(`${options.name}: Gatehouse still reports X-RateLimit-Limit ${limit}; raising the limit did not take`);
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) {
    throw new Error(`${options.name}: expected a JSON answer from Gatehouse, got ${response.headers.get('content-type')}`);
  }
  return body;
}

/**
 * @param {SameBodyOptions} options
 * @returns {Scenario}
 */
export function sameBodyScenario(options) {
  return {
    name: options.name,
    rateLimitBuckets: options.rateLimitBuckets,
    async run({ gatehouse: running, settings, progress }) {
      const gatehouse = await running(1);
      const body = await captureResponse(gatehouse, options);
      const bodyFile = path.join(makeTempDir(`gatehouse-bench-${options.name}-`), 'body.json');
      writeFileSync(bodyFile, body);

      const peerPort = await freePort();
      const peer = startChild(options.peer.label, options.peer.script, [], {
        ...process.env,
        PORT: String(peerPort),
        HOST: '127.0.0.1',
        BENCH_PEER_PATH: options.path,
        BENCH_PEER_BODY_FILE: bodyFile,
      });
      try {
        const peerUrl = `http://127.0.0.1:${peerPort}`;
        const peerHeaders = options.headers({ host: `localhost:${peerPort}` });
        const peerBody = await (await waitForHttp(peer, `${peerUrl}${options.path}`, { headers: peerHeaders })).text();
        if (peerBody !== body) {
          throw new Error(`${options.name}: ${options.peer.label} does not answer the same bytes as Gatehouse.\n${describeOutput(peer)}`);
        }

        progress(`${options.name}: Gatehouse (${settings.warmup} s warm-up + ${settings.duration} s)`);
        const own = await measure(
          `${gatehouse.url}${options.path}`,
          { headers: options.headers({ host: gatehouse.tenantHost }) },
          settings,
          gatehouse.child.process.pid,
        );
        progress(`${options.name}: ${options.peer.label} (${settings.warmup} s warm-up + ${settings.duration} s)`);
        const reference = await measure(`${peerUrl}${options.path}`, { headers: peerHeaders }, settings, peer.process.pid);
        const rows = [
          { scenario: options.name, target: 'Gatehouse', unit: 'req/s', measurement: own },
          { scenario: options.name, target: options.peer.label, unit: 'req/s', measurement: reference },
        ];
        const failed = failedRuns(rows);
        const ratio = own.requestsPerSecond / reference.requestsPerSecond;
        const goal = options.goal === undefined ? '' : ` (goal ≥ ${options.goal}×): ${ratio >= options.goal ? 'met' : 'MISSED'}`;
        const cpu = own.cpuPerOp && reference.cpuPerOp ? `; by server CPU per request, ${(reference.cpuPerOp / own.cpuPerOp).toFixed(2)}×` : '';
        return {
          rows,
          figures: [failed ? `${options.name}: no ratio, ${failed}` : `${options.name}: Gatehouse at ${ratio.toFixed(2)}× of ${options.peer.label}${goal}${cpu}`],
        };
      } finally {
        await stopChild(peer);
      }
    },
  };
}
