/**
 * The classic-login conventions over HTTP: the client configuration script (/client/{id}.js, JSONP as auth0-lock
 * reads it) and /user/ssodata (the browser's SSO state, CORS with credentials for the application's web origins).
 */
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, logIn, management, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 7';

/** Runs the script as a browser would, with a stand-in `Auth0.setClient`; returns what it was given. */
function runScript(source: string): Record<string, unknown> {
  const calls: unknown[] = [];
  vm.runInNewContext(source, { Auth0: { setClient: (o: unknown) => calls.push(o) } });
  expect(calls).toHaveLength(1);
  return calls[0] as Record<string, unknown>;
}

describe('classic login conventions', () => {
  let server: TestServer;
  let app: TestApp;
  let other: TestApp;

  beforeAll(async () => {
    server = await startTestServer();
    app = await createApp(server, { callbacks: ['https://app.example/callback'], web_origins: ['https://app.example'] });
    other = await createApp(server, { web_origins: ['https://other.example'] });
    await management(server, 'POST', '/connections', {
      name: 'acme-oidc',
      display_name: 'Acme </script><script>alert(1)</script>',
      strategy: 'oidc',
      options: { client_id: 'up', client_secret: 'hidden-upstream-secret', issuer: 'http://127.0.0.1:9', authorization_endpoint: 'http://127.0.0.1:9/auth', token_endpoint: 'http://127.0.0.1:9/token', jwks_uri: 'http://127.0.0.1:9/jwks', domain_aliases: ['acme.example'] },
      enabled_clients: [app.client_id],
    }).then(async (r) => expect(r.status, await r.clone().text()).toBe(201));
    await management(server, 'POST', '/connections', {
      name: 'gh',
      strategy: 'github',
      options: { client_id: 'gh-id', client_secret: 'gh-secret-never-shown' },
      enabled_clients: [app.client_id],
    }).then(async (r) => expect(r.status, await r.clone().text()).toBe(201));
    await createUser(server, 'sso@example.com', PASSWORD);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves the client's connections grouped by strategy, as JSONP that cannot break out of its script", async () => {
    const response = await fetch(`${server.url}/client/${app.client_id}.js?t${Date.now()}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-javascript; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const body = await response.text();
    expect(body.startsWith('Auth0.setClient({')).toBe(true);
    expect(body).not.toContain('</script>');
    expect(body).not.toContain('hidden-upstream-secret');
    expect(body).not.toContain('gh-secret-never-shown');
    const config = runScript(body);
    expect(config).toMatchObject({ id: app.client_id, tenant: expect.any(String), authorize: `${server.url}/authorize`, callback: 'https://app.example/callback', hasAllowedOrigins: true });
    const strategies = config.strategies as { name: string; connections: Record<string, unknown>[] }[];
    expect(strategies.map((s) => s.name)).toEqual(['auth0', 'oidc', 'github']);
    expect(strategies[0]!.connections).toEqual([
      { name: 'Username-Password-Authentication', display_name: 'Email and password', passwordPolicy: 'good', password_complexity_options: { min_length: 8 }, showSignup: true, showForgot: true, requires_username: false },
    ]);
    expect(strategies[1]!.connections).toEqual([{ name: 'acme-oidc', display_name: 'Acme </script><script>alert(1)</script>', domain_aliases: ['acme.example'], scope: ['openid', 'profile', 'email'] }]);
    expect(strategies[2]!.connections[0]).toMatchObject({ name: 'gh' });

    // Another application sees only its own connections.
    const others = runScript(await (await fetch(`${server.url}/client/${other.client_id}.js`)).text());
    expect((others.strategies as { name: string }[]).map((s) => s.name)).toEqual(['auth0']);
  });

  it('answers 404 in the OAuth shape for an unknown application, and for a path that is not a script', async () => {
    const unknown = await fetch(`${server.url}/client/nope.js`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    const noSuffix = await fetch(`${server.url}/client/${app.client_id}`);
    expect(noSuffix.status).toBe(404);
    expect(await noSuffix.json()).toMatchObject({ error: 'not_found' });
    const huge = await fetch(`${server.url}/client/${'x'.repeat(5000)}.js`);
    expect(huge.status).toBeLessThan(500);
  });

  it('/user/ssodata: sso false without a session; the user and connection with one; readable only by web origins', async () => {
    const browser = new TestBrowser();
    const none = await browser.get(`${server.url}/user/ssodata?client_id=${app.client_id}`);
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ sso: false });

    const back = await logIn(server, browser, { client_id: app.client_id, redirect_uri: 'https://app.example/callback', response_type: 'token id_token', nonce: 'n', scope: 'openid profile email', state: 's' }, { username: 'sso@example.com', password: PASSWORD });
    expect(back.hash).toContain('access_token=');
    const some = await browser.get(`${server.url}/user/ssodata?client_id=${app.client_id}`);
    expect(some.headers.get('cache-control')).toBe('no-store');
    expect(await some.json()).toEqual({
      sso: true,
      sessionClients: [app.client_id],
      lastUsedClientID: app.client_id,
      lastUsedUserID: expect.stringMatching(/^auth0\|/),
      lastUsedUsername: 'sso@example.com',
      lastUsedConnection: { name: 'Username-Password-Authentication', strategy: 'auth0' },
    });

    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const allowed = await fetch(`${server.url}/user/ssodata?client_id=${app.client_id}`, { headers: { cookie, origin: 'https://app.example' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    // Another application's origin is not this one's web origin: the browser would not let it read the answer.
    const foreign = await fetch(`${server.url}/user/ssodata?client_id=${app.client_id}`, { headers: { cookie, origin: 'https://other.example' } });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const stranger = await fetch(`${server.url}/user/ssodata`, { headers: { cookie, origin: 'https://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });
});
