/**
 * The console's rights over real HTTP (#15): a user signs in to the console's own client through /authorize and
 * the hosted login (code + PKCE), and the Management API decides by the `permissions` its access token carries.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliToEnd } from '../test-support/cli.js';
import { createUser, management, readForm, TestBrowser } from '../test-support/sign-in.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { CONSOLE_ADMIN_ROLE_NAME } from './bootstrap.js';

const PASSWORD = 'Console-rbac-2026!';

/** The console's sign-in, as auth0-spa-js does it: /authorize (code + PKCE) through the hosted login, then /oauth/token. */
async function consoleToken(server: TestServer, email: string): Promise<{ access_token: string; claims: Record<string, unknown> }> {
  const { clientId, audience } = (await (await fetch(`${server.url}/console/config.json`)).json()) as { clientId: string; audience: string };
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = `${server.url}/console/`;
  // The console's callback is on this server, so the redirects are followed here until they reach it.
  const browser = new TestBrowser();
  const query = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    audience,
    scope: 'openid profile email',
    state: 'state-1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  let response = await browser.get(`${server.url}/authorize?${query}`);
  let back: URL | undefined;
  for (let hop = 0; hop < 10 && !back; hop++) {
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, server.url);
      if (next.href.startsWith(`${redirectUri}?`)) back = next;
      else response = await browser.get(next.href);
    } else {
      const form = readForm(await response.text(), server.url);
      response = await browser.post(form.action, { ...form.fields, username: email, password: PASSWORD });
    }
  }
  if (!back) throw new Error('the sign-in did not come back to the console');
  const code = back.searchParams.get('code');
  expect(code, `no code in ${back.href}`).toBeTruthy();
  const token = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: code!, code_verifier: verifier, redirect_uri: redirectUri }),
  });
  expect(token.status).toBe(200);
  const { access_token } = (await token.json()) as { access_token: string };
  return { access_token, claims: JSON.parse(Buffer.from(access_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown> };
}

async function roleNamed(server: TestServer, name: string): Promise<string> {
  const roles = (await (await management(server, 'GET', `/roles?name_filter=${encodeURIComponent(name)}`)).json()) as { id: string; name: string }[];
  return roles.find((r) => r.name === name)!.id;
}

describe('console: Management API rights from RBAC permissions', () => {
  let server: TestServer;
  let other: TestServer;
  let plain: { user_id: string };
  let admin: { user_id: string };

  beforeAll(async () => {
    [server, other] = await Promise.all([startTestServer(), startTestServer()]);
    plain = await createUser(server, 'plain@example.com', PASSWORD);
    admin = await createUser(server, 'admin@example.com', PASSWORD);
    const role = await roleNamed(server, CONSOLE_ADMIN_ROLE_NAME);
    expect((await management(server, 'POST', `/users/${encodeURIComponent(admin.user_id)}/roles`, { roles: [role] })).status).toBe(204);
    await createUser(other, 'admin@example.com', PASSWORD);
    const otherRole = await roleNamed(other, CONSOLE_ADMIN_ROLE_NAME);
    const otherAdmin = (await (await management(other, 'GET', '/users-by-email?email=admin%40example.com')).json()) as { user_id: string }[];
    expect((await management(other, 'POST', `/users/${encodeURIComponent(otherAdmin[0]!.user_id)}/roles`, { roles: [otherRole] })).status).toBe(204);
  });
  afterAll(async () => {
    await server?.close();
    await other?.close();
  });

  it('the console client and its admin role are made at start, and the role holds every Management API permission', async () => {
    // Served as static files under a same-origin CSP: no inline script, nothing from elsewhere.
    const page = await fetch(`${server.url}/console/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await page.text();
    expect(html).toMatch(/<script type="module" crossorigin src="\/console\/app\.js"><\/script>/);
    // Every script is a file (Vite's build inlines none), and the entry it names is served.
    expect([...html.matchAll(/<script\b[^>]*>/g)].every(([tag]) => / src="/.test(tag))).toBe(true);
    const entry = await fetch(`${server.url}/console/app.js`);
    expect(entry.status).toBe(200);
    expect(entry.headers.get('content-type')).toMatch(/^text\/javascript/);
    const config = (await (await fetch(`${server.url}/console/config.json`)).json()) as { clientId: string; audience: string; domain: string };
    expect(config.domain).toBe(server.url);
    expect(config.audience).toBe(`${server.url}/api/v2/`);
    const client = (await (await management(server, 'GET', `/clients/${config.clientId}`)).json()) as Record<string, unknown>;
    expect(client).toMatchObject({ app_type: 'spa', is_first_party: true, token_endpoint_auth_method: 'none', callbacks: [`${server.url}/console/`] });
    expect(client).not.toHaveProperty('is_console');
    // Deleting it from the console would lock every admin out.
    const deleted = await management(server, 'DELETE', `/clients/${config.clientId}`);
    expect(deleted.status).toBe(403);
    expect(await deleted.json()).toMatchObject({ statusCode: 403, errorCode: 'operation_not_supported' });
    const role = await roleNamed(server, CONSOLE_ADMIN_ROLE_NAME);
    const permissions = (await (await management(server, 'GET', `/roles/${role}/permissions?per_page=100&include_totals=true`)).json()) as { total: number };
    expect(permissions.total).toBeGreaterThan(50);
  });

  it('a user without the permission gets 403 in the Management API shape; its token carries no permissions', async () => {
    const { access_token, claims } = await consoleToken(server, 'plain@example.com');
    expect(claims.permissions).toBeUndefined();
    const response = await fetch(`${server.url}/api/v2/clients`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      message: expect.stringContaining('Insufficient scope, expected any of: read:clients'),
      errorCode: 'insufficient_scope',
    });
    // Its current-user scopes still act on itself alone, as before.
    const self = await fetch(`${server.url}/api/v2/users/${encodeURIComponent(plain.user_id)}`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(self.status).toBe(403);
  });

  it('a console admin gets 200, on any user (not only itself), and a token of another tenant is refused', async () => {
    const { access_token, claims } = await consoleToken(server, 'admin@example.com');
    expect(claims.permissions).toEqual(expect.arrayContaining(['read:clients', 'update:users', 'read:event_deliveries']));
    const auth = { authorization: `Bearer ${access_token}` };
    expect((await fetch(`${server.url}/api/v2/clients`, { headers: auth })).status).toBe(200);
    const blocked = await fetch(`${server.url}/api/v2/users/${encodeURIComponent(plain.user_id)}`, {
      method: 'PATCH',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ blocked: true }),
    });
    expect(blocked.status).toBe(200);
    expect(await blocked.json()).toMatchObject({ user_id: plain.user_id, blocked: true });

    // The other server's admin (its own tenant, keys and issuer) holds the same role there: refused here.
    const foreign = await consoleToken(other, 'admin@example.com');
    expect(foreign.claims.permissions).toEqual(expect.arrayContaining(['read:clients']));
    const refused = await fetch(`${server.url}/api/v2/clients`, { headers: { authorization: `Bearer ${foreign.access_token}` } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized', errorCode: 'invalid_token' });
  });

  it('permissions count one by one: a role with read:users alone reads users and may not read clients', async () => {
    const reader = await createUser(server, 'reader@example.com', PASSWORD);
    const created = await management(server, 'POST', '/roles', { name: 'User reader' });
    const { id } = (await created.json()) as { id: string };
    expect((await management(server, 'POST', `/roles/${id}/permissions`, { permissions: [{ resource_server_identifier: `${server.url}/api/v2/`, permission_name: 'read:users' }] })).status).toBe(201);
    expect((await management(server, 'POST', `/users/${encodeURIComponent(reader.user_id)}/roles`, { roles: [id] })).status).toBe(204);
    const { access_token, claims } = await consoleToken(server, 'reader@example.com');
    expect(claims.permissions).toEqual(['read:users']);
    const auth = { authorization: `Bearer ${access_token}` };
    expect((await fetch(`${server.url}/api/v2/users`, { headers: auth })).status).toBe(200);
    const clients = await fetch(`${server.url}/api/v2/clients`, { headers: auth });
    expect(clients.status).toBe(403);
    expect(await clients.json()).toMatchObject({ errorCode: 'insufficient_scope' });
  });

  it('gatehouse admin invite EMAIL prints a one-time link bound to the address; following it makes a console admin', async () => {
    const invited = await runCliToEnd(['admin', 'invite', 'Invited.Admin@Example.com'], { GATEHOUSE_DATA_DIR: server.dataDir });
    expect(invited.code).toBe(0);
    const link = /https?:\/\/\S+\/u\/console-setup\?ticket=[A-Za-z0-9_-]+/.exec(invited.output)?.[0];
    expect(link, invited.output).toBeTruthy();
    const url = new URL(link!);
    const person = new TestBrowser();
    const page = await person.get(`${server.url}${url.pathname}${url.search}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('for <strong>invited.admin@example.com</strong>');
    expect(html).not.toContain('name="email"');
    const done = await person.post(`${server.url}${url.pathname}`, { ticket: url.searchParams.get('ticket')!, password: PASSWORD, password_confirmation: PASSWORD });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/console/');
    const { claims } = await consoleToken(server, 'invited.admin@example.com');
    expect(claims.permissions).toEqual(expect.arrayContaining(['read:users', 'update:clients']));
    // Spent: the same link shows the dead-link page.
    expect((await fetch(link!.replace(/^https?:\/\/[^/]+/, server.url))).status).toBe(400);
    const refused = await runCliToEnd(['admin', 'invite', 'not-an-address'], { GATEHOUSE_DATA_DIR: server.dataDir });
    expect(refused.code).toBe(78);
    expect(refused.output).toContain('not-an-address is not an email address');
  });
});
