/**
 * The unmodified auth0@7 Management SDK against the real server: its per-resource sub-clients with `baseUrl`
 * pointed here and a token from the admin client, doing create/get/update/list/delete on each resource.
 * Anything the SDK sends that the server refuses, or anything it cannot read back, fails here.
 */
import { ManagementClient } from 'auth0';
import { ClientGrantsClient } from 'auth0/clientGrants';
import { ClientsClient } from 'auth0/clients';
import { ConnectionsClient } from 'auth0/connections';
import { ResourceServersClient } from 'auth0/resourceServers';
import { RolesClient } from 'auth0/roles';
import { UsersClient } from 'auth0/users';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../packages/server/src/test-support/server.js';
import { startServerWithAdminToken } from './support.js';

describe('auth0@7 Management SDK', () => {
  let server: TestServer;
  let token: string;
  let baseUrl: string;

  beforeAll(async () => {
    ({ server, token, baseUrl } = await startServerWithAdminToken());
  });
  afterAll(async () => {
    await server?.close();
  });

  it('ManagementClient fetches its own token with client credentials (https rewritten to this server)', async () => {
    const domain = new URL(server.url).host;
    // The SDK hard-codes https://{domain}; a custom fetch is its documented way to reach a plain-HTTP server.
    const rewrite: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      return fetch(url.replace(`https://${domain}`, server.url), init);
    };
    const management = new ManagementClient({
      domain,
      clientId: server.admin.client_id,
      clientSecret: server.admin.client_secret,
      audience: `${server.url}/api/v2/`,
      fetch: rewrite,
    });
    const page = await management.resourceServers.list();
    expect(page.data.map((rs) => rs.identifier)).toContain(`${server.url}/api/v2/`);
  });

  it('resourceServers: create, get, update, list, delete', async () => {
    const client = new ResourceServersClient({ baseUrl, token });
    const created = await client.create({ identifier: 'https://compat.example/', name: 'Compat', scopes: [{ value: 'read:things', description: 'Read' }] });
    expect(created.identifier).toBe('https://compat.example/');
    const fetched = await client.get(created.id!);
    expect(fetched.name).toBe('Compat');
    const updated = await client.update(created.id!, { name: 'Compat API', token_lifetime: 600 });
    expect(updated.token_lifetime).toBe(600);
    const listed = [];
    for await (const rs of await client.list()) listed.push(rs.identifier);
    expect(listed).toContain('https://compat.example/');
    await client.delete(created.id!);
    await expect(client.get(created.id!)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('clients: create, get, update, list, rotate-secret, delete', async () => {
    const client = new ClientsClient({ baseUrl, token });
    const created = await client.create({
      name: 'Compat Web App',
      app_type: 'regular_web',
      callbacks: ['https://app.example/callback'],
      web_origins: ['https://app.example'],
    });
    expect(created.client_id).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(created.client_secret).toBeTruthy();
    const fetched = await client.get(created.client_id!);
    expect(fetched.callbacks).toEqual(['https://app.example/callback']);
    const updated = await client.update(created.client_id!, { allowed_logout_urls: ['https://app.example/'] });
    expect(updated.allowed_logout_urls).toEqual(['https://app.example/']);
    const names = [];
    for await (const c of await client.list()) names.push(c.name);
    expect(names).toContain('Compat Web App');
    const rotated = await client.rotateSecret(created.client_id!);
    expect(rotated.client_secret).not.toBe(created.client_secret);
    await client.delete(created.client_id!);
    await expect(client.get(created.client_id!)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('clientGrants: create, get, update, list (checkpoint paging), delete', async () => {
    const apis = new ResourceServersClient({ baseUrl, token });
    await apis.create({ identifier: 'https://grants.example/', scopes: [{ value: 'read:a' }, { value: 'read:b' }] });
    const machine = await new ClientsClient({ baseUrl, token }).create({ name: 'Compat Machine', app_type: 'non_interactive' });
    const grants = new ClientGrantsClient({ baseUrl, token });
    const created = await grants.create({ client_id: machine.client_id!, audience: 'https://grants.example/', scope: ['read:a'] });
    expect(created.scope).toEqual(['read:a']);
    const updated = await grants.update(created.id!, { scope: ['read:a', 'read:b'] });
    expect(updated.scope).toEqual(['read:a', 'read:b']);
    const audiences = [];
    for await (const g of await grants.list({ client_id: machine.client_id! })) audiences.push(g.audience);
    expect(audiences).toEqual(['https://grants.example/']);

    // The grant works: the new client gets a token for the API with the granted scopes.
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: machine.client_id!,
        client_secret: machine.client_secret!,
        audience: 'https://grants.example/',
      }),
    });
    expect(((await res.json()) as { scope: string }).scope).toBe('read:a read:b');

    await grants.delete(created.id!);
    const left = [];
    for await (const g of await grants.list({ client_id: machine.client_id! })) left.push(g);
    expect(left).toEqual([]);
  });

  it('roles: create, get, update, list, permissions, delete', async () => {
    await new ResourceServersClient({ baseUrl, token }).create({ identifier: 'https://roles.example/', scopes: [{ value: 'read:reports' }] });
    const roles = new RolesClient({ baseUrl, token });
    const created = await roles.create({ name: 'compat-auditor', description: 'Reads reports' });
    expect(created.id).toMatch(/^rol_/);
    expect((await roles.get(created.id!)).name).toBe('compat-auditor');
    const updated = await roles.update(created.id!, { description: 'Reads every report' });
    expect(updated.description).toBe('Reads every report');
    await roles.permissions.add(created.id!, {
      permissions: [{ resource_server_identifier: 'https://roles.example/', permission_name: 'read:reports' }],
    });
    const permissions = [];
    for await (const p of await roles.permissions.list(created.id!)) permissions.push(p.permission_name);
    expect(permissions).toEqual(['read:reports']);
    const names = [];
    for await (const r of await roles.list()) names.push(r.name);
    expect(names).toContain('compat-auditor');
    await roles.delete(created.id!);
    await expect(roles.get(created.id!)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('connections: create, get, update, list (checkpoint paging), delete', async () => {
    const connections = new ConnectionsClient({ baseUrl, token });
    const created = await connections.create({
      name: 'compat-db',
      strategy: 'auth0',
      options: { passwordPolicy: 'fair', requires_username: false },
    });
    expect(created.id).toMatch(/^con_[A-Za-z0-9]{16}$/);
    expect((await connections.get(created.id!)).strategy).toBe('auth0');
    const updated = await connections.update(created.id!, { options: { passwordPolicy: 'excellent' }, display_name: 'Compat DB' });
    expect(updated.options).toMatchObject({ passwordPolicy: 'excellent' });
    const names = [];
    for await (const c of await connections.list()) names.push(c.name);
    expect(names).toEqual(expect.arrayContaining(['compat-db', 'Username-Password-Authentication']));
    await connections.delete(created.id!);
    await expect(connections.get(created.id!)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('users: create, get, update (metadata merge), list, by email, delete', async () => {
    const users = new UsersClient({ baseUrl, token });
    const created = await users.create({
      connection: 'Username-Password-Authentication',
      email: 'Compat.User@Example.com',
      password: 'Correct-Horse-Battery-9',
      user_metadata: { theme: 'dark', lang: 'en' },
    });
    expect(created.user_id).toMatch(/^auth0\|[0-9a-f]{24}$/);
    expect(created.email).toBe('compat.user@example.com');
    const fetched = await users.get(created.user_id!);
    expect(fetched.identities?.[0]).toMatchObject({ provider: 'auth0', connection: 'Username-Password-Authentication' });
    const updated = await users.update(created.user_id!, { user_metadata: { theme: null, plan: 'pro' } });
    expect(updated.user_metadata).toEqual({ lang: 'en', plan: 'pro' });
    const listed = [];
    for await (const u of await users.list()) listed.push(u.user_id);
    expect(listed).toContain(created.user_id);
    const byEmail = await users.listUsersByEmail({ email: 'compat.user@example.com' });
    expect(byEmail.map((u) => u.user_id)).toEqual([created.user_id]);
    await users.delete(created.user_id!);
    await expect(users.get(created.user_id!)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('maps errors the way the SDK expects: 409 ConflictError, 400 BadRequestError with the body passed through', async () => {
    const users = new UsersClient({ baseUrl, token });
    const body = { connection: 'Username-Password-Authentication', email: 'twice@example.com', password: 'Correct-Horse-Battery-9' };
    await users.create(body);
    await expect(users.create(body)).rejects.toMatchObject({ statusCode: 409, body: { errorCode: 'user_exists' } });
    await expect(users.create({ ...body, email: 'weak@example.com', password: 'short' })).rejects.toMatchObject({ statusCode: 400 });
  });
});
