/**
 * Log streams over real HTTP, on SQLite and PostgreSQL, delivering to a real local receiver: the reference's
 * shapes and refusals; a JSONARRAY stream with filters gets exactly the logs its categories pass, in log id
 * order, across batches, after a 500 from the receiver (retried with the same webhook-id), with the configured
 * Authorization and custom headers and a Standard Webhooks signature that verifies (by our verifier and by the
 * standardwebhooks library); a JSONLINES stream; pausing and resuming without losing a log; the Authorization
 * value never read back. Then, on its own store, a stream that keeps failing is suspended and, set active again,
 * delivers what it missed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../crypto/sealing.js';
import { newId } from '../crypto/ids.js';
import { verifyWebhook } from '../events/signing.js';
import { startReceiver, type Receiver, type ReceivedRequest } from '../events/test-receiver.js';
import { migrateToLatest, openStore, type Store } from '../store/db.js';
import { insertTenant } from '../store/tenants.js';
import { postgresAvailable } from '../test-support/services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { logIdAt, logRow } from './log-event.js';
import { LogStreamDelivery } from './stream-delivery.js';
import { authorizationContext, findLogStream, insertLogStream, logStreamSigningContext, newLogStreamId } from './streams.js';
import { writeLogEvents } from './writer.js';

type Json = Record<string, unknown>;
type Streamed = { log_id: string; data: { log_id: string; type: string; user_name?: string; date: string } };

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const AUTHORIZATION = 'Bearer log-stream-secret-never-shown';
const ORIGIN = { ip: '203.0.113.9', user_agent: 'test', hostname: 'localhost' };

describe.each(dialects)('log streams on %s', (dialect) => {
  let server: TestServer;
  let token: string;
  let tenantId: string;
  let receiver: Receiver;
  /** Every response body the Management API gave: the Authorization value must be in none. */
  const bodies: string[] = [];

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  };
  /** Real writer, real rows: `n` events of `type`, user names `${prefix}0…`. */
  const record = async (type: 'fu' | 'sapi' | 'ss', prefix: string, n: number) => {
    for (let i = 0; i < n; i++) server.server.services.tenantLogs.record(tenantId, { type, user_name: `${prefix}${i}` }, ORIGIN);
    await server.server.services.tenantLogs.flush();
  };
  const logsOf = (request: ReceivedRequest): Streamed[] => {
    const body = request.body.trim();
    return (body.startsWith('[') ? JSON.parse(body) : body.split('\n').map((line) => JSON.parse(line))) as Streamed[];
  };
  const accepted = (requests: ReceivedRequest[], path: string) => requests.filter((r) => r.headers['x-accepted'] === undefined && r.headers['x-path'] === path);

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    tenantId = server.server.prepared.bootstrap!.tenant.id;
    token = await managementToken(server);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it('answers the reference’s shapes, and refuses what it does not offer', async () => {
    const created = await api('POST', '/log-streams', {
      name: 'shapes',
      type: 'http',
      sink: { httpEndpoint: `${receiver.url}?to=shapes`, httpAuthorization: AUTHORIZATION, httpContentFormat: 'JSONARRAY', httpCustomHeaders: [{ header: 'X-Team', value: 'blue' }] },
      filters: [{ type: 'category', name: 'auth.login.fail' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^lst_\d{16}$/),
      name: 'shapes',
      type: 'http',
      status: 'active',
      isPriority: false,
      filters: [{ type: 'category', name: 'auth.login.fail' }],
      sink: { httpEndpoint: `${receiver.url}?to=shapes`, httpContentType: 'application/json', httpContentFormat: 'JSONARRAY', httpCustomHeaders: [{ header: 'X-Team' }] },
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const id = created.body.id as string;
    const read = await api('GET', `/log-streams/${id}`);
    expect(read.body).toEqual({ ...created.body, signing_secret: undefined });
    expect(read.body).not.toHaveProperty('signing_secret');
    expect((await api('GET', '/log-streams')).body).toEqual([read.body]);

    const patched = await api('PATCH', `/log-streams/${id}`, { name: 'renamed', status: 'paused', filters: [], sink: { httpContentFormat: 'JSONLINES' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'renamed', status: 'paused', filters: [], sink: { httpEndpoint: `${receiver.url}?to=shapes`, httpContentFormat: 'JSONLINES' } });
    expect((await api('PATCH', `/log-streams/${id}`, { status: 'suspended' })).status).toBe(400);
    expect((await api('POST', '/log-streams', { name: 'renamed', type: 'http', sink: { httpEndpoint: receiver.url } })).status).toBe(409);

    const datadog = await api('POST', '/log-streams', { type: 'datadog', sink: { datadogRegion: 'us', datadogApiKey: 'k' } });
    expect(datadog).toMatchObject({ status: 501, body: { errorCode: 'not_offered', message: expect.stringMatching(/^Log streams of type datadog are not offered/) } });
    expect((await api('POST', '/log-streams', { type: 'pigeon', sink: {} })).status).toBe(400);
    expect((await api('POST', '/log-streams', { type: 'http', sink: { httpEndpoint: receiver.url }, pii_config: { log_fields: ['email'] } })).status).toBe(501);
    expect((await api('POST', '/log-streams', { type: 'http', sink: {} })).body).toMatchObject({ statusCode: 400, message: expect.stringContaining('httpEndpoint') });
    expect((await api('POST', '/log-streams', { type: 'http', sink: { httpEndpoint: receiver.url, splunkToken: 't' } })).status).toBe(400);
    expect((await api('POST', '/log-streams', { type: 'http', sink: { httpEndpoint: 'http://203.0.113.1/hook' } })).body).toMatchObject({
      statusCode: 400,
      message: expect.stringContaining('sink.httpEndpoint'),
    });
    expect((await api('POST', '/log-streams', { type: 'http', sink: { httpEndpoint: receiver.url, httpCustomHeaders: [{ header: 'Authorization', value: 'x' }] } })).status).toBe(400);
    expect((await api('POST', '/log-streams', { type: 'http', sink: { httpEndpoint: receiver.url }, filters: [{ type: 'category', name: 'nope' }] })).status).toBe(400);
    expect((await api('GET', '/log-streams/lst_0000000000000000')).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_log_stream' });
    expect((await api('DELETE', `/log-streams/${id}`)).status).toBe(204);
    expect((await api('DELETE', `/log-streams/${id}`)).status).toBe(404);
  });

  it('delivers the logs its filters pass, in order, in signed batches, again after a 500', async () => {
    // The first request to this stream is refused with a 500; later ones are accepted.
    let refusedOnce = false;
    receiver.answer = (request) => {
      if (request.headers['x-path'] === 'ordered' && !refusedOnce) {
        refusedOnce = true;
        request.headers['x-accepted'] = 'no';
        return { status: 500 };
      }
      return { status: 200 };
    };
    const created = await api('POST', '/log-streams', {
      name: 'ordered',
      type: 'http',
      sink: {
        httpEndpoint: receiver.url,
        httpAuthorization: AUTHORIZATION,
        httpContentFormat: 'JSONARRAY',
        httpContentType: 'application/json; charset=utf-8',
        httpCustomHeaders: [{ header: 'X-Path', value: 'ordered' }],
      },
      filters: [
        { type: 'category', name: 'auth.login.fail' },
        { type: 'category', name: 'auth.signup.success' },
      ],
    });
    expect(created.status).toBe(200);
    const secret = created.body.signing_secret as string;
    // 150 failed logins (two batches at least) between events the filters refuse, and 3 signups.
    await record('sapi', 'refused-', 5);
    await record('fu', 'user-', 150);
    await record('sapi', 'refused-again-', 5);
    await record('ss', 'signup-', 3);

    const expected = [...Array.from({ length: 150 }, (_, i) => `user-${i}`), 'signup-0', 'signup-1', 'signup-2'];
    await expect
      .poll(() => accepted(receiver.received, 'ordered').flatMap(logsOf).length, { timeout: 30_000, interval: 200 })
      .toBeGreaterThanOrEqual(expected.length);
    const requests = receiver.received.filter((r) => r.headers['x-path'] === 'ordered');
    const delivered = accepted(requests, 'ordered').flatMap(logsOf);
    // Exactly the passed logs, once each, in log id order.
    expect(delivered.map((log) => log.data.user_name)).toEqual(expected);
    const ids = delivered.map((log) => log.log_id);
    expect([...ids].sort()).toEqual(ids);
    for (const log of delivered) expect(log.data.log_id).toBe(log.log_id);
    // The refused batch was sent again unchanged, under the same id.
    const [refused, retried] = requests;
    expect(refused!.headers['x-accepted']).toBe('no');
    expect(retried!.headers['webhook-id']).toBe(refused!.headers['webhook-id']);
    expect(retried!.body).toBe(refused!.body);
    for (const request of requests) {
      expect(request.headers.authorization).toBe(AUTHORIZATION);
      expect(request.headers['content-type']).toBe('application/json; charset=utf-8');
      const signature = { id: String(request.headers['webhook-id']), timestamp: String(request.headers['webhook-timestamp']), signature: String(request.headers['webhook-signature']) };
      expect(verifyWebhook(secret, signature, request.body)).toBe(true);
      expect(verifyWebhook(secret, signature, `${request.body} `)).toBe(false);
      // And as a receiver using the Standard Webhooks reference library would check it (not our own code).
      const headers = { 'webhook-id': signature.id, 'webhook-timestamp': signature.timestamp, 'webhook-signature': signature.signature };
      expect(new Webhook(secret).verify(request.body, headers)).toEqual(JSON.parse(request.body));
      expect(() => new Webhook(secret).verify(`${request.body} `, headers)).toThrow(WebhookVerificationError);
    }
    expect((await api('GET', `/log-streams/${created.body.id as string}`)).body).toMatchObject({ status: 'active' });
  });

  it('delivers JSON lines, and what arrived while paused once resumed', async () => {
    receiver.answer = () => ({ status: 200 });
    const created = await api('POST', '/log-streams', {
      name: 'lines',
      type: 'http',
      sink: { httpEndpoint: receiver.url, httpCustomHeaders: [{ header: 'X-Path', value: 'lines' }] },
      filters: [{ type: 'category', name: 'auth.signup.success' }],
    });
    const id = created.body.id as string;
    await record('ss', 'line-', 3);
    await expect.poll(() => accepted(receiver.received, 'lines').flatMap(logsOf).length, { timeout: 30_000, interval: 200 }).toBe(3);
    const first = accepted(receiver.received, 'lines')[0]!;
    expect(first.body.split('\n')).toHaveLength(3);

    expect((await api('PATCH', `/log-streams/${id}`, { status: 'paused' })).body).toMatchObject({ status: 'paused' });
    await record('ss', 'while-paused-', 2);
    expect((await api('PATCH', `/log-streams/${id}`, { status: 'active' })).body).toMatchObject({ status: 'active' });
    await expect.poll(() => accepted(receiver.received, 'lines').flatMap(logsOf).length, { timeout: 30_000, interval: 200 }).toBe(5);
    expect(accepted(receiver.received, 'lines').flatMap(logsOf).map((log) => log.data.user_name)).toEqual(['line-0', 'line-1', 'line-2', 'while-paused-0', 'while-paused-1']);
  });

  it('never shows the Authorization value', () => {
    expect(bodies.length).toBeGreaterThan(10);
    for (const body of bodies) expect(body).not.toContain('log-stream-secret-never-shown');
  });
});

describe('a log stream that keeps failing', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-log-streams-'));
  const sealer = createSealer(Buffer.alloc(32, 9));
  const tenantId = newId.tenant();
  let store: Store;
  let receiver: Receiver;

  beforeAll(async () => {
    store = await openStore(`sqlite:${path.join(dir, 'streams.sqlite')}`);
    await migrateToLatest(store);
    await insertTenant(store.db, { id: tenantId, name: 'acme', friendlyName: 'Acme', baseUrl: 'http://localhost:1', domains: [], settings: { allow_insecure_webhooks: true } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is suspended, keeps its place, and delivers everything once set active again', async () => {
    const id = newLogStreamId();
    const now = Date.now();
    await insertLogStream(store.db, {
      id,
      tenantId,
      name: id,
      type: 'http',
      status: 'active',
      isPriority: false,
      filters: [],
      sink: { httpEndpoint: receiver.url, httpContentType: 'application/json', httpContentFormat: 'JSONARRAY', httpCustomHeaderNames: [] },
      authorizationSealed: sealer.seal(AUTHORIZATION, authorizationContext(id)),
      customHeadersSealed: null,
      signingSecretSealed: sealer.seal('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', logStreamSigningContext(id)),
      cursor: logIdAt(now - 60_000),
      batchEnd: null,
      attemptCount: 0,
      consecutiveFailures: 0,
      lastError: null,
      createdAt: now,
      updatedAt: now,
    });
    await writeLogEvents(
      store.db,
      Array.from({ length: 4 }, (_, i) => logRow(tenantId, { type: 'fu', user_name: `kept-${i}` }, ORIGIN, now - 30_000 + i)),
    );
    const delivery = new LogStreamDelivery(store, sealer, pino({ level: 'silent' }), { suspendAfterFailures: 3, settleMs: 0 });
    receiver.answer = () => ({ status: 503 });
    // Each pass looks as if the backoff had passed (a later `now`).
    for (let i = 1; i <= 3; i++) await delivery.pass(Date.now() + i * 3_600_000);
    expect(receiver.received).toHaveLength(3);
    expect(await findLogStream(store.db, tenantId, id)).toMatchObject({ status: 'suspended', consecutiveFailures: 3, lastError: expect.stringContaining('503') });
    // Suspended: no further attempts.
    await delivery.pass(Date.now() + 10 * 3_600_000);
    expect(receiver.received).toHaveLength(3);

    // Set active again (as PATCH does), with the receiver back.
    receiver.answer = () => ({ status: 204 });
    await store.db.updateTable('log_streams').set({ status: 'active', consecutive_failures: 0, next_attempt_at: Date.now() }).where('id', '=', id).execute();
    await delivery.pass();
    expect(receiver.received).toHaveLength(4);
    expect((JSON.parse(receiver.received[3]!.body) as Streamed[]).map((log) => log.data.user_name)).toEqual(['kept-0', 'kept-1', 'kept-2', 'kept-3']);
    expect(receiver.received[3]!.body).toBe(receiver.received[0]!.body);
    expect(await findLogStream(store.db, tenantId, id)).toMatchObject({ status: 'active', consecutiveFailures: 0, batchEnd: null });
  });
});
