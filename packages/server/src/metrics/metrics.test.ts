/**
 * GET /metrics over real HTTP, parsed by a Prometheus text-format parser (parse-prometheus-text-format): the
 * listed series are there and move by exactly what known requests did (requests by route template and status,
 * latency histogram, token issuance by grant, sign-in outcomes by type and connection, 429s); storage series
 * (outbox backlog and lag, log streams, PostgreSQL pool) are read at scrape time. Who may read it: loopback only
 * by default (a forwarded request is refused); with GATEHOUSE_METRICS_TOKEN, the bearer token, which never
 * reaches the server's log. /readyz follows Redis: it fails while the Redis it is configured with is
 * unreachable (a real TCP proxy in front of the real Redis, closed and reopened) and recovers with it.
 */
import net from 'node:net';
import { availableParallelism } from 'node:os';
import { Writable } from 'node:stream';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { createClient, post } from '../auth-api/user-tokens/testing.js';
import { hashPassword } from '../crypto/passwords.js';
import { startReceiver } from '../events/test-receiver.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { postgresAvailable, REDIS_URL, redisAvailable } from '../test-support/services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

const METRICS_TOKEN = 'metrics-token-0123456789-never-logged';

let lastText = '';

async function scrape(server: TestServer, headers: Record<string, string> = {}): Promise<ParsedFamily[]> {
  const res = await fetch(`${server.server.listenUrl}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  lastText = await res.text();
  return parsePrometheusTextFormat(lastText);
}

/**
 * A labelled histogram's `_count` sample, read from the text: the parser keeps only the buckets of labelled
 * histograms, so the count is checked on the exposition itself.
 */
function histogramCount(text: string, name: string, labels: Record<string, string>): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}_count{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

function family(families: ParsedFamily[], name: string): ParsedFamily {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no series ${name}`);
  return found;
}

/** The value of the sample whose labels include `labels` (0 when there is none yet). */
function value(families: ParsedFamily[], name: string, labels: Record<string, string> = {}): number {
  const sample = family(families, name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  if (!sample) return 0;
  return Number(sample.value ?? sample.count);
}

describe('GET /metrics, loopback only by default', () => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer();
    token = await managementToken(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('has the listed series, moving by what known requests did', async () => {
    const before = await scrape(server);
    const beforeText = lastText;
    for (const name of [
      'gatehouse_http_requests_total',
      'gatehouse_http_request_duration_seconds',
      'gatehouse_event_outbox_pending',
      'gatehouse_event_outbox_oldest_pending_seconds',
      'gatehouse_event_deliveries_failed',
      'gatehouse_log_streams',
      'gatehouse_log_streams_failing',
      'gatehouse_log_stream_backlog',
      'gatehouse_log_stream_lag_seconds',
      'gatehouse_password_hash_queue_depth',
      'gatehouse_password_hash_running',
      'gatehouse_email_send_failures_total',
      'gatehouse_process_cpu_seconds_total',
    ]) {
      expect(family(before, name).name).toBe(name);
    }
    expect(family(before, 'gatehouse_http_request_duration_seconds').type).toBe('HISTOGRAM');

    const route = { method: 'GET', route: '/api/v2/clients/:id', status_code: '404' };
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${server.url}/api/v2/clients/missing-${i}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(404);
    }
    const issued = await post(server, '/oauth/token', {
      grant_type: 'client_credentials',
      client_id: server.admin.client_id,
      client_secret: server.admin.client_secret,
      audience: server.server.prepared.bootstrap!.managementAudience,
    });
    expect(issued.status).toBe(200);
    const app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT] });
    const wrong = await post(server, '/oauth/token', { grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME, ...app.auth, username: 'nobody@example.com', password: 'not a password 1' });
    expect(wrong.status).toBe(403);
    const after = await scrape(server);

    expect(value(after, 'gatehouse_http_requests_total', route) - value(before, 'gatehouse_http_requests_total', route)).toBe(3);
    expect(histogramCount(lastText, 'gatehouse_http_request_duration_seconds', route) - histogramCount(beforeText, 'gatehouse_http_request_duration_seconds', route)).toBe(3);
    const grant = { grant_type: 'client_credentials' };
    expect(value(after, 'gatehouse_tokens_issued_total', grant) - value(before, 'gatehouse_tokens_issued_total', grant)).toBe(1);
    const failed = { outcome: 'failure', type: 'fu', connection: DATABASE_CONNECTION_NAME };
    expect(value(after, 'gatehouse_login_outcomes_total', failed) - value(before, 'gatehouse_login_outcomes_total', failed)).toBe(1);
    expect(value(after, 'gatehouse_token_failures_total', { grant_type: PASSWORD_REALM_GRANT })).toBeGreaterThanOrEqual(1);
    // Raw paths never become labels.
    expect(family(after, 'gatehouse_http_requests_total').metrics.some((m) => m.labels?.route?.includes('missing-'))).toBe(false);
  });

  it('shows the password hashing queue filling and draining', async () => {
    // Four times as many hashes as there are slots, started at once: all but a slot's worth wait.
    expect(value(await scrape(server), 'gatehouse_password_hash_running')).toBe(0);
    const hashes = Array.from({ length: 4 * availableParallelism() }, (_, i) => hashPassword(`queued password ${i}`));
    const busy = await scrape(server);
    expect(value(busy, 'gatehouse_password_hash_queue_depth')).toBeGreaterThan(0);
    expect(value(busy, 'gatehouse_password_hash_running')).toBe(availableParallelism());
    await Promise.all(hashes);
    const idle = await scrape(server);
    expect(value(idle, 'gatehouse_password_hash_queue_depth')).toBe(0);
    expect(value(idle, 'gatehouse_password_hash_running')).toBe(0);
  });

  it('shows a log stream falling behind while its receiver fails, and catching up once it accepts', async () => {
    const receiver = await startReceiver();
    try {
      let accepting = false;
      receiver.answer = () => ({ status: accepting ? 200 : 500 });
      const token = await managementToken(server);
      const created = await fetch(`${server.url}/api/v2/log-streams`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'metrics lag', type: 'http', sink: { httpEndpoint: receiver.url, httpContentFormat: 'JSONARRAY' } }),
      });
      expect(created.status).toBe(200);
      const tenantId = server.server.prepared.bootstrap!.tenant.id;
      for (let i = 0; i < 5; i++) server.server.services.tenantLogs.record(tenantId, { type: 'fu', user_name: `lagging${i}` }, { ip: null, user_agent: null, hostname: null });
      await server.server.services.tenantLogs.flush();
      // The worker has tried (and failed) at least twice: the logs are still behind, and getting older.
      await receiver.waitFor((received) => received.length >= 2, 20_000);
      const behind = await scrape(server);
      expect(value(behind, 'gatehouse_log_stream_backlog')).toBeGreaterThanOrEqual(5);
      expect(value(behind, 'gatehouse_log_stream_lag_seconds')).toBeGreaterThan(1);
      expect(value(behind, 'gatehouse_log_streams_failing')).toBe(1);
      accepting = true;
      await expect.poll(async () => value(await scrape(server), 'gatehouse_log_stream_backlog'), { timeout: 30_000, interval: 250 }).toBe(0);
      const caughtUp = await scrape(server);
      expect(value(caughtUp, 'gatehouse_log_stream_lag_seconds')).toBe(0);
      expect(value(caughtUp, 'gatehouse_log_streams_failing')).toBe(0);
      expect(receiver.received.at(-1)!.body).toContain('lagging4');
    } finally {
      await receiver.close();
    }
  });

  it('refuses a request forwarded by a proxy it does not trust, as if there were no such route', async () => {
    const res = await fetch(`${server.server.listenUrl}/metrics`, { headers: { 'x-forwarded-for': '198.51.100.4' } });
    expect(res.status).toBe(404);
  });
});

