/**
 * The unmodified auth0@7 SDK's event streams sub-client (`auth0/eventStreams`, baseUrl pointed here) against
 * the real server and a real local webhook receiver: create, list, get, update, test, deliveries list and
 * history, redeliver (one and filtered) and delete. A failed delivery comes from a real change: a user created
 * through the SDK's users client while the receiver answers 400.
 */
import { EventStreamsClient } from 'auth0/eventStreams';
import { UsersClient } from 'auth0/users';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../packages/server/src/events/test-receiver.js';
import type { TestServer } from '../../packages/server/src/test-support/server.js';
import { startServerWithAdminToken } from './support.js';

describe('auth0@7 eventStreams sub-client', () => {
  let server: TestServer;
  let token: string;
  let baseUrl: string;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ server, token, baseUrl } = await startServerWithAdminToken());
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it('create, list, get, update, test, deliveries, redeliver and delete', async () => {
    const client = new EventStreamsClient({ baseUrl, token });

    // The SDK's types describe what is read back, without write-only secrets; the wire accepts them (as Terraform sends them).
    const bearer = { method: 'bearer' as const, token: 'compat-token' };
    const created = await client.create({
      name: 'compat-stream',
      subscriptions: [{ event_type: 'user.created' }],
      destination: {
        type: 'webhook',
        configuration: { webhook_endpoint: receiver.url, webhook_authorization: bearer },
      },
    });
    const id = created.id!;
    expect(id).toMatch(/^est_[A-Za-z0-9]{22}$/);
    expect(created).toMatchObject({ name: 'compat-stream', status: 'enabled', subscriptions: [{ event_type: 'user.created' }] });

    const listed: string[] = [];
    for await (const stream of await client.list()) listed.push(stream.id!);
    expect(listed).toEqual([id]);

    expect(await client.get(id)).toMatchObject({ id, name: 'compat-stream', destination: { type: 'webhook' } });
    expect(await client.update(id, { name: 'compat-renamed' })).toMatchObject({ id, name: 'compat-renamed' });

    // Test event: the receiver answers 200, so the attempt has no error_message and the record no event.
    const record = await client.test(id, { event_type: 'user.created' });
    expect(record).toMatchObject({ event_stream_id: id, status: 'failed', event_type: 'user.created', attempts: [{ status: 'failed' }] });
    expect(record.attempts[0]).not.toHaveProperty('error_message');
    expect(record).not.toHaveProperty('event');
    const sent = JSON.parse(receiver.received.at(-1)!.body) as { a0purpose?: string; id: string };
    expect(sent).toMatchObject({ a0purpose: 'test', id: record.id });
    expect(receiver.received.at(-1)!.headers.authorization).toBe('Bearer compat-token');

    // A real change whose delivery fails at once (4xx): a delivery record to list and redeliver.
    receiver.answer = () => ({ status: 400 });
    const users = new UsersClient({ baseUrl, token });
    const user = await users.create({ connection: 'Username-Password-Authentication', email: 'compat-events@example.com', password: 'Compat-Events-2026!' });
    await receiver.waitFor((r) => r.some((req) => (JSON.parse(req.body) as { data?: { object?: { user_id?: string } } }).data?.object?.user_id === user.user_id));

    let deliveries: { id: string; event_type: string }[] = [];
    for (let i = 0; i < 50 && deliveries.length === 0; i++) {
      deliveries = [];
      for await (const delivery of await client.deliveries.list(id)) deliveries.push(delivery);
      if (deliveries.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deliveries).toHaveLength(1);
    const eventId = deliveries[0]!.id;
    expect(deliveries[0]).toMatchObject({ id: expect.stringMatching(/^evt_/), event_type: 'user.created' });
    const history = await client.deliveries.getHistory(id, eventId);
    expect(history).toMatchObject({ id: eventId, status: 'failed', attempts: [{ error_message: 'Received HTTP 400 Bad Request' }] });

    receiver.answer = () => ({ status: 200 });
    const before = receiver.received.length;
    await client.redeliveries.createById(id, eventId);
    await receiver.waitFor((r) => r.length > before);
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(eventId);
    await expect(client.redeliveries.createById(id, eventId)).rejects.toMatchObject({ statusCode: 409 });
    const filtered = await client.redeliveries.create(id, { event_types: ['user.created'] });
    expect(filtered).toMatchObject({ event_types: ['user.created'] });

    await client.delete(id);
    await expect(client.get(id)).rejects.toMatchObject({ statusCode: 404 });
  });
});
