/**
 * What a password login reads (issue #18): once the config cache has the connection a client logs in with,
 * a login reads no connection rows, and a Management API change to the connection's clients applies to the
 * very next login (the cache is dropped on write, not left to expire).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findConnectionByName } from '../../store/connections.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { management } from '../../test-support/sign-in.js';
import { DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import { createClient, createUser, PASSWORD, post, type TestClient } from '../user-tokens/testing.js';
import { PASSWORD_REALM_GRANT } from './password-realm.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('password login reads on %s', (dialect) => {
  let server: TestServer;
  let app: TestClient;
  let recording: string[] | undefined;
  const readsConnections = (queries: string[]) => queries.filter((sql) => /\b(from|into|update)\s+"?connection(s|_clients)"?/i.test(sql));

  beforeAll(async () => {
    server = await startTestServer({ dialect, onQuery: ({ sql }) => recording?.push(sql) });
    app = await createClient(server, { grant_types: [PASSWORD_REALM_GRANT] });
  });
  afterAll(() => server?.close());

  async function login(email: string): Promise<{ status: number; error?: unknown; queries: string[] }> {
    recording = [];
    try {
      const res = await post(server, '/oauth/token', {
        grant_type: PASSWORD_REALM_GRANT,
        ...app.auth,
        username: email,
        password: PASSWORD,
        realm: DATABASE_CONNECTION_NAME,
        scope: 'openid',
      });
      return { status: res.status, error: res.body.error, queries: recording };
    } finally {
      recording = undefined;
    }
  }

  it('reads no connection rows once the connection is cached, and sees a change to its clients at once', async () => {
    const user = await createUser(server);
    const first = await login(user.email!);
    expect(first.status).toBe(200);
    expect(readsConnections(first.queries).length).toBeGreaterThan(0);

    const again = await login(user.email!);
    expect(again.status).toBe(200);
    expect(readsConnections(again.queries)).toEqual([]);
    // The user is still looked up and the login recorded on every attempt.
    expect(again.queries.some((sql) => /update\s+"users"/i.test(sql))).toBe(true);

    const { tenant } = server.server.prepared.bootstrap!;
    const connection = (await findConnectionByName(server.server.prepared.store.db, tenant.id, DATABASE_CONNECTION_NAME))!;
    const disable = await management(server, 'PATCH', `/connections/${connection.id}/clients`, [{ client_id: app.client.client_id, status: false }]);
    expect(disable.status).toBe(204);
    const refused = await login(user.email!);
    expect(refused.status).toBe(400);
    expect(refused.error).toBe('invalid_request');

    const enable = await management(server, 'PATCH', `/connections/${connection.id}/clients`, [{ client_id: app.client.client_id, status: true }]);
    expect(enable.status).toBe(204);
    expect((await login(user.email!)).status).toBe(200);
  });
});