const withRedis = await redisAvailable();

describe.runIf(withRedis)('GET /metrics with a token, and /readyz with Redis', () => {
  let server: TestServer;
  let proxy: net.Server;
  let proxyPort = 0;
  const sockets = new Set<net.Socket>();
  const log: string[] = [];

  /** A TCP proxy to the real Redis, so that this server alone can lose it. */
  async function openProxy(port = 0): Promise<void> {
    const target = new URL(REDIS_URL);
    proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as net.AddressInfo).port;
  }
  async function closeProxy(): Promise<void> {
    const closed = new Promise<void>((resolve) => proxy.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  }

  beforeAll(async () => {
    await openProxy();
    server = await startTestServer({
      dialect: (await postgresAvailable()) ? 'postgres' : 'sqlite',
      env: { GATEHOUSE_METRICS_TOKEN: METRICS_TOKEN, REDIS_URL: `redis://127.0.0.1:${proxyPort}`, GATEHOUSE_LOG_LEVEL: 'debug' },
      logStream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          log.push(chunk.toString());
          done();
        },
      }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await closeProxy();
  });

  it('answers only the bearer token, which never reaches the log', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Basic ${METRICS_TOKEN}` }];
    for (const headers of attempts) {
      const res = await fetch(`${server.server.listenUrl}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.text()).not.toContain(METRICS_TOKEN);
    }
    const families = await scrape(server, { authorization: `Bearer ${METRICS_TOKEN}` });
    if (server.server.prepared.store.dialect === 'postgres') {
      expect(value(families, 'gatehouse_db_pool_connections', { state: 'max' })).toBe(10);
      expect(value(families, 'gatehouse_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    }
    await server.server.services.tenantLogs.flush();
    expect(log.join('')).not.toContain(METRICS_TOKEN);
  });

  it('/readyz fails while its Redis is unreachable, and recovers with it', async () => {
    const ready = async () => (await fetch(`${server.server.listenUrl}/readyz`)).status;
    expect(await ready()).toBe(200);
    const port = proxyPort;
    await closeProxy();
    await expect.poll(ready, { timeout: 20_000, interval: 200 }).toBe(503);
    const body = (await (await fetch(`${server.server.listenUrl}/readyz`)).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'temporarily_unavailable', error_description: 'Redis is unreachable' });
    await openProxy(port);
    await expect.poll(ready, { timeout: 30_000, interval: 200 }).toBe(200);
  });
});
