/** /api/v2/connections over real HTTP: CRUD, options per strategy, paging forms, enabled clients, scopes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUser, insertUser, type User } from '../store/users.js';
import { updateTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

type Json = Record<string, unknown>;
interface ConnectionJson extends Json {
  id: string;
  name: string;
  strategy: string;
  options: Json;
  enabled_clients: string[];
}

describe('Management API: connections', () => {
  let server: TestServer;
  let token: string;
  let defaultApp: string;
  let consoleClient: string;
  let adminClient: string;

  const call = (method: string, path: string, body?: unknown, bearer = token) =>
    fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const json = async <T = Json>(res: Response | Promise<Response>): Promise<T> => (await (await res).json()) as T;
  const expectError = async (res: Response | Promise<Response>, status: number, errorCode: string, message?: RegExp) => {
    const response = await res;
    const body = await json(response);
    expect({ status: response.status, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    if (message) expect(body.message).toMatch(message);
    return body;
  };
  const create = async (body: Json): Promise<ConnectionJson> => {
    const res = await call('POST', '/connections', body);
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    return json<ConnectionJson>(res);
  };

  beforeAll(async () => {
    server = await startTestServer();
    const { tenant, defaultAppClientId, console: consoleApp } = server.server.prepared.bootstrap!;
    // Many calls in a row: lift the management rate limit for this file.
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, rate_limits: { management: { capacity: 100_000, per_second: 100_000 } } },
    });
    server.server.services.tenants.invalidate();
    token = await managementToken(server);
    defaultApp = defaultAppClientId!;
    consoleClient = consoleApp.clientId;
    adminClient = server.admin.client_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists the database connection made at first start, in every paging form', async () => {
    const plain = await json<ConnectionJson[]>(call('GET', '/connections'));
    // Both are made in the same millisecond at first start: their order (created_at, then random id) varies.
    expect([...plain].sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual([
      expect.objectContaining({
        name: 'Username-Password-Authentication',
        strategy: 'auth0',
        // The demo app, and the admin console, whose admins sign in with a password.
        enabled_clients: expect.arrayContaining([defaultApp, consoleClient]),
        realms: ['Username-Password-Authentication'],
        is_domain_connection: false,
        options: expect.objectContaining({ passwordPolicy: 'good' }),
      }),
      // The demo's passwordless connection, also made at first start.
      expect.objectContaining({ name: 'email', strategy: 'email', enabled_clients: [defaultApp] }),
    ]);
    expect(plain.find((c) => c.name === 'Username-Password-Authentication')!.enabled_clients).toHaveLength(2);
    expect(plain.every((c) => /^con_[A-Za-z0-9]{16}$/.test(c.id))).toBe(true);
    // What auth0@7 connections.list() sends: checkpoint form with `next` absent on the last page.
    expect(await json(call('GET', '/connections?include_totals=true&take=50'))).toEqual({ connections: plain });
    expect(await json(call('GET', '/connections?page=0&per_page=10&include_totals=true'))).toEqual({
      start: 0,
      limit: 10,
      length: 2,
      total: 2,
      connections: plain,
    });
  });

  it('creates a database connection with its options echoed, defaults added and clients enabled', async () => {
    const options = {
      requires_username: true,
      validation: { username: { min: 3, max: 20 } },
      passwordPolicy: 'excellent',
      password_complexity_options: { min_length: 12 },
      password_history: { enable: true, size: 5 },
      password_no_personal_info: { enable: true },
      password_dictionary: { enable: true, dictionary: ['gatehouse'] },
      disable_signup: true,
      custom_flag: { kept: ['as', 'is'] },
    };
    const created = await create({
      name: 'staff-db',
      strategy: 'auth0',
      display_name: 'Staff',
      options,
      enabled_clients: [defaultApp],
      metadata: { team: 'identity' },
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^con_[A-Za-z0-9]{16}$/),
      name: 'staff-db',
      display_name: 'Staff',
      strategy: 'auth0',
      options: { ...options, brute_force_protection: true, disable_self_service_change_password: false },
      enabled_clients: [defaultApp],
      realms: ['staff-db'],
      is_domain_connection: false,
      metadata: { team: 'identity' },
    });
    expect(await json(call('GET', `/connections/${created.id}`))).toEqual(created);
    expect(await json(call('GET', `/connections/${created.id}?fields=id,name&include_fields=true`))).toEqual({ id: created.id, name: 'staff-db' });
    expect(Object.keys(await json(call('GET', `/connections/${created.id}?fields=options,metadata&include_fields=false`)))).not.toContain('options');
  });

  it('creates passwordless email and sms connections with their options', async () => {
    // Replace the one made at first start: this test sets every option itself.
    const made = (await json<ConnectionJson[]>(call('GET', '/connections?name=email')))[0]!;
    expect((await call('DELETE', `/connections/${made.id}`)).status).toBe(204);
    const email = await create({
      name: 'email',
      strategy: 'email',
      options: {
        name: 'email',
        email: { from: 'Gatehouse <login@example.com>', subject: 'Your code', body: '<p>{{ code }}</p>', syntax: 'liquid' },
        authParams: JSON.stringify({ scope: 'openid email' }),
        totp: { length: 6, time_step: 180 },
        disable_signup: false,
      },
    });
    expect(email.options).toMatchObject({ authParams: '{"scope":"openid email"}', totp: { length: 6, time_step: 180 }, brute_force_protection: true });
    const sms = await create({
      name: 'sms',
      strategy: 'sms',
      options: { from: '+15550001111', template: 'Your code is {{ code }}', syntax: 'md_with_macros', provider: 'sms_gateway', gateway_url: 'https://sms.example/send', forward_req_info: true },
    });
    expect(sms.options).toMatchObject({ provider: 'sms_gateway', gateway_url: 'https://sms.example/send', forward_req_info: true });
  });

  it('filters by strategy (repeated or comma-separated) and by name', async () => {
    const names = async (query: string) => (await json<ConnectionJson[]>(call('GET', `/connections?${query}`))).map((c) => c.name).sort();
    expect(await names('strategy=email')).toEqual(['email']);
    expect(await names('strategy=email&strategy=sms')).toEqual(['email', 'sms']);
    expect(await names('strategy=email,sms')).toEqual(['email', 'sms']);
    expect(await names('strategy=samlp')).toEqual([]);
    expect(await names('name=staff-db')).toEqual(['staff-db']);
    const page = await json<{ connections: ConnectionJson[]; next?: string }>(call('GET', '/connections?take=2'));
    expect(page.connections).toHaveLength(2);
    expect(page.next).toEqual(expect.any(String));
    const rest = await json<{ connections: ConnectionJson[]; next?: string }>(call('GET', `/connections?take=2&from=${page.next}`));
    expect(rest.connections.length).toBeGreaterThan(0);
    expect(rest.connections.map((c) => c.id)).not.toContain(page.connections[0]!.id);
    await expectError(call('GET', '/connections?from=garbage'), 400, 'invalid_query_string');
  });

  it('refuses a taken name with 409 connection_conflict', async () => {
    await create({ name: 'dup-name', strategy: 'auth0' });
    await expectError(call('POST', '/connections', { name: 'dup-name', strategy: 'email' }), 409, 'connection_conflict');
  });

  it('refuses strategies it does not support, naming the three it does', async () => {
    await expectError(call('POST', '/connections', { name: 'ad', strategy: 'ad' }), 400, 'invalid_body', /auth0, email, sms/);
  });

  it.each([
    ['a bad name', { name: '-leading-dash', strategy: 'auth0' }],
    ['a double dash', { name: 'a--b', strategy: 'auth0' }],
    ['a space', { name: 'has space', strategy: 'auth0' }],
    ['a name over 128', { name: 'a'.repeat(129), strategy: 'auth0' }],
    ['no strategy', { name: 'nostrategy' }],
    ['an unknown property', { name: 'extra', strategy: 'auth0', bogus: true }],
    ['a wrong type', { name: 'wrongtype', strategy: 'auth0', show_as_button: 'yes' }],
    ['an unknown password policy', { name: 'pp', strategy: 'auth0', options: { passwordPolicy: 'strong' } }],
    ['a wrong option type', { name: 'ru', strategy: 'auth0', options: { requires_username: 'true' } }],
    ['username min over max', { name: 'mm', strategy: 'auth0', options: { validation: { username: { min: 10, max: 5 } } } }],
    ['min_length out of range', { name: 'ml', strategy: 'auth0', options: { password_complexity_options: { min_length: 0 } } }],
    ['authParams not JSON', { name: 'ap', strategy: 'email', options: { authParams: '{not json' } }],
    ['a bad sms syntax', { name: 'sx', strategy: 'sms', options: { syntax: 'html' } }],
    ['an unknown client', { name: 'uc', strategy: 'auth0', enabled_clients: ['no-such-client'] }],
    ['options not an object', { name: 'oo', strategy: 'auth0', options: 'x' }],
  ])('refuses %s with 400, writing nothing', async (_what, body) => {
    await expectError(call('POST', '/connections', body), 400, 'invalid_body');
    const names = (await json<ConnectionJson[]>(call('GET', '/connections?per_page=100'))).map((c) => c.name);
    expect(names).not.toContain((body as Json).name);
  });

  it('404s an unknown id and 400s a malformed one', async () => {
    await expectError(call('GET', '/connections/con_AAAAAAAAAAAAAAAA'), 404, 'inexistent_connection');
    await expectError(call('PATCH', '/connections/con_AAAAAAAAAAAAAAAA', { display_name: 'x' }), 404, 'inexistent_connection');
    await expectError(call('GET', '/connections/con_AAAAAAAAAAAAAAAA/clients'), 404, 'inexistent_connection');
    await expectError(call('GET', '/connections/not-an-id'), 400, 'invalid_uri');
    await expectError(call('DELETE', '/connections/con_short'), 400, 'invalid_uri');
  });

  it('updates a connection: options replaced whole, name and strategy immutable', async () => {
    const c = await create({ name: 'patch-me', strategy: 'auth0', options: { passwordPolicy: 'low', disable_signup: true } });
    const patched = await json<ConnectionJson>(call('PATCH', `/connections/${c.id}`, { display_name: 'Patched', options: { passwordPolicy: 'fair' } }));
    expect(patched).toMatchObject({ id: c.id, name: 'patch-me', display_name: 'Patched', options: { passwordPolicy: 'fair' } });
    expect(patched.options).not.toHaveProperty('disable_signup');
    // Sending back the same name and strategy is fine (tools send what they read).
    expect((await call('PATCH', `/connections/${c.id}`, { name: 'patch-me', strategy: 'auth0', show_as_button: true })).status).toBe(200);
    await expectError(call('PATCH', `/connections/${c.id}`, { name: 'renamed' }), 400, 'invalid_body', /name/);
    await expectError(call('PATCH', `/connections/${c.id}`, { strategy: 'email' }), 400, 'invalid_body', /strategy/);
    await expectError(call('PATCH', `/connections/${c.id}`, { options: { passwordPolicy: 'nope' } }), 400, 'invalid_body');
    await expectError(call('PATCH', `/connections/${c.id}`, { id: 'con_x' }), 400, 'invalid_body');
    expect(await json(call('GET', `/connections/${c.id}`))).toMatchObject({ display_name: 'Patched', show_as_button: true, options: { passwordPolicy: 'fair' } });
  });

  it('replaces enabled_clients on patch (the deprecated way)', async () => {
    const c = await create({ name: 'legacy-clients', strategy: 'auth0', enabled_clients: [defaultApp] });
    const patched = await json<ConnectionJson>(call('PATCH', `/connections/${c.id}`, { enabled_clients: [adminClient] }));
    expect(patched.enabled_clients).toEqual([adminClient]);
    await expectError(call('PATCH', `/connections/${c.id}`, { enabled_clients: ['ghost'] }), 400, 'invalid_body');
    expect((await json<ConnectionJson>(call('GET', `/connections/${c.id}`))).enabled_clients).toEqual([adminClient]);
  });

  it('enables and disables clients through /connections/{id}/clients', async () => {
    const c = await create({ name: 'client-links', strategy: 'auth0' });
    expect(await json(call('GET', `/connections/${c.id}/clients`))).toEqual({ clients: [] });
    const enable = await call('PATCH', `/connections/${c.id}/clients`, [
      { client_id: defaultApp, status: true },
      { client_id: adminClient, status: true },
    ]);
    expect(enable.status).toBe(204);
    const both = [defaultApp, adminClient].sort();
    expect(await json(call('GET', `/connections/${c.id}/clients`))).toEqual({ clients: both.map((client_id) => ({ client_id })) });
    const first = await json<{ clients: Json[]; next: string }>(call('GET', `/connections/${c.id}/clients?take=1`));
    expect(first.clients).toEqual([{ client_id: both[0] }]);
    expect(await json(call('GET', `/connections/${c.id}/clients?take=1&from=${first.next}`))).toEqual({ clients: [{ client_id: both[1] }] });
    // Idempotent; disabling removes.
    expect((await call('PATCH', `/connections/${c.id}/clients`, [{ client_id: defaultApp, status: true }])).status).toBe(204);
    expect((await call('PATCH', `/connections/${c.id}/clients`, [{ client_id: adminClient, status: false }])).status).toBe(204);
    expect((await json<ConnectionJson>(call('GET', `/connections/${c.id}`))).enabled_clients).toEqual([defaultApp]);

    await expectError(call('PATCH', `/connections/${c.id}/clients`, [{ client_id: 'ghost', status: true }]), 400, 'invalid_body');
    await expectError(call('PATCH', `/connections/${c.id}/clients`, [{ client_id: defaultApp, status: 'on' }]), 400, 'invalid_body');
    await expectError(call('PATCH', `/connections/${c.id}/clients`, [{ client_id: defaultApp }]), 400, 'invalid_body');
    await expectError(call('PATCH', `/connections/${c.id}/clients`, { client_id: defaultApp, status: true }), 400, 'invalid_body');
    const tooMany = Array.from({ length: 51 }, () => ({ client_id: defaultApp, status: false }));
    await expectError(call('PATCH', `/connections/${c.id}/clients`, tooMany), 400, 'invalid_body');
    expect((await json<ConnectionJson>(call('GET', `/connections/${c.id}`))).enabled_clients).toEqual([defaultApp]);
    await expectError(call('GET', `/connections/${c.id}/clients?page=1`), 400, 'invalid_query_string');
  });

  it('deletes a connection with its users; identities linked from elsewhere become users again', async () => {
    const doomed = await create({ name: 'doomed', strategy: 'auth0' });
    await create({ name: 'survivor', strategy: 'email' });
    const res = await call('POST', '/users', { connection: 'doomed', email: 'doomed@example.com', password: 'Str0ng!Passw0rd' });
    expect(res.status).toBe(201);
    const { user_id: doomedUser } = await json<{ user_id: string }>(res);
    const { user_id: emailUser } = await json<{ user_id: string }>(call('POST', '/users', { connection: 'survivor', email: 'linked@example.com' }));
    const [provider, id] = emailUser.split('|');
    expect((await call('POST', `/users/${encodeURIComponent(doomedUser)}/identities`, { provider, user_id: id })).status).toBe(201);
    expect((await call('GET', `/users/${encodeURIComponent(emailUser)}`)).status).toBe(404);

    expect((await call('DELETE', `/connections/${doomed.id}`)).status).toBe(204);
    await expectError(call('GET', `/connections/${doomed.id}`), 404, 'inexistent_connection');
    expect(await findUser(server.server.prepared.store.db, server.server.prepared.bootstrap!.tenant.id, doomedUser)).toBeUndefined();
    expect(await json(call('GET', `/users/${encodeURIComponent(emailUser)}`))).toMatchObject({ user_id: emailUser, email: 'linked@example.com' });
    // Already gone: still 204.
    expect((await call('DELETE', `/connections/${doomed.id}`)).status).toBe(204);
    // The name is free again.
    await create({ name: 'doomed', strategy: 'auth0' });
  });

  it('deletes all of a connection in one transaction: a failure leaves everything in place', async () => {
    const c = await create({ name: 'atomic', strategy: 'auth0' });
    const db = server.server.prepared.store.db;
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const now = Date.now();
    const user: User = {
      user_id: 'auth0|atomic-user',
      tenant_id: tenantId,
      connection_id: c.id,
      email: 'atomic@example.com',
      email_verified: false,
      username: null,
      phone_number: null,
      phone_verified: false,
      password_hash: null,
      blocked: false,
      profile: {},
      user_metadata: {},
      app_metadata: {},
      linked_to: null,
      logins_count: 0,
      last_login: null,
      last_ip: null,
      last_password_reset: null,
      created_at: now,
      updated_at: now,
    };
    await insertUser(db, user);
    // A trigger makes the final statement (the connection row) fail after the users are gone.
    const { sql } = await import('kysely');
    await sql`create trigger refuse_connection_delete before delete on connections begin select raise(abort, 'refused'); end`.execute(db);
    try {
      const res = await call('DELETE', `/connections/${c.id}`);
      expect(res.status).toBe(500);
    } finally {
      await sql`drop trigger refuse_connection_delete`.execute(db);
    }
    expect(await findUser(db, tenantId, user.user_id)).toBeDefined();
    expect((await call('GET', `/connections/${c.id}`)).status).toBe(200);
  });

  it('documents its operations, with their scopes, in the OpenAPI document', async () => {
    const doc = await json<{ paths: Record<string, Record<string, { security: Record<string, string[]>[] }>> }>(fetch(`${server.url}/api/v2/openapi.json`));
    expect(doc.paths['/connections/{id}/clients']?.patch?.security).toEqual([{ managementApiToken: ['update:connections'] }]);
    expect(Object.keys(doc.paths['/connections/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths['/users/{id}/identities/{provider}/{user_id}']?.delete?.security).toEqual([
      { managementApiToken: ['update:users', 'update:current_user_identities'] },
    ]);
    expect(doc.paths['/user-blocks']?.get?.security).toEqual([{ managementApiToken: ['read:users'] }]);
  });

  describe('scopes', () => {
    let conId: string;
    beforeAll(async () => {
      conId = (await create({ name: 'scoped', strategy: 'auth0' })).id;
    });
    const routes = (): [string, string, unknown, string, number][] => [
      ['GET', '/connections', undefined, 'read:connections', 200],
      ['GET', `/connections/${conId}`, undefined, 'read:connections', 200],
      ['GET', `/connections/${conId}/clients`, undefined, 'read:connections', 200],
      ['POST', '/connections', { name: `scoped-${Math.random().toString(36).slice(2, 8)}`, strategy: 'auth0' }, 'create:connections', 201],
      ['PATCH', `/connections/${conId}`, { display_name: 'Scoped' }, 'update:connections', 200],
      ['PATCH', `/connections/${conId}/clients`, [{ client_id: defaultApp, status: true }], 'update:connections', 204],
      ['DELETE', `/connections/${conId}`, undefined, 'delete:connections', 204],
    ];
    it('refuses each route without its scope (403 naming it) and allows it with the scope', async () => {
      const unrelated = await managementToken(server, ['read:users', 'create:users', 'update:users', 'delete:users']);
      for (const [method, path, body, scope, status] of routes()) {
        const denied = await expectError(call(method, path, body, unrelated), 403, 'insufficient_scope');
        expect(denied.message).toBe(`Insufficient scope, expected any of: ${scope}`);
        const allowed = await call(method, path, body, await managementToken(server, [scope]));
        expect(allowed.status, `${method} ${path}`).toBe(status);
      }
    });
  });
});
