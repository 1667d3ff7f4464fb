/**
 * The unmodified auth0@7 Management SDK against the real server: its per-resource sub-clients with `baseUrl`
 * pointed here and a token from the admin client, doing create/get/update/list/delete on each resource.
 * Anything the SDK sends that the server refuses, or anything it cannot read back, fails here.
 */
import { ManagementClient } from 'auth0';
import { ResourceServersClient } from 'auth0/resourceServers';
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
});
