/**
 * A user's sessions and organizations over real HTTP (user-sessions.ts, user-organizations.ts), on both
 * dialects: sessions made by real hosted logins, listed with their clients and `sid`, paged with from/take,
 * revoked (the refresh token issued from it refused, the browser no longer signed in), deleted one by one and
 * all at once; the organizations a user belongs to, paged; 404s, bad ids and scopes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, pkcePair } from '../auth-api/user-tokens/testing.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, createUser, logIn, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const PASSWORD = 'Session-owner-2026!';
const REDIRECT = 'https://app.example/callback';

interface Session {
  id: string;
  user_id: string;
  clients: { client_id: string }[];
  device: { initial_ip?: string; initial_user_agent?: string };
  authentication: { methods: { name: string }[] };
  expires_at: string;
}

describe.each(dialects)('Management API: user sessions and organizations (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  let app: TestApp;
  let userId: string;

  const call = async (method: string, path: string, body?: unknown, bearer = token) => {
    const response = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const sessionsOf = async (id: string, query = '') => (await call('GET', `/users/${encodeURIComponent(id)}/sessions${query}`)).body as { sessions: Session[]; next?: string };

  /** A hosted login in a fresh browser; its tokens (with a refresh token) and the browser, still signed in. */
  async function login(): Promise<{ browser: TestBrowser; sid: string; refreshToken: string }> {
    const browser = new TestBrowser();
    const pkce = pkcePair();
    const query = { client_id: app.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid offline_access', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' };
    const back = await logIn(server, browser, query, { username: 'session.owner@example.com', password: PASSWORD });
    const code = back.searchParams.get('code')!;
    const tokens = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: app.client_id, code, redirect_uri: REDIRECT, code_verifier: pkce.verifier }),
    });
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as { id_token: string; refresh_token: string };
    expect(body.refresh_token).toBeTruthy();
    return { browser, sid: decodeJwt(body.id_token).payload.sid as string, refreshToken: body.refresh_token };
  }
  const refresh = (refreshToken: string) =>
    fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'refresh_token', client_id: app.client_id, refresh_token: refreshToken }) });
  /** Whether the browser's session still signs it in silently (prompt=none). */
  async function signedIn(browser: TestBrowser): Promise<boolean> {
    const query = { client_id: app.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 's', prompt: 'none', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
    const back = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${new URLSearchParams(query)}`));
    if (!(back instanceof URL)) throw new Error(`prompt=none showed a page (${back.status})`);
    return back.searchParams.has('code');
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    app = await createApp(server);
    userId = (await createUser(server, 'session.owner@example.com', PASSWORD)).user_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists the sessions real logins made, newest first, with their clients, sid and method; pages with from/take', async () => {
    expect(await sessionsOf(userId)).toEqual({ sessions: [] });
    const first = await login();
    const second = await login();
    const { sessions } = await sessionsOf(userId);
    expect(sessions.map((s) => s.id)).toEqual([second.sid, first.sid]);
    expect(sessions[0]).toMatchObject({ user_id: userId, clients: [{ client_id: app.client_id }], device: { initial_ip: expect.any(String) }, authentication: { methods: [{ name: 'pwd' }] } });
    expect(Date.parse(sessions[0]!.expires_at)).toBeGreaterThan(Date.now());
    const page1 = await sessionsOf(userId, '?take=1');
    expect(page1.sessions.map((s) => s.id)).toEqual([second.sid]);
    const page2 = await sessionsOf(userId, `?take=1&from=${page1.next}`);
    expect(page2).toEqual({ sessions: [expect.objectContaining({ id: first.sid })] });
    expect((await call('GET', `/sessions/${first.sid}`)).body).toMatchObject({ id: first.sid, user_id: userId });
  });

  it('revokes a session: gone, its browser signed out, its refresh token refused; the other session lives', async () => {
    const kept = await login();
    const revoked = await login();
    const again = await login();
    expect(await signedIn(again.browser)).toBe(true);
    expect((await call('POST', `/sessions/${again.sid}/revoke`)).status).toBe(202);
    expect((await call('GET', `/sessions/${again.sid}`)).status).toBe(404);
    expect(await signedIn(again.browser)).toBe(false);
    const refused = await refresh(again.refreshToken);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
    // Deleting ends the session but, as in the reference, leaves its refresh tokens.
    expect((await call('DELETE', `/sessions/${revoked.sid}`)).status).toBe(202);
    expect(await signedIn(revoked.browser)).toBe(false);
    expect((await refresh(revoked.refreshToken)).status).toBe(200);
    expect((await call('GET', `/sessions/${kept.sid}`)).status).toBe(200);
    expect(await signedIn(kept.browser)).toBe(true);
    // All at once.
    expect((await call('DELETE', `/users/${encodeURIComponent(userId)}/sessions`)).status).toBe(202);
    expect(await sessionsOf(userId)).toEqual({ sessions: [] });
    expect(await signedIn(kept.browser)).toBe(false);
  });

  it('answers 404 for an unknown session or user, 400 for a malformed id, 403 without the sessions scopes', async () => {
    expect((await call('GET', '/sessions/ses_nothere')).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_session' });
    expect((await call('DELETE', '/sessions/ses_nothere')).status).toBe(404);
    expect((await call('POST', '/sessions/ses_nothere/revoke')).status).toBe(404);
    expect((await call('GET', `/users/${encodeURIComponent('auth0|nobody')}/sessions`)).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_user' });
    expect((await call('GET', '/sessions/not%20an%20id')).status).toBe(400);
    expect((await call('GET', `/users/${encodeURIComponent(userId)}/sessions?take=0`)).status).toBe(400);
    const reader = await managementToken(server, ['read:users']);
    expect((await call('GET', `/users/${encodeURIComponent(userId)}/sessions`, undefined, reader)).status).toBe(403);
    expect((await call('DELETE', `/users/${encodeURIComponent(userId)}/sessions`, undefined, reader)).status).toBe(403);
  });

  it("lists a user's organizations by name, paged, and 404 for an unknown user", async () => {
    const path = `/users/${encodeURIComponent(userId)}/organizations`;
    expect((await call('GET', path)).body).toEqual([]);
    for (const name of ['zeta-team', 'alpha-team', 'not-a-member']) {
      const org = await call('POST', '/organizations', { name });
      expect(org.status).toBe(201);
      if (name !== 'not-a-member') expect((await call('POST', `/organizations/${org.body.id as string}/members`, { members: [userId] })).status).toBe(204);
    }
    const all = (await call('GET', `${path}?include_totals=true`)).body;
    expect(all).toMatchObject({ start: 0, total: 2, organizations: [{ name: 'alpha-team' }, { name: 'zeta-team' }] });
    expect((await call('GET', `${path}?page=1&per_page=1`)).body).toEqual([expect.objectContaining({ name: 'zeta-team' })]);
    expect((await call('GET', `/users/${encodeURIComponent('auth0|nobody')}/organizations`)).status).toBe(404);
  });
});
