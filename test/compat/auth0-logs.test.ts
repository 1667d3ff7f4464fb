/**
 * Tenant logs through the unmodified auth0@7 ManagementClient (https rewritten to this server by a custom fetch,
 * as in auth0-management.test.ts): the SDK's own client-credentials token request (`seccft`), its Management API
 * changes (`sapi`), and a wrong password at the password-realm grant (`fp`) are read back with `logs.list`
 * (its `search` parameter, its default include_totals paging), `logs.get` and `users.logs.list`; then the
 * `logStreams` sub-client's whole lifecycle of an http stream, and the `stats` sub-client's two reads before and
 * after real password logins.
 */
import { ManagementClient } from 'auth0';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../../packages/server/src/auth-api/token/password-realm.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { DATABASE_CONNECTION_NAME } from '../../packages/server/src/tenancy/bootstrap.js';

describe('auth0@7 logs sub-clients', () => {
  let server: TestServer;
  let management: ManagementClient;

  beforeAll(async () => {
    server = await startTestServer();
    const domain = new URL(server.url).host;
    const rewrite: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      return fetch(url.replace(`https://${domain}`, server.url), init);
    };
    management = new ManagementClient({
      domain,
      clientId: server.admin.client_id,
      clientSecret: server.admin.client_secret,
      audience: `${server.url}/api/v2/`,
      fetch: rewrite,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists, gets and reads a user’s logs as the SDK sends and expects them', async () => {
    const user = await management.users.create({ connection: DATABASE_CONNECTION_NAME, email: 'sdk.logs@example.com', password: 'Sdk-Logs-Passw0rd!' });
    const app = await management.clients.create({
      name: 'SDK logs app',
      app_type: 'regular_web',
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: [PASSWORD_REALM_GRANT],
    });
    const connections = [];
    for await (const c of await management.connections.list({ name: DATABASE_CONNECTION_NAME })) connections.push(c);
    await management.connections.clients.update(connections[0]!.id!, [{ client_id: app.client_id!, status: true }]);
    const wrong = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME, client_id: app.client_id, client_secret: app.client_secret, username: 'sdk.logs@example.com', password: 'not it at all' }),
    });
    expect(wrong.status).toBe(403);
    await server.server.services.tenantLogs.flush();

    const changes = await management.logs.list({ search: 'type:sapi', per_page: 50 });
    const descriptions = changes.data.map((log) => log.description);
    expect(descriptions).toContain('POST /api/v2/users');
    expect(descriptions).toContain('POST /api/v2/clients');
    expect(changes.data.every((log) => log.type === 'sapi' && log.client_id === server.admin.client_id)).toBe(true);

    const [exchange] = (await management.logs.list({ search: 'type:seccft' })).data;
    expect(exchange).toMatchObject({ type: 'seccft', client_id: server.admin.client_id, audience: `${server.url}/api/v2/` });
    const fetched = await management.logs.get(exchange!.log_id!);
    expect(fetched).toEqual(exchange);

    const mine = await management.users.logs.list(user.user_id!);
    expect(mine.data).toEqual([expect.objectContaining({ type: 'fp', user_id: user.user_id, user_name: 'sdk.logs@example.com', client_id: app.client_id })]);

    // The SDK's paging walks every page of a search (page, per_page, include_totals).
    const walked: string[] = [];
    for await (const log of await management.logs.list({ per_page: 2 })) walked.push(log.log_id!);
    expect(walked.length).toBeGreaterThanOrEqual(5);
    expect(new Set(walked).size).toBe(walked.length);
  });
});

describe('auth0@7 logStreams and stats sub-clients', () => {
  let server: TestServer;
  let management: ManagementClient;

  beforeAll(async () => {
    server = await startTestServer();
    const domain = new URL(server.url).host;
    const rewrite: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      return fetch(url.replace(`https://${domain}`, server.url), init);
    };
    management = new ManagementClient({ domain, clientId: server.admin.client_id, clientSecret: server.admin.client_secret, audience: `${server.url}/api/v2/`, fetch: rewrite });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates, lists, gets, updates and deletes an http log stream', async () => {
    const created = await management.logStreams.create({
      name: 'sdk stream',
      type: 'http',
      sink: { httpEndpoint: 'http://127.0.0.1:9/logs', httpContentFormat: 'JSONARRAY', httpAuthorization: 'Bearer sdk-secret' },
      filters: [{ type: 'category', name: 'auth.login.fail' }],
    });
    expect(created).toMatchObject({ name: 'sdk stream', type: 'http', status: 'active', sink: { httpEndpoint: 'http://127.0.0.1:9/logs', httpContentFormat: 'JSONARRAY' } });
    expect(JSON.stringify(created)).not.toContain('sdk-secret');
    const id = created.id!;
    const listed = await management.logStreams.list();
    expect(listed.map((s) => s.id)).toEqual([id]);
    expect(await management.logStreams.get(id)).toMatchObject({ id, name: 'sdk stream' });
    expect(await management.logStreams.update(id, { status: 'paused', name: 'sdk stream 2' })).toMatchObject({ status: 'paused', name: 'sdk stream 2' });
    await management.logStreams.delete(id);
    expect(await management.logStreams.list()).toEqual([]);
  });

  it('reads active users and daily stats, which follow a real login', async () => {
    expect(await management.stats.getActiveUsersCount()).toBe(0);
    const user = await management.users.create({ connection: DATABASE_CONNECTION_NAME, email: 'sdk.stats@example.com', password: 'Sdk-Stats-Passw0rd!' });
    const app = await management.clients.create({ name: 'SDK stats app', app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT] });
    const connections = [];
    for await (const c of await management.connections.list({ name: DATABASE_CONNECTION_NAME })) connections.push(c);
    await management.connections.clients.update(connections[0]!.id!, [{ client_id: app.client_id!, status: true }]);
    for (let i = 0; i < 2; i++) {
      const login = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME, client_id: app.client_id, client_secret: app.client_secret, username: 'sdk.stats@example.com', password: 'Sdk-Stats-Passw0rd!' }),
      });
      expect(login.status).toBe(200);
    }
    await server.server.services.tenantLogs.flush();
    expect(user.user_id).toBeTruthy();
    // Two logins by one user: one active user, two logins today.
    expect(await management.stats.getActiveUsersCount()).toBe(1);
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    const daily = await management.stats.getDaily({ from: today, to: today });
    expect(daily).toEqual([expect.objectContaining({ date: `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`, logins: 2, signups: 0, leaked_passwords: 0 })]);
  });
});
