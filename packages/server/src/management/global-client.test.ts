/**
 * The tenant's global client over real HTTP: listed as the reference lists it (first, `global: true`,
 * "All Applications"), found by id, read-only, and unable to obtain any token, while the Management API keeps
 * taking tokens from the tenant's own clients exactly as before. Stateless (derived from the tenant), so SQLite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementCaller } from '../test-support/management-api.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { globalClientId } from './global-client.js';

type Json = Record<string, unknown>;

describe('the global client', () => {
  let server: TestServer;
  let id: string;

  const call = managementCaller(() => server);

  beforeAll(async () => {
    server = await startTestServer();
    id = globalClientId(server.server.prepared.bootstrap!.tenant);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is listed first with global: true, and alone with is_global=true', async () => {
    const all = (await call('GET', '/clients')).body as unknown as Json[];
    expect(all[0]).toMatchObject({ client_id: id, global: true, name: 'All Applications', tenant: server.server.prepared.bootstrap!.tenant.name });
    expect(all.slice(1).every((c) => c.global === false)).toBe(true);
    expect(all[0]).not.toHaveProperty('client_secret');
    const paged = (await call('GET', '/clients?is_global=true&page=0&per_page=100&include_totals=true')).body;
    expect(paged).toMatchObject({ total: 1, clients: [{ client_id: id, global: true }] });
    expect(((await call('GET', '/clients?is_global=false')).body as unknown as Json[]).some((c) => c.global)).toBe(false);
    expect(id).toMatch(/^[A-Za-z0-9]{32}$/);
    // The same id after a restart: derived from the tenant, not random.
    server = await server.restart();
    expect((await call('GET', `/clients/${id}?fields=client_id,global`)).body).toEqual({ client_id: id, global: true });
  });

  it('is read-only', async () => {
    for (const [method, path, body] of [
      ['PATCH', `/clients/${id}`, { custom_login_page_on: true }],
      ['DELETE', `/clients/${id}`, undefined],
      ['POST', `/clients/${id}/rotate-secret`, undefined],
    ] as const) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ errorCode: 'operation_not_supported', message: expect.stringContaining('global client') });
    }
  });

  it('obtains no token; Management tokens still come from the tenant’s clients', async () => {
    const audience = `${server.url}/api/v2/`;
    const denied = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: 'anything-at-all-here', audience }),
    });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ error: 'invalid_client' });
    const granted = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: server.admin.client_id, client_secret: server.admin.client_secret, audience }),
    });
    expect(granted.status).toBe(200);
    const { access_token } = (await granted.json()) as { access_token: string };
    expect((await fetch(`${server.url}/api/v2/clients/${id}`, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);
  });
});
