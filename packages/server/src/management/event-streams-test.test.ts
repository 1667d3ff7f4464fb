/**
 * POST /api/v2/event-streams/{id}/test (the contract's post_test_event) over real HTTP, against a real local
 * receiver that answers 200, 500 or never: the 202 delivery record in each case (status always `failed`;
 * success = no error_message and no event), what the receiver gets, JSON and form bodies, and every refusal
 * the issue lists. Runs on SQLite, and on PostgreSQL when reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudEvent } from '../events/outbox.js';
import { verifyWebhook } from '../events/signing.js';
import { startReceiver, type Receiver } from '../events/test-receiver.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { TEST_EVENT_TIMEOUT_MS } from './event-streams-test.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('event stream test events: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

describe.each(dialects)('POST /api/v2/event-streams/{id}/test (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  let receiver: Receiver;
  let streamId: string;
  let secret: string;

  async function test(body: unknown, options: { id?: string; token?: string | null; form?: string } = {}) {
    const headers: Record<string, string> = {};
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? token}`;
    headers['content-type'] = options.form !== undefined ? 'application/x-www-form-urlencoded' : 'application/json';
    const res = await fetch(`${server.url}/api/v2/event-streams/${options.id ?? streamId}/test`, {
      method: 'POST',
      headers,
      body: options.form ?? JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json, text };
  }

  async function expectError(res: Promise<{ status: number; body: Json }>, status: number): Promise<Json> {
    const { status: actual, body } = await res;
    expect({ status: actual, body }).toMatchObject({ status, body: { statusCode: status } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    return body;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    receiver = await startReceiver();
    const res = await fetch(`${server.url}/api/v2/event-streams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'tests',
        subscriptions: [{ event_type: 'user.created' }],
        destination: { type: 'webhook', configuration: { webhook_endpoint: receiver.url, webhook_authorization: { method: 'basic', username: 'svc', password: 'pw' } } },
      }),
    });
    const created = (await res.json()) as Json;
    streamId = created.id as string;
    secret = created.signing_secret as string;
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it('a receiver that answers 200: attempt without error_message, record without event', async () => {
    receiver.answer = () => ({ status: 200 });
    const count = receiver.received.length;
    const res = await test({ event_type: 'organization.member.added' });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^evt_[A-Za-z0-9]{22}$/),
      event_stream_id: streamId,
      status: 'failed',
      event_type: 'organization.member.added',
      attempts: [{ status: 'failed', timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) }],
    });
    expect(receiver.received).toHaveLength(count + 1);
    const request = receiver.received[count]!;
    const event = JSON.parse(request.body) as CloudEvent;
    expect(event).toMatchObject({
      specversion: '1.0',
      type: 'organization.member.added',
      id: res.body.id,
      a0purpose: 'test',
      a0stream: streamId,
      a0tenant: server.server.prepared.bootstrap!.tenant.name,
      data: { object: { organization: { id: expect.any(String) }, user: { user_id: expect.any(String) } } },
    });
    const headers = request.headers as Record<string, string>;
    expect(headers.authorization).toBe(`Basic ${Buffer.from('svc:pw').toString('base64')}`);
    expect(verifyWebhook(secret, { id: event.id, timestamp: headers['webhook-timestamp']!, signature: headers['webhook-signature']! }, request.body)).toBe(true);
  });

  it("sends the caller's data as it is, from JSON or from a form", async () => {
    receiver.answer = () => ({ status: 204 });
    const json = await test({ event_type: 'user.created', data: { object: { user_id: 'auth0|custom' }, extra: [1, 2] } });
    expect(json.status).toBe(202);
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ data: { object: { user_id: 'auth0|custom' }, extra: [1, 2] } });

    const form = await test(undefined, { form: `event_type=user.deleted&data=${encodeURIComponent(JSON.stringify({ object: { user_id: 'auth0|form' } }))}` });
    expect(form.status, form.text).toBe(202);
    expect(form.body).toMatchObject({ event_type: 'user.deleted' });
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ type: 'user.deleted', data: { object: { user_id: 'auth0|form' } } });
    expect((await test(undefined, { form: 'event_type=user.deleted' })).status).toBe(202);
    await expectError(test(undefined, { form: 'event_type=user.deleted&data=not-json' }), 400);
    await expectError(test(undefined, { form: 'event_type=user.deleted&data=%5B1%5D' }), 400);
  });

  it('a receiver that answers 500: attempt with error_message, record with the event', async () => {
    receiver.answer = () => ({ status: 500 });
    const count = receiver.received.length;
    const res = await test({ event_type: 'group.role.assigned' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^evt_/),
      event_stream_id: streamId,
      status: 'failed',
      event_type: 'group.role.assigned',
      attempts: [{ status: 'failed', timestamp: expect.any(String), error_message: 'Received HTTP 500 Internal Server Error' }],
      event: { id: res.body.id, source: expect.stringMatching(/^urn:gatehouse:/), specversion: '1.0', type: 'group.role.assigned', time: expect.any(String), data: expect.any(String) },
    });
    expect(JSON.parse((res.body.event as Json).data as string)).toMatchObject({ object: { group: { id: expect.any(String) }, role: { id: expect.any(String) } } });
    // Once, synchronously: no retry.
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(receiver.received).toHaveLength(count + 1);
  });

  it('a receiver that never answers: a failed attempt within the bound', async () => {
    receiver.answer = () => 'hang';
    const started = Date.now();
    const res = await test({ event_type: 'user.updated' });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ attempts: [{ status: 'failed', error_message: `Timed out after ${TEST_EVENT_TIMEOUT_MS} ms` }], event: { type: 'user.updated' } });
    expect(elapsed).toBeGreaterThanOrEqual(TEST_EVENT_TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(TEST_EVENT_TIMEOUT_MS + 2000);
    receiver.answer = () => ({ status: 200 });
  });

  it('refuses a body without event_type, with another property, or with an unknown type (400)', async () => {
    await expectError(test({}), 400);
    await expectError(test({ data: { object: {} } }), 400);
    await expectError(test({ event_type: 'user.created', extra: true }), 400);
    await expectError(test({ event_type: 'user.exploded' }), 400);
    await expectError(test({ event_type: 'connection.created' }), 400);
    await expectError(test({ event_type: 'user.created', data: 'text' }), 400);
    await expectError(test({ event_type: 'user.created', data: [1] }), 400);
    await expectError(test(undefined, { form: 'event_type=user.created&other=1' }), 400);
  });

  it('refuses a 25-character id (400), answers 404 for an unknown stream, 401 without a token, 403 without the scope', async () => {
    await expectError(test({ event_type: 'user.created' }, { id: streamId.slice(0, 25) }), 400);
    await expectError(test({ event_type: 'user.created' }, { id: `${streamId}x` }), 400);
    await expectError(test({ event_type: 'user.created' }, { id: `est_${'Z'.repeat(22)}` }), 404);
    await expectError(test({ event_type: 'user.created' }, { token: null }), 401);
    await expectError(test({ event_type: 'user.created' }, { token: `${token}x` }), 401);
    const readOnly = await managementToken(server, ['read:event_streams', 'update:event_deliveries']);
    const denied = await expectError(test({ event_type: 'user.created' }, { token: readOnly }), 403);
    expect(denied.message).toBe('Insufficient scope, expected any of: update:event_streams');
    const allowed = await managementToken(server, ['update:event_streams']);
    expect((await test({ event_type: 'user.created' }, { token: allowed })).status).toBe(202);
  });

  it('sends nothing to a disabled stream and says so in the attempt', async () => {
    const count = receiver.received.length;
    await fetch(`${server.url}/api/v2/event-streams/${streamId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'disabled' }),
    });
    const res = await test({ event_type: 'user.created' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ attempts: [{ error_message: expect.stringContaining('disabled') }], event: { type: 'user.created' } });
    expect(receiver.received).toHaveLength(count);
  });

  it('explains in the OpenAPI description how to read the outcome', async () => {
    const document = (await (await fetch(`${server.url}/api/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, { description?: string }>> };
    const description = Object.entries(document.paths).find(([p]) => p.endsWith('/event-streams/{id}/test'))?.[1].post?.description ?? '';
    expect(description).toContain('SUCCEEDED when the attempt has no `error_message` and the record has no `event`');
    expect(description).toContain('Scopes (any one): update:event_streams');
  });
});
