/**
 * Event streams: what emitting and delivering `user.created` costs, and how fast deliveries follow changes.
 * Users are created through the Management API (POST /api/v2/users) in a passwordless `email` connection, so
 * that no password hash is in the way and the figure is the change plus its event. A webhook stream subscribed
 * to `user.created` points at a receiver in this process that counts what arrives. Measured on Gatehouse with
 * 1 server process (SQLite):
 *  1. user creation flat out, no stream: the baseline (users/s and request latency);
 *  2. user creation flat out, with the stream: users/s, and events/s delivered over the same time (from the
 *     first create to the last delivery, so a backlog shows as a lower rate);
 *  3. user creation at a fixed offered rate (EVENTS_RATE, default 500/s) with the stream: events/s delivered,
 *     and change-to-delivery latency p50/p99, from the moment the 201 came back (the change had committed) to
 *     the moment the receiver had the event (0 when the event came first). Where the server cannot create
 *     users as fast as offered, requests queue; the figures say the rate reached and the latency from send too;
 *  4. delivery alone: users created while the receiver answers 400 (each event fails at once into a delivery
 *     record), then the receiver answers 204 and one POST /redeliver sends the whole backlog: events/s
 *     delivered with nothing else running, which is what delivery can keep pace with.
 *
 * Goals (the issue that added event streams): deliveries keep pace with at least 1,000 changes/s, and p99
 * change-to-delivery under 1 s at 500/s.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { FlowFailure, measureFlows } from '../lib/flow-load.js';
import { httpRequest, keepAliveAgent } from '../lib/http-client.js';
import { management } from '../lib/management.js';
import { failedRuns } from '../lib/report.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { LoadSettings, Measurement } from '../lib/load.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'events';
const CONNECTION = 'bench-events-email';
const GOAL_PACE = 1000;
const GOAL_P99_MS = 1000;
/** User creation with one stream, against without (issue #18). */
const GOAL_STREAM_RATIO = 0.85;
/** At the offered rate, the server keeps up when it creates at least this share of it (issue #18). */
const GOAL_KEEPS_UP = 0.95;
/** How long deliveries may trail the end of a run before the bench gives up waiting for them. */
const DRAIN_MS = 30_000;

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** @param {number} ms */
function round(ms) {
  return Math.round(ms * 100) / 100;
}

/** @param {number} n */
function fmt(n) {
  return Math.round(n).toLocaleString('en-US');
}

/**
 * A webhook receiver that answers 204 at once and notes when each user's `user.created` arrived. While
 * `state.failing` is set it answers 400 instead and notes the email as refused, except for one request in a
 * hundred: a stream is disabled after 500 failures in a row, and the bench wants a larger backlog than that.
 */
