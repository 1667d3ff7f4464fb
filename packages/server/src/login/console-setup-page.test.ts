/**
 * POST /u/console-setup from the outside: one link makes one account, however many tabs submit it at once, and a
 * form the connection refuses (a weak password) leaves the link usable for the corrected form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ADMIN_ROLE_NAME } from '../console/bootstrap.js';
import { issueSetupLink } from '../console/setup-links.js';
import { findDefaultTenant } from '../store/tenants.js';
import { management } from '../test-support/sign-in.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const PASSWORD = 'Console-setup-2026!';

describe.each(dialects)('console setup links (%s)', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A first-admin link (no address: the person types theirs), as `gatehouse start` prints. */
  async function firstAdminLink(): Promise<string> {
    const db = server.server.prepared.store.db;
    const tenant = await findDefaultTenant(db);
    return issueSetupLink(db, tenant!.id, null);
  }

  function submit(ticket: string, email: string, password = PASSWORD): Promise<Response> {
    return fetch(`${server.url}/u/console-setup`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket, email, password, password_confirmation: password }),
    });
  }

  async function usersNamed(prefix: string): Promise<{ user_id: string; email: string }[]> {
    const response = await management(server, 'GET', `/users?q=${encodeURIComponent(`email:${prefix}*`)}&per_page=100&fields=user_id,email`);
    expect(response.status).toBe(200);
    return (await response.json()) as { user_id: string; email: string }[];
  }

  it('makes one account from one link when 12 tabs submit it at once with different addresses', async () => {
    const ticket = await firstAdminLink();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(ticket, `racer${i}@example.com`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(1);
    expect(answers.find((a) => a.status === 303)!.headers.get('location')).toBe('/console/');
    expect(statuses.filter((s) => s === 400)).toHaveLength(11);
    // Before the link was spent first, every tab whose signup finished before the winner spent it left an account.
    const made = await usersNamed('racer');
    expect(made).toHaveLength(1);
    const roles = (await (await management(server, 'GET', `/users/${encodeURIComponent(made[0]!.user_id)}/roles`)).json()) as { name: string }[];
    expect(roles.map((r) => r.name)).toEqual([CONSOLE_ADMIN_ROLE_NAME]);
  });

  it('gives the link back when the connection refuses the form, so the corrected form can use it', async () => {
    const ticket = await firstAdminLink();
    const weak = await submit(ticket, 'retry@example.com', 'short');
    expect(weak.status).toBe(303);
    expect(weak.headers.get('location')).toContain('/u/console-setup?ticket=');
    expect(await usersNamed('retry')).toHaveLength(0);
    expect((await fetch(`${server.url}/u/console-setup?ticket=${ticket}`)).status).toBe(200);
    const done = await submit(ticket, 'retry@example.com');
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/console/');
    expect(await usersNamed('retry')).toHaveLength(1);
    expect((await fetch(`${server.url}/u/console-setup?ticket=${ticket}`)).status).toBe(400);
  });
});
