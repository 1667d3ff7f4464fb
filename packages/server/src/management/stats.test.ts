/**
 * /api/v2/stats from a known set of log events, on SQLite and PostgreSQL: rows written a few days back (logins
 * `s` and `sepft`, signups, breached passwords, and events that are not counted) and two real password logins
 * today; active users counts each user once, within 30 days; daily counts per UTC day with the first and last
 * event's times; bad days and ranges are 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { createClient, createUser, PASSWORD, post } from '../auth-api/user-tokens/testing.js';
import { logRow } from '../logs/log-event.js';
import { writeLogEvents } from '../logs/writer.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { postgresAvailable } from '../test-support/services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const DAY = 86_400_000;
const ORIGIN = { ip: '203.0.113.7', user_agent: 'test', hostname: 'localhost' };
const yyyymmdd = (time: number) => new Date(time).toISOString().slice(0, 10).replaceAll('-', '');

describe.each(dialects)('stats on %s', (dialect) => {
  let server: TestServer;
  let token: string;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const dayA = today - 3 * DAY;
  const dayB = today - 2 * DAY;

  const get = async (path: string, bearer = token) => {
    const res = await fetch(`${server.url}/api/v2${path}`, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: res.status, body: (await res.json()) as unknown };
  };

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const row = (type: 's' | 'sepft' | 'ss' | 'pwd_leak' | 'signup_pwd_leak' | 'fp' | 'sapi', at: number, user_id?: string) =>
      logRow(tenantId, { type, ...(user_id && { user_id }) }, ORIGIN, at);
    await writeLogEvents(server.server.prepared.store.db, [
      // Day A: 3 logins by 2 users, 1 signup, and events not counted.
      row('s', dayA + 1000, 'auth0|a'),
      row('s', dayA + 2000, 'auth0|a'),
      row('sepft', dayA + 3000, 'auth0|b'),
      row('ss', dayA + 4000, 'auth0|c'),
      row('fp', dayA + 5000, 'auth0|a'),
      row('sapi', dayA + 6000),
      // Day B: 1 login, 2 signups, 2 breached passwords (one at signup).
      row('s', dayB + 10_000, 'auth0|c'),
      row('ss', dayB + 20_000, 'auth0|d'),
      row('ss', dayB + 30_000, 'auth0|e'),
      row('pwd_leak', dayB + 40_000, 'auth0|a'),
      row('signup_pwd_leak', dayB + 50_000),
      // 40 days ago: counted by daily over that day, not by active users.
      row('s', today - 40 * DAY, 'auth0|old'),
    ]);
    // Two real password logins today (sepft), one of them twice.
    const app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT] });
    const users = [await createUser(server), await createUser(server)];
    for (const user of [users[0]!, users[1]!, users[0]!]) {
      const res = await post(server, '/oauth/token', { grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME, ...app.auth, username: user.email, password: PASSWORD });
      expect(res.status).toBe(200);
    }
    await server.server.services.tenantLogs.flush();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('counts each user with a login in the last 30 days once', async () => {
    // a, b, c from the rows, and the two real users.
    expect(await get('/stats/active-users')).toEqual({ status: 200, body: 5 });
  });

  it('counts logins, signups and breached passwords per day', async () => {
    const res = await get(`/stats/daily?from=${yyyymmdd(dayA)}&to=${yyyymmdd(today)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        date: new Date(dayA).toISOString(),
        logins: 3,
        signups: 1,
        leaked_passwords: 0,
        created_at: new Date(dayA + 1000).toISOString(),
        updated_at: new Date(dayA + 4000).toISOString(),
      },
      {
        date: new Date(dayB).toISOString(),
        logins: 1,
        signups: 2,
        leaked_passwords: 2,
        created_at: new Date(dayB + 10_000).toISOString(),
        updated_at: new Date(dayB + 50_000).toISOString(),
      },
      expect.objectContaining({ date: new Date(today).toISOString(), logins: 3, leaked_passwords: 0 }),
    ]);
    expect((await get(`/stats/daily?from=${yyyymmdd(dayB)}&to=${yyyymmdd(dayB)}`)).body).toEqual([expect.objectContaining({ logins: 1, signups: 2 })]);
    const old = today - 40 * DAY;
    expect((await get(`/stats/daily?from=${yyyymmdd(old)}&to=${yyyymmdd(old)}`)).body).toEqual([expect.objectContaining({ logins: 1, signups: 0 })]);
    // Without from: the 30 days up to today.
    expect(((await get('/stats/daily')).body as unknown[]).length).toBe(3);
  });

  it('refuses days that are not days, reversed and over-long ranges, and tokens without read:stats', async () => {
    for (const query of ['from=20250230', 'to=2025-01-01', 'from=20250102&to=20250101', 'from=20200101&to=20250101', 'since=20250101']) {
      const res = await get(`/stats/daily?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    }
    const narrow = await managementToken(server, ['read:logs']);
    expect((await get('/stats/active-users', narrow)).status).toBe(403);
  });
});