async function startReceiver() {
  /** @type {Map<string, number>} */
  const arrivals = new Map();
  const state = { failing: false, seen: 0, refused: /** @type {string[]} */ ([]) };
  const server = http.createServer((request, response) => {
    /** @type {Buffer[]} */
    const chunks = [];
    request.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      /** @type {string | undefined} */
      let email;
      try {
        const event = /** @type {{ type?: string, data?: { object?: { email?: string } } }} */ (JSON.parse(Buffer.concat(chunks).toString('utf8')));
        if (event.type === 'user.created') email = event.data?.object?.email;
      } catch {
        // Not an event: counted as nothing.
      }
      state.seen++;
      if (state.failing && state.seen % 100 !== 0) {
        if (email) state.refused.push(email);
        response.writeHead(400).end();
        return;
      }
      if (email && !arrivals.has(email)) arrivals.set(email, at);
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}/events`,
    arrivals,
    state,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: ['management'],
  async run({ gatehouse: running, settings, progress }) {
    const gatehouse = await running(1);
    const { token, call } = await management(gatehouse, NAME);
    const offered = Number(process.env.EVENTS_RATE ?? 500);
    const run = randomBytes(4).toString('hex');
    await call('POST', '/connections', { name: CONNECTION, strategy: 'email' }).catch(async (err) => {
      // Already there from an earlier scenario run on this data dir.
      if (!String(err).includes('409')) throw err;
    });

    const origin = new URL(gatehouse.url);
    const agent = keepAliveAgent(Math.max(settings.connections, 64));
    const headers = { host: gatehouse.tenantHost, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    let counter = 0;
    /** When each user's create request was sent, and when its 201 came back, by email. */
    /** @type {Map<string, number>} */
    const sentAt = new Map();
    /** @type {Map<string, number>} */
    const answeredAt = new Map();
    const createUser = async (/** @type {string} */ phase) => {
      counter += 1;
      const email = `${phase}-${run}-${counter}@bench.example`;
      sentAt.set(email, performance.now());
      const answer = await httpRequest(agent, origin, {
        method: 'POST',
        path: '/api/v2/users',
        headers,
        body: JSON.stringify({ connection: CONNECTION, email, email_verified: true }),
      });
      if (answer.status !== 201) throw new FlowFailure(`POST /api/v2/users answered HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
      answeredAt.set(email, performance.now());
      return email;
    };
    const pid = gatehouse.child.process.pid;

    /** @type {Row[]} */
    const rows = [];
    /** @type {string[]} */
    const figures = [];

    progress(`${NAME}: users created flat out, no stream (${settings.warmup} s warm-up + ${settings.duration} s)`);
    const baseline = await measureFlows(() => createUser('base').then(() => undefined), settings, pid);
    rows.push({ scenario: NAME, target: 'Gatehouse, no stream: users created', unit: 'users/s', measurement: baseline });

    const receiver = await startReceiver();
    try {
      const stream = /** @type {Record<string, unknown>} */ (await call('POST', '/event-streams', {
        name: `bench-${run}`,
        subscriptions: [{ event_type: 'user.created' }],
        destination: { type: 'webhook', configuration: { webhook_endpoint: receiver.url, webhook_authorization: { method: 'bearer', token: randomBytes(16).toString('hex') } } },
      }));
      if (typeof stream.id !== 'string') throw new Error(`${NAME}: no stream id in ${JSON.stringify(stream).slice(0, 200)}`);

      progress(`${NAME}: users created flat out, one webhook stream (${settings.warmup} s warm-up + ${settings.duration} s)`);
      /** @type {string[]} */
      const flatOut = [];
      const loadStarted = performance.now();
      const withStream = await measureFlows(() => createUser('flat').then((email) => void flatOut.push(email)), settings, pid);
      const loadEnded = performance.now();
      rows.push({ scenario: NAME, target: 'Gatehouse, 1 stream: users created', unit: 'users/s', measurement: withStream });
      const drained = await waitFor(() => flatOut.every((email) => receiver.arrivals.has(email)), DRAIN_MS);
      const lastArrival = lastOf(flatOut, receiver.arrivals);
      const pace = flatOut.length / ((lastArrival - loadStarted) / 1000);
      // Keeping pace: the last event arrives within a second of the last change, whatever the change rate was.
      const trailMs = Math.max(0, lastArrival - loadEnded);
      figures.push(
        `${NAME}: flat out with one stream, ${fmt(flatOut.length)} users created in ${settings.warmup + settings.duration} s and ` +
          `${drained ? 'all' : `only ${fmt(flatOut.filter((e) => receiver.arrivals.has(e)).length)}`} delivered, ` +
          `${fmt(pace)} events/s from the first create to the last delivery, the last ${fmt(trailMs)} ms after the last create ` +
          `(${drained && trailMs < 1000 ? 'kept pace' : 'FELL BEHIND'}; the goal of ${fmt(GOAL_PACE)} changes/s needs a machine that creates users that fast).`,
      );

      progress(`${NAME}: ${offered} users/s offered, one webhook stream (${settings.duration} s)`);
      const fixed = await fixedRate(() => createUser('rate'), offered, settings);
      await waitFor(() => fixed.emails.every((email) => receiver.arrivals.has(email)), DRAIN_MS);
      /** @param {Map<string, number>} from */
      const delays = (from) =>
        fixed.emails
          .map((email) => Math.max(0, (receiver.arrivals.get(email) ?? Number.NaN) - (from.get(email) ?? Number.NaN)))
          .filter((ms) => Number.isFinite(ms))
          .sort((a, b) => a - b);
      const latencies = delays(answeredAt);
      const fromSend = delays(sentAt);
      const createdPerSecond = fixed.emails.length / fixed.seconds;
      const fromSendP99 = round(percentile(fromSend, 99));
      figures.push(
        `${NAME}: at ${offered}/s offered, ${fmt(createdPerSecond)} users/s were created` +
          `${createdPerSecond < offered * GOAL_KEEPS_UP ? ' (the server fell behind the offered rate; requests queued)' : ''}; ` +
          `from sending the create request to delivery: p50 ${round(percentile(fromSend, 50))} ms, p99 ${fromSendP99} ms.`,
        `${NAME}: at ${offered}/s offered, keeps up (≥ ${GOAL_KEEPS_UP * 100}% created) with request-to-delivery p99 < ${GOAL_P99_MS} ms: ` +
          `${createdPerSecond >= offered * GOAL_KEEPS_UP && fromSendP99 < GOAL_P99_MS ? 'met' : 'MISSED'} (${fmt(createdPerSecond)}/s, p99 ${fromSendP99} ms)`,
      );
      const missing = fixed.emails.length - latencies.length;
      /** @type {Measurement} */
      const measurement = {
        // Over the time from the first create sent to the last event received: a backlog lowers it.
        requestsPerSecond: latencies.length / (Math.max(1, lastOf(fixed.emails, receiver.arrivals) - fixed.begin) / 1000),
        p50: round(percentile(latencies, 50)),
        p99: round(percentile(latencies, 99)),
        total: latencies.length,
        non2xx: fixed.failed,
        problems: [
          ...(fixed.failed > 0 ? [`${fixed.failed} failed creates (${fixed.reasons.join('; ')})`] : []),
          ...(missing > 0 ? [`${missing} events not delivered within ${DRAIN_MS / 1000} s`] : []),
        ],
        cpuPerOp: null,
        loadCpuPerOp: null,
      };
      rows.push({ scenario: NAME, target: `Gatehouse, 1 stream @ ${offered}/s offered: delivered, change-to-delivery`, unit: 'events/s', measurement });

      const backlog = Number(process.env.EVENTS_BACKLOG ?? 2000);
      progress(`${NAME}: ${backlog} users created while the receiver refuses, then redelivered at once`);
      receiver.state.failing = true;
      /** @type {string[]} */
      const created = [];
      let started = 0;
      const creators = Array.from({ length: settings.connections }, async () => {
        while (started < backlog) {
          started++;
          created.push(await createUser('backlog'));
        }
      });
      await Promise.all(creators);
      await waitFor(() => created.every((email) => receiver.state.refused.includes(email) || receiver.arrivals.has(email)), DRAIN_MS);
      const refused = [...receiver.state.refused];
      // The failures are written just after the 400s arrive.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      receiver.state.failing = false;
      const redeliverAt = performance.now();
      await call('POST', `/event-streams/${stream.id}/redeliver`, {});
      const all = await waitFor(() => refused.every((email) => receiver.arrivals.has(email)), DRAIN_MS);
      const backlogDelays = refused
        .map((email) => (receiver.arrivals.get(email) ?? Number.NaN) - redeliverAt)
        .filter((ms) => Number.isFinite(ms))
        .sort((a, b) => a - b);
      const seconds = Math.max(1, lastOf(refused, receiver.arrivals) - redeliverAt) / 1000;
      rows.push({
        scenario: NAME,
        target: `Gatehouse, redelivery of a ${fmt(refused.length)}-event backlog: delivered, time from the request`,
        unit: 'events/s',
        measurement: {
          requestsPerSecond: backlogDelays.length / seconds,
          p50: round(percentile(backlogDelays, 50)),
          p99: round(percentile(backlogDelays, 99)),
          total: backlogDelays.length,
          non2xx: 0,
          problems: all ? [] : [`${refused.length - backlogDelays.length} events not redelivered within ${DRAIN_MS / 1000} s`],
          cpuPerOp: null,
          loadCpuPerOp: null,
        },
      });
      await call('DELETE', `/event-streams/${stream.id}`);
    } finally {
      await receiver.close();
      agent.destroy();
    }

    const failed = failedRuns(rows);
    if (failed) {
      figures.push(`${NAME}: no ratio, ${failed}`);
      return { rows, figures };
    }
    const [base, streamed, rate, redelivered] = rows;
    if (redelivered) {
      figures.push(
        `${NAME}: delivery alone (a redelivered backlog) at ${fmt(redelivered.measurement.requestsPerSecond)} events/s ` +
          `(goal: keeps pace with ≥ ${fmt(GOAL_PACE)} changes/s): ${redelivered.measurement.requestsPerSecond >= GOAL_PACE ? 'met' : 'MISSED'}`,
      );
    }
    if (base && streamed && rate) {
      const streamRatio = streamed.measurement.requestsPerSecond / base.measurement.requestsPerSecond;
      const cpuRatio = streamed.measurement.cpuPerOp && base.measurement.cpuPerOp ? base.measurement.cpuPerOp / streamed.measurement.cpuPerOp : undefined;
      figures.push(
        `${NAME}: user creation with one stream at ${streamRatio.toFixed(2)}× the rate without (goal ≥ ${GOAL_STREAM_RATIO}×): ` +
          `${streamRatio >= GOAL_STREAM_RATIO ? 'met' : 'MISSED'} (the cost of the outbox rows and of delivering on the same cores` +
          `${cpuRatio === undefined ? '' : `; by server CPU per user, ${cpuRatio.toFixed(2)}×`})`,
        `${NAME}: change-to-delivery p99 at ${offered}/s offered: ${rate.measurement.p99} ms (goal < ${GOAL_P99_MS} ms): ` +
          `${rate.measurement.p99 < GOAL_P99_MS ? 'met' : 'MISSED'}; delivered ${fmt(rate.measurement.requestsPerSecond)} events/s`,
      );
    }
    return { rows, figures };
  },
};

