/**
 * Tenant logs over real HTTP, on SQLite and PostgreSQL: real flows (password grants right and wrong, client
 * credentials, signups, Management API changes, a brute-force block) each leave their event type, found again
 * through GET /api/v2/logs by `q`; /logs/{id} and /users/{id}/logs; 1,000 events paged by checkpoint and by page
 * without gaps or duplicates; retention pruning; and no password, secret or token in any stored event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logRow } from '../logs/log-event.js';
import { writeLogEvents } from '../logs/writer.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { postgresAvailable } from '../test-support/services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { createClient, createUser, PASSWORD, post, type TestClient } from '../auth-api/user-tokens/testing.js';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';

type Json = Record<string, unknown>;
type Log = { log_id: string; type: string; date: string; user_id?: string; user_name?: string; client_id?: string; [key: string]: unknown };

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('tenant logs on %s', (dialect) => {
  let server: TestServer;
  let token: string;
  let app: TestClient;
  let tenantId: string;
  /** Every secret the flows below handle: none may appear in a log event. */
  const secrets: string[] = [PASSWORD];

  const api = async (path: string, init: RequestInit & { bearer?: string } = {}) => {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      ...init,
      headers: { authorization: `Bearer ${init.bearer ?? token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as unknown };
  };
  const flushed = () => server.server.services.tenantLogs.flush();
  const logs = async (query: string): Promise<Log[]> => {
    await flushed();
    const res = await api(`/logs?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Log[];
  };
  const q = (value: string, extra = '') => logs(`q=${encodeURIComponent(value)}${extra}`);
  const realm = (body: Json) => post(server, '/oauth/token', { grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME, ...app.auth, ...body });

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    tenantId = server.server.prepared.bootstrap!.tenant.id;
    token = await managementToken(server);
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT, 'refresh_token'] });
    secrets.push(app.secret!, server.admin.client_secret, token);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('logs password logins by outcome: sepft, fp (wrong password), fu (unknown user)', async () => {
    const user = await createUser(server);
    const ok = await realm({ username: user.email, password: PASSWORD, scope: 'openid offline_access' });
    expect(ok.status).toBe(200);
    secrets.push(String(ok.body.access_token), String(ok.body.id_token), String(ok.body.refresh_token));
    expect((await realm({ username: user.email, password: 'not the password 1' })).status).toBe(403);
    expect((await realm({ username: 'nobody@example.com', password: 'not the password 2' })).status).toBe(403);
    secrets.push('not the password 1', 'not the password 2');

    const [success] = await q(`type:sepft AND user_id:"${user.user_id}"`);
    expect(success).toMatchObject({
      type: 'sepft',
      user_id: user.user_id,
      user_name: user.email,
      client_id: app.client.client_id,
      client_name: app.client.name,
      connection: DATABASE_CONNECTION_NAME,
      strategy: 'auth0',
      strategy_type: 'database',
      ip: '127.0.0.1',
      scope: 'openid offline_access',
      isMobile: false,
    });
    expect(success!.description).toBe('Success Exchange (Password for Access Token)');
    expect(Date.parse(success!.date)).toBeGreaterThan(Date.now() - 60_000);
    expect(await q(`type:fp AND user_id:"${user.user_id}"`)).toEqual([expect.objectContaining({ type: 'fp', user_name: user.email, description: 'Wrong email or password.' })]);
    const unknown = await q('type:fu AND user_name:"nobody@example.com"');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).not.toHaveProperty('user_id');
    // A wrong password is logged once, by its kind, not also as a failed exchange.
    expect(await q(`type:fepft`)).toEqual([]);

    // The refresh token, exchanged: sertft; a bad one: fertft.
    expect((await post(server, '/oauth/token', { grant_type: 'refresh_token', ...app.auth, refresh_token: String(ok.body.refresh_token) })).status).toBe(200);
    expect((await post(server, '/oauth/token', { grant_type: 'refresh_token', ...app.auth, refresh_token: 'not-a-refresh-token' })).status).toBe(400);
    expect((await q('type:sertft')).map((l) => l.client_id)).toEqual([app.client.client_id]);
    expect(await q('type:fertft')).toEqual([expect.objectContaining({ details: { error: 'invalid_grant' }, client_id: app.client.client_id })]);
  });

  it('logs client-credentials exchanges (seccft, feccft) and Management API operations (sapi, fapi)', async () => {
    const audience = `${server.url}/api/v2/`;
    const ok = await post(server, '/oauth/token', { grant_type: 'client_credentials', ...server.admin, audience });
    expect(ok.status).toBe(200);
    secrets.push(String(ok.body.access_token));
    expect((await post(server, '/oauth/token', { grant_type: 'client_credentials', client_id: server.admin.client_id, client_secret: 'wrong-secret', audience })).status).toBe(401);
    const [exchange] = await q('type:seccft');
    expect(exchange).toMatchObject({ client_id: server.admin.client_id, audience, hostname: new URL(server.url).hostname });
    expect(await q('type:feccft')).toEqual([expect.objectContaining({ type: 'feccft', details: { error: 'invalid_client' } })]);

    const created = await api('/users', { method: 'POST', body: JSON.stringify({ connection: DATABASE_CONNECTION_NAME, email: 'sapi@example.com', password: 'Sapi-Passw0rd!x' }) });
    expect(created.status).toBe(201);
    secrets.push('Sapi-Passw0rd!x');
    expect((await api('/users', { method: 'POST', body: JSON.stringify({ connection: 'nope', email: 'x@example.com', password: 'Fapi-Passw0rd!x' }) })).status).toBeGreaterThanOrEqual(400);
    secrets.push('Fapi-Passw0rd!x');
    expect((await api('/clients', { bearer: 'not-a-token' })).status).toBe(401);
    const sapi = await q('type:sapi');
    expect(sapi.map((l) => l.description)).toContain('POST /api/v2/users');
    expect(sapi[0]).toMatchObject({ details: { request: { method: 'POST', path: '/api/v2/users' }, response: { statusCode: 201 } } });
    const fapi = await q('type:fapi');
    const failed = fapi.map((l) => (l.details as { request: { method: string }; response: { statusCode: number } }));
    expect(failed).toContainEqual(expect.objectContaining({ request: expect.objectContaining({ method: 'POST', path: '/api/v2/users' }) }));
    expect(failed.map((d) => d.response.statusCode)).toContain(401);
    // Reads are not logged.
    expect((await q('type:sapi')).every((l) => (l.details as { request: { method: string } }).request.method !== 'GET')).toBe(true);
  });

  it('logs signups (ss in the signup transaction, fs for a refused one)', async () => {
    const signup = (email: string) =>
      post(server, '/dbconnections/signup', { client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, email, password: 'Signup-Passw0rd!' }, { json: true });
    const res = await signup('new.person@example.com');
    expect(res.status).toBe(200);
    secrets.push('Signup-Passw0rd!');
    expect((await signup('new.person@example.com')).status).toBe(400);
    const [ss] = await q('type:ss');
    expect(ss).toMatchObject({ user_name: 'new.person@example.com', client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, ip: '127.0.0.1' });
    expect(ss!.user_id).toMatch(/^auth0\|/);
    expect(await q('type:fs AND user_name:"new.person@example.com"')).toEqual([expect.objectContaining({ details: { error: 'exists' } })]);
  });

  it('logs a brute-force block as limit_wc', async () => {
    expect((await api('/attack-protection/brute-force-protection', { method: 'PATCH', body: JSON.stringify({ max_attempts: 2 }) })).status).toBe(200);
    const user = await createUser(server);
    for (let i = 0; i < 3; i++) await realm({ username: user.email, password: `wrong guess ${i}` });
    secrets.push('wrong guess 0', 'wrong guess 1', 'wrong guess 2');
    expect(await q(`type:limit_wc AND user_name:"${user.email}"`)).toHaveLength(1);
    expect(await q(`type:fp AND user_id:"${user.user_id}"`)).toHaveLength(2);
    expect((await api('/attack-protection/brute-force-protection', { method: 'PATCH', body: JSON.stringify({ max_attempts: 10 }) })).status).toBe(200);
  });

  it('logs logouts (slo, flo), refresh-token revocations (srrt), deletions (du) and password change requests (scpr)', async () => {
    expect((await fetch(`${server.url}/v2/logout`, { redirect: 'manual' })).status).toBe(200);
    expect((await fetch(`${server.url}/v2/logout?client_id=nope`, { redirect: 'manual' })).status).toBe(400);
    expect(await q('type:slo')).toHaveLength(1);
    expect(await q('type:flo')).toEqual([expect.objectContaining({ description: expect.stringContaining('Unknown client') })]);

    const user = await createUser(server);
    const login = await realm({ username: user.email, password: PASSWORD, scope: 'openid offline_access' });
    const refreshToken = String(login.body.refresh_token);
    secrets.push(refreshToken, String(login.body.access_token), String(login.body.id_token));
    expect((await post(server, '/oauth/revoke', { ...app.auth, token: refreshToken })).status).toBe(200);
    expect(await q('type:srrt')).toEqual([expect.objectContaining({ user_id: user.user_id, client_id: app.client.client_id })]);

    expect((await post(server, '/dbconnections/change_password', { client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, email: user.email! }, { json: true })).status).toBe(200);
    expect(await q('type:scpr')).toEqual([expect.objectContaining({ user_name: user.email, connection: DATABASE_CONNECTION_NAME })]);

    expect((await api(`/users/${encodeURIComponent(user.user_id)}`, { method: 'DELETE' })).status).toBe(204);
    expect(await q(`type:du AND user_id:"${user.user_id}"`)).toEqual([expect.objectContaining({ user_name: user.email, client_id: expect.any(String) })]);
    // A user's logs outlive the user.
    expect(((await api(`/users/${encodeURIComponent(user.user_id)}/logs`)).body as Log[]).map((l) => l.type)).toEqual(['du', 'srrt', 'sepft']);
  });

  it('answers q with the Lucene forms it supports, and 400 for the rest', async () => {
    const failures = await q('type:(fp OR fu)');
    expect(failures.length).toBeGreaterThanOrEqual(3);
    expect(new Set(failures.map((l) => l.type))).toEqual(new Set(['fp', 'fu']));
    expect((await q('NOT type:sapi AND NOT type:fapi')).every((l) => l.type !== 'sapi' && l.type !== 'fapi')).toBe(true);
    expect((await q('-type:sapi')).some((l) => l.type === 'sapi')).toBe(false);
    expect((await q('user_id:*')).every((l) => typeof l.user_id === 'string')).toBe(true);
    const today = new Date().toISOString().slice(0, 10);
    expect((await q(`date:[${today} TO *] AND type:ss`))).toHaveLength(1);
    expect(await q(`date:[2001-01-01 TO 2001-12-31] AND type:ss`)).toEqual([]);
    // The newer SDKs' `search` is the same as q.
    expect(await logs(`search=${encodeURIComponent('type:ss')}`)).toHaveLength(1);
    for (const bad of ['description:x', 'type:s*', 'user_name:bob~', 'just words', 'type:(s']) {
      const res = await api(`/logs?q=${encodeURIComponent(bad)}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', errorCode: 'invalid_query_string' });
    }
    expect((await api('/logs?sort=user_id:1')).status).toBe(400);
    expect((await api('/logs?page=10&per_page=100')).status).toBe(400);
  });

  it('gets one log, a user’s logs, and honours fields, sort and include_totals', async () => {
    const [latest] = await logs('per_page=1');
    const one = await api(`/logs/${latest!.log_id}`);
    expect(one).toMatchObject({ status: 200, body: latest });
    expect(await api('/logs/123456')).toMatchObject({ status: 404, body: { statusCode: 404, errorCode: 'inexistent_log' } });

    const user = await createUser(server);
    await realm({ username: user.email, password: PASSWORD });
    await realm({ username: user.email, password: 'wrong again!' });
    secrets.push('wrong again!');
    await flushed();
    const mine = await api(`/users/${encodeURIComponent(user.user_id)}/logs`);
    expect((mine.body as Log[]).map((l) => l.type)).toEqual(['fp', 'sepft']);
    const oldestFirst = await api(`/users/${encodeURIComponent(user.user_id)}/logs?sort=date:1&include_totals=true&per_page=1`);
    expect(oldestFirst.body).toMatchObject({ start: 0, limit: 1, length: 1, total: 2, logs: [{ type: 'sepft' }] });

    const partial = await logs('per_page=2&fields=type,log_id&include_fields=true');
    expect(partial.every((l) => Object.keys(l).sort().join() === 'log_id,type')).toBe(true);
    const without = await logs('per_page=2&fields=details,user_agent&include_fields=false');
    expect(without.every((l) => !('details' in l) && !('user_agent' in l) && 'log_id' in l)).toBe(true);
  });

  it('pages 1,000 events by checkpoint and by page without gaps or duplicates', async () => {
    const db = server.server.prepared.store.db;
    const start = Date.now();
    // 1,000 real logouts (slo), 25 at a time: the events come from the action, not from the test. The
    // authorize bucket (logout's) is widened for this burst from one IP, and set back after.
    expect((await api('/rate-limit-policies/authorize', { method: 'PATCH', body: JSON.stringify({ capacity: 100_000, per_second: 100_000 }) })).status).toBe(200);
    for (let round = 0; round < 40; round++) {
      const statuses = await Promise.all(Array.from({ length: 25 }, async () => {
        const res = await fetch(`${server.url}/v2/logout`, { redirect: 'manual' });
        await res.arrayBuffer();
        return res.status;
      }));
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    }
    expect((await api('/rate-limit-policies/authorize', { method: 'DELETE' })).status).toBe(204);
    await flushed();
    const logouts = (await db.selectFrom('logs').select('log_id').where('tenant_id', '=', tenantId).where('type', '=', 'slo').where('date', '>=', start).orderBy('log_id').execute()).map((r) => r.log_id);
    expect(logouts).toHaveLength(1000);

    // Checkpoint: from the oldest, 100 at a time, following the Link header.
    const seen: string[] = [];
    let url: string | undefined = `${server.url}/api/v2/logs?take=100`;
    for (let round = 0; url && round < 100; round++) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as Log[];
      if (page.length === 0) break;
      seen.push(...page.map((l) => l.log_id));
      url = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    const sorted = [...seen].sort();
    expect(seen).toEqual(sorted);
    expect(new Set(seen).size).toBe(seen.length);
    const all = (await db.selectFrom('logs').select('log_id').where('tenant_id', '=', tenantId).orderBy('log_id').execute()).map((r) => r.log_id);
    expect(seen).toEqual(all);
    expect(seen.filter((id) => logouts.includes(id))).toEqual(logouts);

    // By page: the 1,000 logouts of this test, oldest first, 100 per page.
    const since = new Date(start).toISOString();
    const paged: Log[] = [];
    for (let page = 0; page < 10; page++) paged.push(...(await q(`type:slo AND date:[${since} TO *]`, `&sort=date:1&per_page=100&page=${page}`)));
    expect(paged.map((l) => l.log_id)).toEqual(logouts);
    const totals = (await api(`/logs?q=${encodeURIComponent(`type:slo AND date:[${since} TO *]`)}&include_totals=true&per_page=5`)).body as Json;
    expect(totals).toMatchObject({ start: 0, limit: 5, length: 5, total: 1000 });
  });

  it('prunes logs past the tenant’s retention, and keeps the rest', async () => {
    const db = server.server.prepared.store.db;
    const DAY = 86_400_000;
    const origin = { ip: null, user_agent: null, hostname: null };
    await writeLogEvents(db, [
      logRow(tenantId, { type: 'fv', description: 'forty days ago' }, origin, Date.now() - 40 * DAY),
      logRow(tenantId, { type: 'fv', description: 'twenty days ago' }, origin, Date.now() - 20 * DAY),
    ]);
    expect((await q('type:fv')).map((l) => l.description)).toEqual(['twenty days ago', 'forty days ago']);
    await server.server.services.tenantLogs.prune();
    expect((await q('type:fv')).map((l) => l.description)).toEqual(['twenty days ago']);
    expect((await api('/tenants/settings', { method: 'PATCH', body: JSON.stringify({ log_retention_days: 10 }) })).body).toMatchObject({ log_retention_days: 10 });
    await server.server.services.tenantLogs.prune();
    expect(await q('type:fv')).toEqual([]);
    expect((await api('/tenants/settings', { method: 'PATCH', body: JSON.stringify({ log_retention_days: 0 }) })).status).toBe(400);
  });

  it('needs read:logs or read:logs_users', async () => {
    expect((await api('/logs', { bearer: await managementToken(server, ['read:users']) })).status).toBe(403);
    expect((await api('/logs', { bearer: await managementToken(server, ['read:logs_users']) })).status).toBe(200);
    expect((await api('/users/auth0%7Cabc/logs', { bearer: await managementToken(server, ['read:logs']) })).status).toBe(200);
  });

  it('never stores a password, secret or token in any event', async () => {
    await flushed();
    const rows = await server.server.prepared.store.db.selectFrom('logs').selectAll().execute();
    expect(rows.length).toBeGreaterThan(1000);
    const text = JSON.stringify(rows);
    for (const secret of secrets) expect(text.includes(secret), `a log event holds ${secret.slice(0, 12)}…`).toBe(false);
  });
});
