/** /api/v2/user-blocks over real HTTP, with blocks written through the repository as attack protection will. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUserBlock, listUserBlocks } from '../store/users.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

type Json = Record<string, unknown>;

describe('Management API: user blocks', () => {
  let server: TestServer;
  let token: string;
  let tenantId: string;
  let userId: string;
  const HOUR = 3_600_000;

  const call = (method: string, path: string, bearer = token) => fetch(`${server.url}/api/v2${path}`, { method, headers: { authorization: `Bearer ${bearer}` } });
  const json = async <T = Json>(res: Response | Promise<Response>): Promise<T> => (await (await res).json()) as T;
  const expectError = async (res: Response | Promise<Response>, status: number, errorCode: string) => {
    const response = await res;
    expect({ status: response.status, body: await json(response) }).toMatchObject({ status, body: { statusCode: status, errorCode } });
  };
  let sequence = 0;
  /** Blocks in the order written (created_at orders them; ties would fall back to the random id). */
  const block = (fields: { user_id?: string | null; identifier: string; ip?: string | null; expires_at?: number }) =>
    insertUserBlock(server.server.prepared.store.db, {
      tenant_id: tenantId,
      user_id: fields.user_id ?? null,
      identifier: fields.identifier,
      ip: fields.ip === undefined ? '198.51.100.7' : fields.ip,
      created_at: Date.now() + ++sequence,
      expires_at: fields.expires_at ?? Date.now() + HOUR,
    });
  const path = (id: string) => `/user-blocks/${encodeURIComponent(id)}`;

  beforeAll(async () => {
    server = await startTestServer();
    tenantId = server.server.prepared.bootstrap!.tenant.id;
    token = await managementToken(server);
    const res = await fetch(`${server.url}/api/v2/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ connection: 'Username-Password-Authentication', email: 'Blocked@Example.com', password: 'Corr3ct-Horse!' }),
    });
    expect(res.status).toBe(201);
    userId = ((await res.json()) as { user_id: string }).user_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists a user blocks in force: by its id, and by its identifiers when the user was not known', async () => {
    expect(await json(call('GET', path(userId)))).toEqual({ blocked_for: [] });
    await block({ user_id: userId, identifier: 'blocked@example.com', ip: '198.51.100.7' });
    await block({ user_id: null, identifier: 'BLOCKED@example.com', ip: null });
    await block({ user_id: userId, identifier: 'blocked@example.com', ip: '198.51.100.8', expires_at: Date.now() - 1 }); // expired
    await block({ user_id: null, identifier: 'someone-else@example.com' });
    expect(await json(call('GET', path(userId)))).toEqual({
      blocked_for: [{ identifier: 'blocked@example.com', ip: '198.51.100.7' }, { identifier: 'blocked@example.com' }],
    });
  });

  it('lists and lifts blocks of an identifier', async () => {
    await block({ identifier: 'typed@example.com', ip: '203.0.113.1' });
    await block({ identifier: 'typed@example.com', ip: '203.0.113.2' });
    expect(await json(call('GET', '/user-blocks?identifier=Typed@Example.com'))).toEqual({
      blocked_for: [
        { identifier: 'typed@example.com', ip: '203.0.113.1' },
        { identifier: 'typed@example.com', ip: '203.0.113.2' },
      ],
    });
    expect(await json(call('GET', '/user-blocks?identifier=nobody@example.com&consider_brute_force_enablement=true'))).toEqual({ blocked_for: [] });
    expect((await call('DELETE', '/user-blocks?identifier=typed@example.com')).status).toBe(204);
    expect(await json(call('GET', '/user-blocks?identifier=typed@example.com'))).toEqual({ blocked_for: [] });
    // Others untouched.
    expect((await json<{ blocked_for: unknown[] }>(call('GET', '/user-blocks?identifier=someone-else@example.com'))).blocked_for).toHaveLength(1);
  });

  it('lifts every block of a user, expired ones included', async () => {
    expect((await call('DELETE', path(userId))).status).toBe(204);
    expect(await json(call('GET', path(userId)))).toEqual({ blocked_for: [] });
    expect(await listUserBlocks(server.server.prepared.store.db, tenantId, { userId, identifiers: ['blocked@example.com'] }, 0)).toEqual([]);
  });

  it('404s unknown users and 400s malformed input', async () => {
    await expectError(call('GET', path('auth0|000000000000000000000000')), 404, 'inexistent_user');
    await expectError(call('DELETE', path('auth0|000000000000000000000000')), 404, 'inexistent_user');
    await expectError(call('GET', '/user-blocks/not-a-user-id'), 400, 'invalid_uri');
    await expectError(call('GET', '/user-blocks'), 400, 'invalid_query_string');
    await expectError(call('DELETE', '/user-blocks?identifier='), 400, 'invalid_query_string');
    await expectError(call('GET', '/user-blocks?identifier=x&other=1'), 400, 'invalid_query_string');
  });

  it('needs read:users to read and update:users to lift', async () => {
    const reader = await managementToken(server, ['read:users']);
    const updater = await managementToken(server, ['update:users']);
    for (const url of [path(userId), '/user-blocks?identifier=x']) {
      expect((await call('GET', url, reader)).status).toBe(200);
      await expectError(call('GET', url, updater), 403, 'insufficient_scope');
      expect((await call('DELETE', url, updater)).status).toBe(204);
      await expectError(call('DELETE', url, reader), 403, 'insufficient_scope');
    }
  });
});
