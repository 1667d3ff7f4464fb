/** /api/v2/resource-servers over real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

describe('Management API: resource servers', () => {
  let server: TestServer;
  let token: string;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    server = await startTestServer();
    token = await managementToken(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates, reads (by id or identifier), updates, lists and deletes an API', async () => {
    const created = await api('POST', '/resource-servers', {
      identifier: 'https://orders.example/',
      name: 'Orders',
      scopes: [{ value: 'read:orders', description: 'Read orders' }],
      token_lifetime: 3600,
      token_dialect: 'access_token_authz',
    });
    expect(created.status).toBe(201);
    const rs = (await created.json()) as Record<string, unknown> & { id: string };
    expect(rs).toMatchObject({
      identifier: 'https://orders.example/',
      name: 'Orders',
      is_system: false,
      signing_alg: 'RS256',
      token_lifetime: 3600,
      token_dialect: 'access_token_authz',
      scopes: [{ value: 'read:orders', description: 'Read orders' }],
    });
    expect(rs).not.toHaveProperty('tenant_id');

    expect(await (await api('GET', `/resource-servers/${rs.id}`)).json()).toEqual(rs);
    expect(await (await api('GET', `/resource-servers/${encodeURIComponent('https://orders.example/')}`)).json()).toEqual(rs);

    const patched = await api('PATCH', `/resource-servers/${rs.id}`, { name: 'Orders API', allow_offline_access: true });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ name: 'Orders API', allow_offline_access: true, token_lifetime: 3600 });

    const list = (await (await api('GET', '/resource-servers?include_totals=true&per_page=1&page=1')).json()) as Record<string, unknown>;
    expect(list).toMatchObject({ start: 1, limit: 1, length: 1, total: 2 });
    const byIdentifier = (await (await api('GET', `/resource-servers?identifiers=${encodeURIComponent('https://orders.example/')}`)).json()) as unknown[];
    expect(byIdentifier).toHaveLength(1);

    expect((await api('DELETE', `/resource-servers/${rs.id}`)).status).toBe(204);
    expect((await api('GET', `/resource-servers/${rs.id}`)).status).toBe(404);
  });

  it('refuses a duplicate identifier with 409 and keeps the first', async () => {
    expect((await api('POST', '/resource-servers', { identifier: 'https://dup.example/' })).status).toBe(201);
    const again = await api('POST', '/resource-servers', { identifier: 'https://dup.example/', name: 'Other' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { errorCode: string }).errorCode).toBe('resource_server_conflict');
  });

  it('protects the Management API itself', async () => {
    const audience = encodeURIComponent(`${server.url}/api/v2/`);
    const system = (await (await api('GET', `/resource-servers/${audience}`)).json()) as { is_system: boolean; scopes: unknown[] };
    expect(system.is_system).toBe(true);
    expect(system.scopes).toHaveLength(244);
    expect((await api('PATCH', `/resource-servers/${audience}`, { name: 'x' })).status).toBe(403);
    expect((await api('DELETE', `/resource-servers/${audience}`)).status).toBe(403);
  });

  it.each([
    ['POST', '/resource-servers', { name: 'no identifier' }],
    ['POST', '/resource-servers', { identifier: 'https://x.example/', unknown_field: 1 }],
    ['POST', '/resource-servers', { identifier: 'https://x.example/', token_lifetime: 'long' }],
    ['POST', '/resource-servers', { identifier: 'https://x.example/', signing_alg: 'HS256' }],
    ['POST', '/resource-servers', { identifier: 'https://x.example/', name: '<script>' }],
    ['PATCH', '/resource-servers/nope', { name: 'x' }],
  ])('answers bad input (%s %s %o) with 400/404 in the management shape', async (method, path, body) => {
    const res = await api(method, path, body);
    expect([400, 404]).toContain(res.status);
    const error = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    expect((await api('GET', '/resource-servers?identifiers=https%3A%2F%2Fx.example%2F')).status).toBe(200);
    expect(await (await api('GET', '/resource-servers?identifiers=https%3A%2F%2Fx.example%2F')).json()).toEqual([]);
  });

  it('answers NUL characters with 400, never 500, on either dialect', async () => {
    const res = await api('POST', '/resource-servers', { identifier: 'https://nul.example/\u0000', name: 'a\u0000b' });
    expect(res.status).toBe(400);
  });

  it('answers an id of nothing with 404 inexistent_resource_server', async () => {
    const res = await api('GET', '/resource-servers/000000000000000000000000');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { errorCode: string }).errorCode).toBe('inexistent_resource_server');
  });
});
