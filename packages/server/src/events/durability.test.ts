/**
 * At-least-once across a crash: the built `gatehouse` runs as a child process (SQLite), users are created
 * under load through the Management API with a stream subscribed to `user.created`, the process is killed
 * with SIGKILL mid-flight (some deliveries held open by the receiver, so they are claimed but unfinished), and
 * restarted on the same data. Every user that was committed must reach the receiver as `user.created`
 * (duplicates allowed, none missing).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliProcess } from '../test-support/cli.js';
import { freePort } from '../test-support/services.js';
import { startReceiver, type Receiver } from './test-receiver.js';

/** The load runs until this many users were acknowledged, then the process is killed with requests in flight. */
const KILL_AFTER = 8;
const CONCURRENCY = 6;

describe('event delivery survives SIGKILL', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-durability-'));
  let run: CliProcess | undefined;
  let receiver: Receiver | undefined;

  afterAll(async () => {
    if (run && run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers user.created for every committed user after a crash and restart', { timeout: 50_000 }, async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };
    const base = `http://localhost:${port}`;
    const start = async () => {
      const child = runCli(['start'], env);
      await child.waitFor(/Management API token/);
      return child;
    };
    run = await start();

    const admin = JSON.parse(readFileSync(path.join(dataDir, 'admin-credentials.json'), 'utf8')) as { client_id: string; client_secret: string };
    const tokenResponse = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: admin.client_id, client_secret: admin.client_secret, audience: `${base}/api/v2/` }),
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const api = (method: string, p: string, body?: unknown) =>
      fetch(`${base}/api/v2${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });

    const delivered = new Set<string>();
    let killed = false;
    receiver = await startReceiver();
    // Before the crash every third delivery is held open: claimed, never answered, lost with the process.
    // Only answered deliveries count as delivered.
    receiver.answer = (request, index) => {
      if (!killed && index % 3 === 0) return 'hang';
      const event = JSON.parse(request.body) as { type: string; data: { object: { user_id: string } } };
      if (event.type === 'user.created') delivered.add(event.data.object.user_id);
      return { status: 200 };
    };
    const stream = await api('POST', '/event-streams', {
      subscriptions: [{ event_type: 'user.created' }],
      destination: { type: 'webhook', configuration: { webhook_endpoint: receiver.url, webhook_authorization: { method: 'bearer', token: 't' } } },
    });
    expect(stream.status).toBe(201);

    // Load: CONCURRENCY clients creating users until the kill; requests in flight at the kill may or may not commit.
    let counter = 0;
    let acknowledged = 0;
    // Until enough users were acknowledged, not for a fixed time: a loaded box creates few users in any given time.
    let enoughAcknowledged!: () => void;
    const enough = new Promise<void>((resolve) => (enoughAcknowledged = resolve));
    const worker = async () => {
      while (!killed) {
        counter += 1;
        try {
          const res = await api('POST', '/users', {
            connection: 'Username-Password-Authentication',
            email: `load-${counter}@example.com`,
            password: 'Durable-Events-2026!',
          });
          if (res.status === 201 && ++acknowledged >= KILL_AFTER) enoughAcknowledged();
        } catch {
          // The connection died with the process.
        }
      }
    };
    const load = Array.from({ length: CONCURRENCY }, worker);
    await enough;
    run.child.kill('SIGKILL');
    killed = true;
    await run.exited;
    await Promise.all(load);
    expect(acknowledged).toBeGreaterThan(5);
    const deliveredBeforeRestart = delivered.size;

    run = await start();
    // The committed users are whatever the database holds now, acknowledged or not.
    const committed: string[] = [];
    for (let page = 0; ; page++) {
      const res = await api('GET', `/users?per_page=100&page=${page}`);
      const users = (await res.json()) as { user_id: string }[];
      committed.push(...users.map((u) => u.user_id));
      if (users.length < 100) break;
    }
    expect(committed.length).toBeGreaterThanOrEqual(acknowledged);
    await receiver.waitFor(() => committed.every((id) => delivered.has(id)), 20_000);
    expect(committed.filter((id) => !delivered.has(id))).toEqual([]);
    // The crash really interrupted delivery: some events reached the receiver only after the restart.
    expect(deliveredBeforeRestart).toBeLessThan(committed.length);
  });
});
