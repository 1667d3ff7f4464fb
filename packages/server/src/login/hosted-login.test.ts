/**
 * The hosted pages and the SSO session over real HTTP: security headers, CSRF and browser binding, 303 after
 * POST, signup, the session cookie and its server-side end (logout, blocked user), and both logout endpoints.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../events/outbox.js';
import { sha256 } from './session.js';
import { postgresAvailable } from '../test-support/services.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'correct horse battery staple 9';

function codeRequest(clientId: string, extra: Record<string, string> = {}): Record<string, string> {
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  return { client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`hosted login and SSO session (${dialect})`, () => {
    let test: TestServer;
    let app: TestApp;

    beforeAll(async () => {
      test = await startTestServer({ dialect });
      app = await createApp(test);
      await createUser(test, 'grace@example.com', PASSWORD);
    });
    afterAll(() => test.close());

    async function loginPage(browser: TestBrowser, extra: Record<string, string> = {}) {
      const response = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, extra))}`));
      if (response instanceof URL) throw new Error('expected a page');
      return { response, page: await response.text() };
    }

    it('serves the login page with a strict CSP, no framing, labels, autocomplete and a CSRF token (checklist 17)', async () => {
      const { response, page } = await loginPage(new TestBrowser(), { login_hint: 'grace@example.com' });
      expect(response.status).toBe(200);
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(page).toMatch(/<label for="username">/);
      expect(page).toContain('autocomplete="current-password"');
      expect(page).toContain('value="grace@example.com"');
      const form = readForm(page, test.url);
      expect(form.fields._csrf).toMatch(/.{20,}/);
      expect(page).toMatch(/href="\/u\/reset-password\?state=/);
    });

    it('answers a successful login POST with 303, and a wrong password with the page again, without saying which part was wrong (checklist 16)', async () => {
      const browser = new TestBrowser();
      const { page } = await loginPage(browser);
      const form = readForm(page, test.url);
      const wrong = await browser.submitExpectingPage(form.action, { ...form.fields, username: 'grace@example.com', password: 'nope' });
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toContain('Wrong email or password.');
      const unknown = await browser.submitExpectingPage(form.action, { ...form.fields, username: 'nobody@example.com', password: 'nope' });
      expect(await unknown.text()).toContain('Wrong email or password.');
      const right = await browser.post(form.action, { ...form.fields, username: 'grace@example.com', password: PASSWORD });
      expect(right.status).toBe(303);
      expect(right.headers.get('location')).toMatch(/^\/authorize\/resume\?state=/);
    });

    it('refuses a login form without its CSRF token or from another browser (login CSRF)', async () => {
      const browser = new TestBrowser();
      const { page } = await loginPage(browser);
      const form = readForm(page, test.url);
      const noToken = await browser.post(form.action, { ...form.fields, _csrf: 'forged', username: 'grace@example.com', password: PASSWORD });
      expect(noToken.status).toBe(400);
      expect(noToken.headers.get('set-cookie') ?? '').not.toContain('gh_session');
      const elsewhere = await new TestBrowser().post(form.action, { ...form.fields, username: 'grace@example.com', password: PASSWORD });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.headers.get('location')).toBeNull();
    });

    it('sets an HttpOnly session cookie (Lax over plain HTTP), stores only its hash, and changes it on every login', async () => {
      const browser = new TestBrowser();
      await logIn(test, browser, codeRequest(app.client_id), { username: 'grace@example.com', password: PASSWORD });
      const first = browser.cookies.get('gh_session')!;
      expect(first).toBeTruthy();
      const db = test.server.prepared.store.db;
      const row = await db.selectFrom('sso_sessions').selectAll().where('token_hash', '=', sha256(first)).executeTakeFirst();
      expect(row).toBeDefined();
      expect(JSON.stringify(await db.selectFrom('sso_sessions').selectAll().execute())).not.toContain(first);

      const again = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { prompt: 'login' }))}`));
      const form = readForm(await (again as Response).text(), test.url);
      const response = await browser.post(form.action, { ...form.fields, username: 'grace@example.com', password: PASSWORD });
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gh_session='))!;
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
      const second = browser.cookies.get('gh_session')!;
      expect(second).not.toBe(first);
      expect(await db.selectFrom('sso_sessions').selectAll().where('token_hash', '=', sha256(first)).executeTakeFirst()).toBeUndefined();
    });

    it('ends the session when the user is blocked', async () => {
      const user = await createUser(test, `blocked-${dialect}@example.com`, PASSWORD);
      const browser = new TestBrowser();
      await logIn(test, browser, codeRequest(app.client_id), { username: `blocked-${dialect}@example.com`, password: PASSWORD });
      const patched = await management(test, 'PATCH', `/users/${encodeURIComponent(user.user_id)}`, { blocked: true });
      expect(patched.status).toBe(200);
      const silent = await browser.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { prompt: 'none' }))}`);
      expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('login_required');
    });

    it('signs a new user up from the hosted page and lands on the redirect URI with a code', async () => {
      const browser = new TestBrowser();
      const { page } = await loginPage(browser, { screen_hint: 'signup' });
      expect(page).toContain('autocomplete="new-password"');
      const form = readForm(page, test.url);
      const weak = await browser.submitExpectingPage(form.action, { ...form.fields, email: `new-${dialect}@example.com`, password: 'short' });
      expect(weak.status).toBe(400);
      // Weak and breached: the rules come first (what to change), the breach once the rules are met.
      const weakAndBreached = await browser.submitExpectingPage(form.action, { ...form.fields, email: `new-${dialect}@example.com`, password: 'password123' });
      expect(await weakAndBreached.text()).toContain('Choose a stronger password');
      const breached = await browser.submitExpectingPage(form.action, { ...form.fields, email: `new-${dialect}@example.com`, password: 'Trustno1' });
      expect(await breached.text()).toContain('data breach');
      const landed = await browser.follow(test.url, await browser.post(form.action, { ...form.fields, email: `new-${dialect}@example.com`, password: PASSWORD }));
      expect(landed).toBeInstanceOf(URL);
      expect((landed as URL).searchParams.get('code')).toBeTruthy();
      const users = (await (await management(test, 'GET', `/users-by-email?email=new-${dialect}@example.com`)).json()) as unknown[];
      expect(users).toHaveLength(1);
      // The signup and its user.created event were committed together.
      const created = await listEvents(test.server.prepared.store.db, test.server.prepared.bootstrap!.tenant.id, { type: 'user.created' });
      expect(created.some((e) => (e.data.object as { email?: string }).email === `new-${dialect}@example.com`)).toBe(true);
      const other = new TestBrowser();
      const duplicate = await other.follow(test.url, await other.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { screen_hint: 'signup' }))}`));
      const form2 = readForm(await (duplicate as Response).text(), test.url);
      const exists = await other.submitExpectingPage(form2.action, { ...form2.fields, email: `new-${dialect}@example.com`, password: PASSWORD });
      expect(await exists.text()).toContain('already exists');
    });

    it('answers malformed hosted-page requests with the error page, never a 500', async () => {
      const browser = new TestBrowser();
      const { page } = await loginPage(browser);
      const form = readForm(page, test.url);
      const cases: [string, RequestInit][] = [
        ['/u/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transaction: [form.fields.transaction], _csrf: {}, username: 1 }) }],
        ['/u/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=a&username=b' }],
        ['/u/signup', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `transaction=${'x'.repeat(10_000)}` }],
        ['/u/consent?state=../../etc', { method: 'GET' }],
        ['/authorize/resume?state[a]=1', { method: 'GET' }],
        ['/u/login', { method: 'GET' }],
      ];
      for (const [path, init] of cases) {
        const response = await fetch(`${test.url}${path}`, { ...init, redirect: 'manual' });
        expect(response.status, path).toBe(400);
      }
      // The right transaction with a password far beyond any policy: the page again, not a 500.
      const long = await browser.submitExpectingPage(form.action, { ...form.fields, username: 'grace@example.com', password: 'p'.repeat(5000) });
      expect(long.status).toBe(400);
    });

    describe('logout', () => {
      it('/v2/logout ends the session server-side and redirects only to an allowed URL', async () => {
        const browser = new TestBrowser();
        await logIn(test, browser, codeRequest(app.client_id), { username: 'grace@example.com', password: PASSWORD });
        const cookie = browser.cookies.get('gh_session')!;
        const refused = await browser.get(`${test.url}/v2/logout?client_id=${app.client_id}&returnTo=${encodeURIComponent('https://evil.example/')}`);
        expect(refused.status).toBe(400);
        expect(refused.headers.get('location')).toBeNull();
        const db = test.server.prepared.store.db;
        expect(await db.selectFrom('sso_sessions').selectAll().where('token_hash', '=', sha256(cookie)).executeTakeFirst()).toBeUndefined();

        const ok = await browser.get(`${test.url}/v2/logout?client_id=${app.client_id}&returnTo=${encodeURIComponent('https://app.example/')}&federated`);
        expect(ok.status).toBe(302);
        expect(ok.headers.get('location')).toBe('https://app.example/');
        // The old cookie, replayed, no longer finds a session.
        const replay = new TestBrowser();
        replay.cookies.set('gh_session', cookie);
        const silent = await replay.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { prompt: 'none' }))}`);
        expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('login_required');
      });

      it('/v2/logout without client_id uses the tenant allowed logout URLs', async () => {
        const refused = await fetch(`${test.url}/v2/logout?returnTo=${encodeURIComponent('https://app.example/')}`, { redirect: 'manual' });
        expect(refused.status).toBe(400);
        const unknownClient = await fetch(`${test.url}/v2/logout?client_id=nope&returnTo=${encodeURIComponent('https://app.example/')}`, { redirect: 'manual' });
        expect(unknownClient.status).toBe(400);
        const plain = await fetch(`${test.url}/v2/logout`, { redirect: 'manual' });
        expect(plain.status).toBe(200);
        expect(await plain.text()).toContain('logged out');
      });

      it('/oidc/logout takes id_token_hint and post_logout_redirect_uri with state, and is advertised', async () => {
        const browser = new TestBrowser();
        await logIn(test, browser, codeRequest(app.client_id), { username: 'grace@example.com', password: PASSWORD });
        const implicit = await browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'id_token', scope: 'openid', nonce: 'n' })}`);
        const idToken = new URLSearchParams(new URL(implicit.headers.get('location')!).hash.slice(1)).get('id_token')!;
        const response = await browser.get(`${test.url}/oidc/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://app.example/', state: 'a b+c' })}`);
        expect(response.status).toBe(302);
        expect(response.headers.get('location')).toBe('https://app.example/?state=a%20b%2Bc');
        const evil = await fetch(`${test.url}/oidc/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' })}`, { redirect: 'manual' });
        expect(evil.status).toBe(400);
        const forged = await fetch(`${test.url}/oidc/logout?${new URLSearchParams({ id_token_hint: 'a.b.c', post_logout_redirect_uri: 'https://app.example/' })}`, { redirect: 'manual' });
        expect(forged.status).toBe(400);
        const discovery = (await (await fetch(`${test.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
        expect(discovery.end_session_endpoint).toBe(`${test.url}/oidc/logout`);
      });
    });
  });
}
