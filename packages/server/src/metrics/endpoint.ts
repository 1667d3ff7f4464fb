/**
 * GET /metrics: the Prometheus text exposition of this process (metrics/registry.ts) plus what is read when
 * scraped: the event outbox's backlog and delivery lag, the log streams' state, backlog and lag, the password
 * hashing queue, and the PostgreSQL pool. Every answered request is counted by its route template here too.
 *
 * Who may read it: with GATEHOUSE_METRICS_TOKEN, a caller presenting it as a bearer token (from anywhere);
 * without, only this machine (a loopback client address, not forwarded by an untrusted proxy), as the dev
 * mailbox does. It is never public by default, and the token is compared in constant time and never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { Gauge, Registry } from 'prom-client';
import { ProtocolError } from '../http/errors.js';
import { loopbackPeersOnly } from '../http/loopback-only.js';
import { errorResponses, textBody, unauthorized } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { observe, processRegistry } from './registry.js';

class MetricsUnauthorized extends ProtocolError {
  constructor() {
    super(401, 'invalid_token', 'GET /metrics needs the metrics bearer token', { 'www-authenticate': 'Bearer realm="metrics"' });
  }
}

/** Logs counted per stream for the backlog gauge. */
const LOG_BACKLOG_CAP = 10_000;

const digest = (value: string) => createHash('sha256').update(value).digest();

function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = header === undefined ? null : /^Bearer ([\x21-\x7e]+)$/i.exec(header);
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

/** `read`, run once for the callers that ask while it runs (the gauges of one scrape). */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () =>
    (running ??= read().finally(() => {
      running = undefined;
    }));
}

/** The series read from storage at scrape time, for this app's store. */
function storageRegistry({ store }: Pick<Services, 'store'>): Registry {
  const registry = new Registry();
  // prom-client collects a registry's gauges concurrently: two gauges read by one query share it (`shared`),
  // so that neither shows the previous scrape's figure.
  const outbox = shared(async () => {
    const row = await store.db
      .selectFrom('event_deliveries')
      .select([(eb) => eb.fn.countAll<number | string>().as('n'), (eb) => eb.fn.min('created_at').as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return { pending: Number(row?.n ?? 0), lag: row?.oldest === null || row?.oldest === undefined ? 0 : Math.max(0, (Date.now() - Number(row.oldest)) / 1000) };
  });
  new Gauge({
    name: 'gatehouse_event_outbox_pending',
    help: 'Event deliveries waiting to be delivered (all streams)',
    registers: [registry],
    async collect() {
      this.set((await outbox()).pending);
    },
  });
  new Gauge({
    name: 'gatehouse_event_outbox_oldest_pending_seconds',
    help: 'Age of the oldest event delivery still pending (0 when none): the delivery lag',
    registers: [registry],
    async collect() {
      this.set((await outbox()).lag);
    },
  });
  new Gauge({
    name: 'gatehouse_event_deliveries_failed',
    help: 'Event deliveries stored as failed (out of attempts, redeliverable)',
    registers: [registry],
    async collect() {
      const row = await store.db
        .selectFrom('event_deliveries')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('status', '=', 'failed')
        .executeTakeFirst();
      this.set(Number(row?.n ?? 0));
    },
  });
  new Gauge({
    name: 'gatehouse_log_streams',
    help: 'Log streams by status',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const rows = await sql<{ status: string; n: number | string }>`select status, count(*) as n from log_streams group by status`.execute(store.db);
      this.reset();
      for (const status of ['active', 'paused', 'suspended']) this.set({ status }, Number(rows.rows.find((r) => r.status === status)?.n ?? 0));
    },
  });
  new Gauge({
    name: 'gatehouse_log_streams_failing',
    help: 'Active log streams whose last delivery attempt failed (retrying with backoff)',
    registers: [registry],
    async collect() {
      const row = await store.db
        .selectFrom('log_streams')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('status', '=', 'active')
        .where('consecutive_failures', '>', 0)
        .executeTakeFirst();
      this.set(Number(row?.n ?? 0));
    },
  });
  // A log stream is a cursor over `logs`: its backlog is the logs after the cursor (counted up to
  // LOG_BACKLOG_CAP per stream, so a stream far behind never makes a scrape walk its tenant's logs), its lag the
  // age of the oldest of them. Paused and suspended streams wait on purpose and are left out.
  const streams = shared(async () => {
    const active = await store.db.selectFrom('log_streams').select(['tenant_id', 'cursor']).where('status', '=', 'active').execute();
    let backlog = 0;
    let oldest: number | undefined;
    for (const stream of active) {
      const behind = await store.db
        .selectFrom((eb) =>
          eb.selectFrom('logs').select('date').where('tenant_id', '=', stream.tenant_id).where('log_id', '>', stream.cursor).orderBy('log_id').limit(LOG_BACKLOG_CAP).as('behind'),
        )
        .select([(eb) => eb.fn.countAll<number | string>().as('n'), (eb) => eb.fn.min('date').as('oldest')])
        .executeTakeFirst();
      backlog += Number(behind?.n ?? 0);
      if (behind?.oldest !== null && behind?.oldest !== undefined) oldest = Math.min(oldest ?? Infinity, Number(behind.oldest));
    }
    return { backlog, lag: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000) };
  });
  new Gauge({
    name: 'gatehouse_log_stream_backlog',
    help: `Log events not yet delivered (or skipped) by active log streams, summed over streams, each counted up to ${LOG_BACKLOG_CAP}`,
    registers: [registry],
    async collect() {
      this.set((await streams()).backlog);
    },
  });
  new Gauge({
    name: 'gatehouse_log_stream_lag_seconds',
    help: 'Age of the oldest log event an active log stream has not delivered yet (0 when none): the delivery lag',
    registers: [registry],
    async collect() {
      this.set((await streams()).lag);
    },
  });
  const poolStats = store.poolStats;
  if (poolStats) {
    new Gauge({
      name: 'gatehouse_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting clients, max)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = poolStats();
        for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
      },
    });
  }
  return registry;
}