/**
 * The latest arrival among `emails`.
 * @param {string[]} emails
 * @param {Map<string, number>} arrivals
 */
function lastOf(emails, arrivals) {
  let last = 0;
  for (const email of emails) last = Math.max(last, arrivals.get(email) ?? 0);
  return last;
}

/**
 * Polls `done` until it holds or `timeoutMs` passes.
 * @param {() => boolean} done
 * @param {number} timeoutMs
 */
async function waitFor(done, timeoutMs) {
  const until = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/**
 * An open-loop run: `rate` operations a second, started on schedule whatever the earlier ones are doing,
 * for `settings.duration` seconds.
 * @param {() => Promise<string>} operation  resolves with the email of the user it created
 * @param {number} rate
 * @param {LoadSettings} settings
 */
async function fixedRate(operation, rate, settings) {
  /** @type {string[]} */
  const emails = [];
  /** @type {Promise<void>[]} */
  const inFlight = [];
  let failed = 0;
  /** @type {Set<string>} */
  const reasons = new Set();
  const begin = performance.now();
  const total = Math.round(rate * settings.duration);
  let started = 0;
  while (started < total) {
    const due = Math.min(total, Math.floor(((performance.now() - begin) / 1000) * rate) + 1);
    for (; started < due; started++) {
      inFlight.push(
        operation().then(
          (email) => void emails.push(email),
          (/** @type {unknown} */ err) => {
            failed++;
            if (reasons.size < 3) reasons.add(err instanceof Error ? err.message : String(err));
          },
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all(inFlight);
  return { emails, failed, reasons: [...reasons], begin, seconds: (performance.now() - begin) / 1000 };
}
