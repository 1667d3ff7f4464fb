/**
 * The delivery worker on its own, over a real SQLite store and a real receiver, with a real pino logger
 * writing to memory: one log line per attempt that names the stream, event, attempt and outcome but carries
 * no credential, signing secret or endpoint path; stop() returns promptly with a receiver that never answers;
 * old delivered rows are dropped by the retention purge.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { createSealer } from '../crypto/sealing.js';
import { migrateToLatest, openStore, type Store } from '../store/db.js';
import { insertTenant } from '../store/tenants.js';
import { purgeDelivered } from './deliveries.js';
import { emitEvent } from './outbox.js';
import { newSigningSecret } from './signing.js';
import { credentialContext, insertStream, newStreamId, signingSecretContext } from './streams.js';
import { startReceiver, type Receiver } from './test-receiver.js';
import { DeliveryWorker } from './worker.js';

describe('DeliveryWorker', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-worker-'));
  const sealer = createSealer(Buffer.alloc(32, 7));
  let store: Store;
  let receiver: Receiver;
  const tenantId = newId.tenant();
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  const TOKEN = 'never-log-this-token';
  const SECRET = newSigningSecret();

  beforeAll(async () => {
    store = await openStore(`sqlite:${path.join(dir, 'worker.sqlite')}`);
    await migrateToLatest(store);
    await insertTenant(store.db, { id: tenantId, name: 'acme', friendlyName: 'Acme', baseUrl: 'http://localhost:1', domains: [], settings: { allow_insecure_webhooks: true } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function stream(endpoint: string): Promise<string> {
    const id = newStreamId();
    const now = Date.now();
    await insertStream(store.db, {
      id,
      tenantId,
      name: id,
      status: 'enabled',
      subscriptions: ['user.created'],
      destinationType: 'webhook',
      configuration: { webhook_endpoint: endpoint, webhook_authorization: { method: 'bearer' } },
      credentialSealed: sealer.seal(TOKEN, credentialContext(id)),
      signingSecretSealed: sealer.seal(SECRET, signingSecretContext(id)),
      consecutiveFailures: 0,
      createdAt: now,
      updatedAt: now,
    });
    return id;
  }

  it('logs one line per attempt, without secrets or the endpoint path', async () => {
    const streamId = await stream(`${receiver.url}/secret-path?key=query-secret`);
    receiver.answer = (_r, index) => (index === 0 ? { status: 502 } : { status: 200 });
    const worker = new DeliveryWorker(store, sealer, logger, { pollMs: 50 });
    worker.start();
    try {
      await store.db.transaction().execute((trx) => emitEvent(trx, { tenantId, type: 'user.created', object: { user_id: 'auth0|1' } }));
      await receiver.waitFor((r) => r.length === 2, 5000);
      await expect.poll(() => lines.filter((l) => l.msg === 'event delivery attempt').length).toBe(2);
    } finally {
      await worker.stop();
    }
    const attempts = lines.filter((l) => l.msg === 'event delivery attempt');
    expect(attempts.map((l) => [l.stream, l.attempt, l.status_code, l.outcome])).toEqual([
      [streamId, 1, 502, 'Received HTTP 502 Bad Gateway'],
      [streamId, 2, 200, 'delivered'],
    ]);
    expect(attempts[0]).toMatchObject({ event: expect.stringMatching(/^evt_/), host: new URL(receiver.url).host, duration_ms: expect.any(Number) });
    const text = JSON.stringify(lines);
    for (const secret of [TOKEN, SECRET, SECRET.slice(6), 'secret-path', 'query-secret']) expect(text).not.toContain(secret);
  });

  it('stops promptly while an attempt hangs, and the delivery stays leased for a later claim', async () => {
    await store.db.updateTable('event_streams').set({ status: 'disabled' }).execute();
    await stream(receiver.url);
    receiver.answer = () => 'hang';
    const worker = new DeliveryWorker(store, sealer, logger, { pollMs: 50 });
    worker.start();
    await store.db.transaction().execute((trx) => emitEvent(trx, { tenantId, type: 'user.created', object: { user_id: 'auth0|2' } }));
    const count = receiver.received.length;
    await receiver.waitFor((r) => r.length > count, 5000);
    const started = Date.now();
    await worker.stop();
    expect(Date.now() - started).toBeLessThan(4000);
    const pending = await store.db.selectFrom('event_deliveries').select(['status', 'lease_id']).where('status', '=', 'pending').execute();
    expect(pending).toEqual([{ status: 'pending', lease_id: expect.any(String) }]);
    receiver.answer = () => ({ status: 200 });
  });

  it('drops delivered rows past the retention, and only those', async () => {
    const rows = await store.db.selectFrom('event_deliveries').select(['event_id', 'status']).execute();
    const delivered = rows.filter((r) => r.status === 'delivered');
    expect(delivered.length).toBeGreaterThan(0);
    await store.db.updateTable('event_deliveries').set({ completed_at: 1 }).where('status', '=', 'delivered').execute();
    expect(await purgeDelivered(store.db, Date.now() - 1000)).toBe(delivered.length);
    expect(await store.db.selectFrom('event_deliveries').select('status').execute()).toEqual(rows.filter((r) => r.status !== 'delivered').map((r) => ({ status: r.status })));
  });
});