export function registerMetrics(app: App, services: Pick<Services, 'store' | 'config'>): void {
  app.addHook('onResponse', (request, reply, done) => {
    // The route template, never the raw path (ids would make a series each); unmatched requests share one.
    const route = request.routeOptions.url ?? 'unmatched';
    observe.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  const storage = storageRegistry(services);
  const token = services.config.metricsToken;
  const expected = token === undefined ? undefined : digest(token);
  const loopbackOnly = loopbackPeersOnly(services.config.trustedProxies.length > 0);
  app.get('/metrics', {
    schema: {
      tags: ['health'],
      summary: 'Prometheus metrics (text exposition format)',
      description: expected
        ? 'This server has GATEHOUSE_METRICS_TOKEN set: callers present it as a bearer token.'
        : 'This server has no GATEHOUSE_METRICS_TOKEN: only clients on this machine may read the metrics (others get 404).',
      // Documented as this server is configured: one of the two refusals applies.
      response: {
        200: textBody('The metrics, in the Prometheus text format 0.0.4', 'text/plain'),
        ...errorResponses(
          'oauth',
          expected
            ? { 401: unauthorized('invalid_token: the request does not present the metrics token', 'Bearer realm="metrics"') }
            : { 404: 'The request is not from this machine (or was forwarded by a proxy that is not trusted)' },
        ),
      },
    },
    config: { tenantless: true },
    handler: async (request, reply) => {
      if (expected) {
        if (!bearerMatches(request.headers.authorization, expected)) throw new MetricsUnauthorized();
      } else {
        await loopbackOnly(request);
      }
      const body = await Registry.merge([processRegistry, storage]).metrics();
      reply.header('cache-control', 'no-store');
      return reply.type(processRegistry.contentType).send(body);
    },
  });
}
