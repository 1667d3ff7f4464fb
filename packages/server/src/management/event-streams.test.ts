/**
 * Event streams over real HTTP (event-streams.ts): create (201, signing secret once, credentials sealed and
 * write-only), list paging, get, update (secret kept or replaced), delete (204), conflicts, the endpoint
 * rules of allow_insecure_webhooks (https only, no private addresses), bad input, path ids, and scopes.
 * Runs on SQLite, and on PostgreSQL when reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { insertStream, newStreamId } from '../events/streams.js';
import { insertTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('event streams: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

const STREAM_ID = /^est_[A-Za-z0-9]{22}$/;

describe.each(dialects)('Management API event streams (%s)', (dialect) => {
  let server: TestServer;
  let token: string;

  async function call(method: string, path: string, options: { body?: unknown; token?: string | null; form?: string } = {}) {
    const headers: Record<string, string> = {};
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers,
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.form !== undefined && { body: options.form }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json, text };
  }

  async function expectError(res: Promise<{ status: number; body: Json }>, status: number, errorCode?: string): Promise<Json> {
    const { status: actual, body } = await res;
    expect({ status: actual, body }).toMatchObject({ status, body: { statusCode: status, ...(errorCode && { errorCode }) } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    return body;
  }

  const webhook = (endpoint: string, authorization: Json = { method: 'bearer', token: 'tok-secret-1' }) => ({
    type: 'webhook',
    configuration: { webhook_endpoint: endpoint, webhook_authorization: authorization },
  });

  async function create(body: Json): Promise<Json> {
    const res = await call('POST', '/event-streams', { body });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  async function setInsecure(allow: boolean): Promise<void> {
    const res = await call('PATCH', '/tenants/settings', { body: { allow_insecure_webhooks: allow } });
    expect(res.status, res.text).toBe(200);
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates a stream: 201, the signing secret once, credentials never shown and sealed at rest', async () => {
    const created = await create({
      name: 'crm',
      subscriptions: [{ event_type: 'user.created' }, { event_type: 'user.created' }, { event_type: 'user.deleted' }],
      destination: webhook('https://hooks.example.com/gatehouse'),
    });
    expect(created).toMatchObject({
      id: expect.stringMatching(STREAM_ID),
      name: 'crm',
      status: 'enabled',
      subscriptions: [{ event_type: 'user.created' }, { event_type: 'user.deleted' }],
      destination: { type: 'webhook', configuration: { webhook_endpoint: 'https://hooks.example.com/gatehouse', webhook_authorization: { method: 'bearer' } } },
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(new Date(created.created_at as string).toISOString()).toBe(created.created_at);
    expect(JSON.stringify(created)).not.toContain('tok-secret-1');

    const got = await call('GET', `/event-streams/${created.id as string}`);
    expect(got.status).toBe(200);
    expect(got.text).not.toContain('tok-secret-1');
    expect(got.text).not.toContain('whsec_');
    const { signing_secret: _secret, ...rest } = created;
    expect(got.body).toEqual(rest);

    const row = await server.server.prepared.store.db.selectFrom('event_streams').selectAll().where('id', '=', created.id as string).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('tok-secret-1');
    expect(JSON.stringify(row)).not.toContain((created.signing_secret as string).slice(6));
    expect(row.credential_sealed).toMatch(/^v1\./);
  });

  it('defaults the name to the id, refuses a taken name (409) and lists with checkpoint paging', async () => {
    const a = await create({ subscriptions: [{ event_type: 'group.created' }], destination: webhook('https://hooks.example.com/a') });
    expect(a.name).toBe(a.id);
    await expectError(call('POST', '/event-streams', { body: { name: 'crm', subscriptions: [{ event_type: 'user.created' }], destination: webhook('https://x.example.com/') } }), 409);

    const all = await call('GET', '/event-streams');
    expect(all.status).toBe(200);
    const streams = all.body.eventStreams as Json[];
    expect(streams.map((s) => s.name)).toEqual(['crm', a.id]);
    expect(all.body.next).toBeUndefined();
    expect(all.text).not.toContain('tok-secret-1');

    const first = await call('GET', '/event-streams?take=1');
    expect((first.body.eventStreams as Json[]).map((s) => s.id)).toEqual([streams[0]!.id]);
    expect(first.body.next).toEqual(expect.any(String));
    const second = await call('GET', `/event-streams?take=1&from=${first.body.next as string}`);
    expect((second.body.eventStreams as Json[]).map((s) => s.id)).toEqual([a.id]);
    expect(second.body.next).toBeUndefined();
    await expectError(call('GET', '/event-streams?take=0'), 400);
    await expectError(call('GET', '/event-streams?from=nonsense'), 400);
  });

  it('updates: rename, subscriptions, status; keeps the secret when the method stays, needs one when it changes', async () => {
    const stream = await create({ name: 'upd', subscriptions: [{ event_type: 'user.created' }], destination: webhook('https://hooks.example.com/u') });
    const id = stream.id as string;
    const before = await server.server.prepared.store.db.selectFrom('event_streams').select('credential_sealed').where('id', '=', id).executeTakeFirstOrThrow();

    const renamed = await call('PATCH', `/event-streams/${id}`, {
      body: { name: 'upd2', subscriptions: [{ event_type: 'organization.created' }], status: 'disabled', destination: webhook('https://hooks.example.com/v', { method: 'bearer' }) },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({
      name: 'upd2',
      status: 'disabled',
      subscriptions: [{ event_type: 'organization.created' }],
      destination: { configuration: { webhook_endpoint: 'https://hooks.example.com/v' } },
    });
    const after = await server.server.prepared.store.db.selectFrom('event_streams').select('credential_sealed').where('id', '=', id).executeTakeFirstOrThrow();
    expect(after.credential_sealed).toBe(before.credential_sealed);

    await expectError(call('PATCH', `/event-streams/${id}`, { body: { destination: webhook('https://hooks.example.com/v', { method: 'basic', username: 'u' }) } }), 400);
    const basic = await call('PATCH', `/event-streams/${id}`, {
      body: { destination: webhook('https://hooks.example.com/v', { method: 'basic', username: 'svc', password: 'pw-secret' }) },
    });
    expect(basic.status).toBe(200);
    expect(basic.body).toMatchObject({ destination: { configuration: { webhook_authorization: { method: 'basic', username: 'svc' } } } });
    expect(basic.text).not.toContain('pw-secret');

    const header = await call('PATCH', `/event-streams/${id}`, {
      body: { destination: webhook('https://hooks.example.com/v', { method: 'custom_header', header_key: 'X-Api-Key', header_value: 'hv-secret' }) },
    });
    expect(header.status).toBe(200);
    expect(header.body).toMatchObject({ destination: { configuration: { webhook_authorization: { method: 'custom_header', header_key: 'X-Api-Key' } } } });
    expect(header.text).not.toContain('hv-secret');

    await expectError(call('PATCH', `/event-streams/${id}`, { body: { name: 'crm' } }), 409);
    await expectError(call('PATCH', `/event-streams/${id}`, { body: { color: 'red' } }), 400);
    await expectError(call('PATCH', `/event-streams/${id}`, { body: { status: 'paused' } }), 400);
  });

  it('refuses bad input with 400 in the management shape', async () => {
    const ok = { subscriptions: [{ event_type: 'user.created' }], destination: webhook('https://hooks.example.com/b') };
    await expectError(call('POST', '/event-streams', { body: { ...ok, extra: 1 } }), 400);
    await expectError(call('POST', '/event-streams', { body: { subscriptions: ok.subscriptions } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, subscriptions: [] } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, subscriptions: [{ event_type: 'user.exploded' }] } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, subscriptions: ['user.created'] } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, destination: { type: 'eventbridge', configuration: { aws_account_id: '123456789012' } } } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, destination: webhook('https://hooks.example.com/b', { method: 'bearer' }) } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, destination: webhook('https://hooks.example.com/b', { method: 'bearer', token: 't', username: 'u' }) } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, destination: webhook('https://hooks.example.com/b', { method: 'basic', username: 'a:b', password: 'p' }) } }), 400);
    await expectError(
      call('POST', '/event-streams', { body: { ...ok, destination: webhook('https://hooks.example.com/b', { method: 'custom_header', header_key: 'webhook-signature', header_value: 'x' }) } }),
      400,
    );
    await expectError(call('POST', '/event-streams', { body: { ...ok, destination: webhook('https://user:pw@hooks.example.com/b') } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, destination: webhook('ftp://hooks.example.com/b') } }), 400);
    await expectError(call('POST', '/event-streams', { body: { ...ok, name: 'a\u0000b' } }), 400);
    await expectError(call('POST', '/event-streams', { form: 'name=x' }), 400);
  });

  it('allows only https on public addresses unless allow_insecure_webhooks is on', async () => {
    const subscriptions = [{ event_type: 'user.created' }];
    // The test tenant's public URL is localhost, so the setting starts on.
    const settings = await call('GET', '/tenants/settings');
    expect(settings.body.allow_insecure_webhooks).toBe(true);
    await create({ name: 'local-http', subscriptions, destination: webhook('http://127.0.0.1:9/hook') });

    await setInsecure(false);
    try {
      for (const endpoint of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://localhost/x', 'https://[fd00::1]/x', 'https://192.168.1.1/x']) {
        const body = await expectError(call('POST', '/event-streams', { body: { subscriptions, destination: webhook(endpoint) } }), 400);
        expect(body.message).toMatch(/allow_insecure_webhooks/);
      }
      await create({ name: 'public-https', subscriptions, destination: webhook('https://93.184.215.14/x') });
    } finally {
      await setInsecure(true);
    }
  });

  it('with allow_insecure_webhooks, allows plain http only to loopback and private addresses (issue 18), on create and update', async () => {
    const subscriptions = [{ event_type: 'user.created' }];
    const settings = await call('GET', '/tenants/settings');
    expect(settings.body.allow_insecure_webhooks).toBe(true);
    for (const endpoint of ['http://localhost:9/x', 'http://10.1.2.3/x', 'http://192.168.0.7:8080/x', 'http://172.20.0.2/x', 'http://[::1]:9/x', 'http://[fd00::2]/x']) {
      const res = await call('POST', '/event-streams', { body: { subscriptions, destination: webhook(endpoint) } });
      expect(res.status, `${endpoint}: ${res.text}`).toBe(201);
      await call('DELETE', `/event-streams/${res.body.id as string}`);
    }
    // Public addresses (literal, or a name that does not resolve to a private one), and link-local metadata services.
    for (const endpoint of ['http://93.184.215.14/x', 'http://8.8.8.8:80/x', 'http://[2606:4700::1111]/x', 'http://[::ffff:8.8.8.8]/x', 'http://169.254.169.254/latest', 'http://hooks.example.com/x']) {
      const body = await expectError(call('POST', '/event-streams', { body: { subscriptions, destination: webhook(endpoint) } }), 400);
      expect(body.message, endpoint).toMatch(/plain http is allowed .* only to loopback or private addresses/);
    }
    // https to a public or private address stays allowed.
    const stream = await create({ name: 'insecure-rules', subscriptions, destination: webhook('https://93.184.215.14/x') });
    const patched = await expectError(
      call('PATCH', `/event-streams/${stream.id as string}`, { body: { destination: webhook('http://93.184.215.14/x') } }),
      400,
    );
    expect(patched.message).toMatch(/plain http/);
    const ok = await call('PATCH', `/event-streams/${stream.id as string}`, { body: { destination: webhook('http://127.0.0.1:9/x') } });
    expect(ok.status, ok.text).toBe(200);
    await call('DELETE', `/event-streams/${stream.id as string}`);
  });

  it('deletes (204), then the stream is 404; path ids of another length are 400, never 500', async () => {
    const stream = await create({ name: 'del', subscriptions: [{ event_type: 'user.created' }], destination: webhook('https://hooks.example.com/d') });
    const res = await call('DELETE', `/event-streams/${stream.id as string}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    await expectError(call('GET', `/event-streams/${stream.id as string}`), 404, 'inexistent_event_stream');
    await expectError(call('DELETE', `/event-streams/${stream.id as string}`), 404);
    await expectError(call('GET', `/event-streams/est_${'a'.repeat(21)}`), 400);
    await expectError(call('GET', `/event-streams/est_${'a'.repeat(23)}`), 400);
    await expectError(call('PATCH', `/event-streams/est_${'a'.repeat(21)}`, { body: { name: 'x' } }), 400);
    await expectError(call('GET', `/event-streams/${'%25'.repeat(26)}`), 404);
    await expectError(call('GET', `/event-streams/${'x'.repeat(5000)}`), 400);
  });

  it("never shows or touches another tenant's stream", async () => {
    const db = server.server.prepared.store.db;
    const tenantId = newId.tenant();
    await insertTenant(db, { id: tenantId, name: `other-${dialect}`, friendlyName: 'Other', baseUrl: 'https://other.example', domains: [`other-${dialect}.example`] });
    const id = newStreamId();
    const now = Date.now();
    await insertStream(db, {
      id,
      tenantId,
      name: 'crm',
      status: 'enabled',
      subscriptions: ['user.created'],
      destinationType: 'webhook',
      configuration: { webhook_endpoint: 'https://other.example/hook', webhook_authorization: { method: 'bearer' } },
      credentialSealed: null,
      signingSecretSealed: 'v1.x.y.z',
      consecutiveFailures: 0,
      createdAt: now,
      updatedAt: now,
    });
    const listed = await call('GET', '/event-streams');
    expect((listed.body.eventStreams as Json[]).map((s) => s.id)).not.toContain(id);
    await expectError(call('GET', `/event-streams/${id}`), 404);
    await expectError(call('PATCH', `/event-streams/${id}`, { body: { name: 'mine' } }), 404);
    await expectError(call('GET', `/event-streams/${id}/deliveries`), 404);
    await expectError(call('GET', `/event-streams/${id}/stats`), 404);
    await expectError(call('POST', `/event-streams/${id}/test`, { body: { event_type: 'user.created' } }), 404);
    await expectError(call('POST', `/event-streams/${id}/redeliver`, { body: {} }), 404);
    await expectError(call('DELETE', `/event-streams/${id}`), 404);
    expect(await db.selectFrom('event_streams').select('id').where('id', '=', id).executeTakeFirst()).toEqual({ id });
  });

  it('checks tokens and scopes', async () => {
    const readOnly = await managementToken(server, ['read:event_streams']);
    expect((await call('GET', '/event-streams', { token: readOnly })).status).toBe(200);
    const denied = await expectError(call('POST', '/event-streams', { token: readOnly, body: {} }), 403, 'insufficient_scope');
    expect(denied.message).toContain('create:event_streams');
    await expectError(call('GET', '/event-streams', { token: null }), 401);
    await expectError(call('GET', '/event-streams', { token: 'not-a-jwt' }), 401);
  });
});
