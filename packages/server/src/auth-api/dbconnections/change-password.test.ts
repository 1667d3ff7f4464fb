/**
 * POST /dbconnections/change_password and the password reset it starts, over real HTTP on both dialects with a
 * real SMTP server: the same plain-text answer for known and unknown users (an email only for the known one),
 * the full reset through the hosted ticket page (policy, old password refused, new one accepted, SSO sessions
 * ended, link single use), the hosted "Forgot password?" form, and bad input in the family shape.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../store/tenants.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { postgresAvailable } from '../../test-support/services.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser, type TestApp } from '../../test-support/sign-in.js';
import { linkIn, startTestSmtp, type ReceivedEmail, type TestSmtp } from '../../test-support/smtp.js';

const DB = 'Username-Password-Authentication';
const CALLBACK = 'https://app.example/callback';
const OLD_PASSWORD = 'Old-Password-123';
const NEW_PASSWORD = 'New-Password-456';
const SENTENCE = "We've just sent you an email to reset your password.";

/** Reset emails to `address` (users made through the Management API also get a verification email). */
const resetTo = (address: string) => (e: ReceivedEmail) => e.to.includes(address) && e.subject.startsWith('Reset your password');

function codeRequest(clientId: string, extra: Record<string, string> = {}): Record<string, string> {
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  return { client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`password reset (${dialect})`, () => {
    let smtp: TestSmtp;
    let test: TestServer;
    let app: TestApp;

    async function changePassword(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
      return fetch(`${test.url}/dbconnections/change_password`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    }

    beforeAll(async () => {
      smtp = await startTestSmtp();
      test = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url } });
      const { tenant } = test.server.prepared.bootstrap!;
      const unlimited = { capacity: 100_000, per_second: 100_000 };
      await updateTenant(test.server.prepared.store.db, tenant.id, {
        settings: { ...tenant.settings, rate_limits: { dbconnections: unlimited, management: unlimited, login: unlimited, authorize: unlimited } },
      });
      test.server.services.tenants.invalidate();
      app = await createApp(test);
      await createUser(test, 'grace@example.com', OLD_PASSWORD);
      await createUser(test, 'twice@example.com', OLD_PASSWORD);
      await createUser(test, 'hosted@example.com', OLD_PASSWORD);
      const locked = await management(test, 'POST', '/connections', {
        name: 'no-self-service',
        strategy: 'auth0',
        options: { disable_self_service_change_password: true },
        enabled_clients: [app.client_id],
      });
      expect(locked.status).toBe(201);
    });
    afterAll(async () => {
      await test.close();
      await smtp.close();
    });

    it('answers the same plain-text sentence for a known and an unknown user, and emails only the known one', async () => {
      const unknown = await changePassword({ client_id: app.client_id, email: 'nobody@example.com', connection: DB });
      const known = await changePassword({ client_id: app.client_id, email: 'Grace@Example.com', connection: DB });
      for (const response of [unknown, known]) {
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      }
      expect(await unknown.text()).toBe(SENTENCE);
      expect(await known.text()).toBe(SENTENCE);
      const email = await smtp.waitFor(resetTo('grace@example.com'));
      expect(email.subject).toMatch(/^Reset your password for /);
      expect(email.html).toContain('Choose a new password');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.received.some((e) => e.to.includes('nobody@example.com'))).toBe(false);
    });

    it('resets the password through the emailed link: policy enforced, old password refused, new one works, sessions ended, link single use', async () => {
      // A browser signed in before the reset.
      const before = new TestBrowser();
      const first = await logIn(test, before, codeRequest(app.client_id), { username: 'grace@example.com', password: OLD_PASSWORD });
      expect(first.searchParams.get('code')).toBeTruthy();
      const silent = await before.follow(test.url, await before.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { prompt: 'none' }))}`));
      expect(silent instanceof URL && silent.searchParams.get('code')).toBeTruthy();

      const email = await smtp.waitFor(resetTo('grace@example.com'));
      const link = linkIn(email, `${test.url}/u/reset-password/ticket?ticket=`);
      const browser = new TestBrowser();
      const page = await browser.get(link);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await page.text();
      expect(html).toContain('Choose a new password');
      expect(html).toContain('grace@example.com');
      const form = readForm(html, test.url);
      expect(form.fields.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const mismatch = await browser.submitExpectingPage(form.action, { ...form.fields, password: NEW_PASSWORD, password_confirmation: `${NEW_PASSWORD}x` });
      expect(mismatch.status).toBe(400);
      expect(await mismatch.text()).toContain('The two passwords do not match.');
      const weak = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'abc', password_confirmation: 'abc' });
      expect(weak.status).toBe(400);
      const weakPage = await weak.text();
      expect(weakPage).toContain('Choose a stronger password');
      expect(weakPage).toContain('<span class="visually-hidden">Still needed: </span>At least 8 characters in length');
      expect(weakPage).toContain('<span class="visually-hidden">Done: </span>lower case letters (a-z)');
      const leaked = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'Trustno1', password_confirmation: 'Trustno1' });
      expect(leaked.status).toBe(400);
      expect(await leaked.text()).toContain('appeared in a data breach');

      const posted = await browser.post(form.action, { ...form.fields, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
      expect(posted.status).toBe(303);
      const done = await browser.get(new URL(posted.headers.get('location')!, test.url).href);
      expect(done.status).toBe(200);
      const donePage = await done.text();
      expect(donePage).toContain('Your password has been changed');
      // The way back: the application's login (here the client has none, nor the tenant: the page says so).
      expect(donePage).toContain('Go back to the application and log in with your new password.');
      // A reload shows the same page; it posts nothing, so the spent link is not reported as dead.
      expect(await (await browser.get(new URL(posted.headers.get('location')!, test.url).href)).text()).toContain('Your password has been changed');

      await expect(logIn(test, new TestBrowser(), codeRequest(app.client_id), { username: 'grace@example.com', password: OLD_PASSWORD })).rejects.toThrow(/login did not redirect back/);
      const after = await logIn(test, new TestBrowser(), codeRequest(app.client_id), { username: 'grace@example.com', password: NEW_PASSWORD });
      expect(after.searchParams.get('code')).toBeTruthy();

      // The session from before the reset is gone.
      const ended = await before.follow(test.url, await before.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { prompt: 'none' }))}`));
      expect(ended instanceof URL && ended.searchParams.get('error')).toBe('login_required');

      const users = (await (await management(test, 'GET', `/users-by-email?email=grace@example.com`)).json()) as { last_password_reset?: string }[];
      expect(Date.parse(users[0]?.last_password_reset ?? '')).toBeGreaterThan(Date.now() - 60_000);

      // The link works once.
      const again = await browser.get(link);
      expect(again.status).toBe(400);
      expect(await again.text()).toContain('This link can no longer be used');
      const replay = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'Another-Pass-789', password_confirmation: 'Another-Pass-789' });
      expect(replay.status).toBe(400);
      await expect(logIn(test, new TestBrowser(), codeRequest(app.client_id), { username: 'grace@example.com', password: 'Another-Pass-789' })).rejects.toThrow();
    });

    it('spends older reset links when a newer one is used', async () => {
      await changePassword({ client_id: app.client_id, email: 'twice@example.com', connection: DB });
      await smtp.waitFor(resetTo('twice@example.com'));
      await changePassword({ client_id: app.client_id, email: 'twice@example.com', connection: DB });
      await smtp.waitFor((e) => smtp.received.filter(resetTo('twice@example.com')).length === 2 && resetTo('twice@example.com')(e));
      const [older, newer] = smtp.received.filter(resetTo('twice@example.com')).map((e) => linkIn(e, `${test.url}/u/reset-password/ticket?ticket=`));
      expect(older).not.toBe(newer);
      const browser = new TestBrowser();
      const form = readForm(await (await browser.get(newer!)).text(), test.url);
      expect((await browser.submitExpectingPage(form.action, { ...form.fields, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD })).status).toBe(200);
      expect((await browser.get(older!)).status).toBe(400);
    });

    it('sends the reset email from the hosted "Forgot password?" form, with the same answer for unknown addresses', async () => {
      async function forgotPage(browser: TestBrowser): Promise<string> {
        const login = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id))}`));
        if (login instanceof URL) throw new Error('expected the login page');
        const href = /href="(\/u\/reset-password\?state=[^"]+)"/.exec(await login.text())?.[1];
        expect(href).toBeDefined();
        const page = await browser.get(new URL(href!.replace(/&amp;/g, '&'), test.url).href);
        expect(page.status).toBe(200);
        return page.text();
      }
      const sent: string[] = [];
      for (const address of ['stranger@example.com', 'hosted@example.com']) {
        const browser = new TestBrowser();
        const form = readForm(await forgotPage(browser), test.url);
        const answer = await browser.submitExpectingPage(form.action, { ...form.fields, email: address });
        expect(answer.status).toBe(200);
        sent.push((await answer.text()).replaceAll(address, 'ADDRESS').replace(/nonce-[^']+'|nonce="[^"]+"|state=[^"&]+|retry=[^"&]+/g, 'PER-PAGE'));
      }
      expect(sent[0]).toContain('Check your email');
      expect(sent[0]).toBe(sent[1]);
      const email = await smtp.waitFor(resetTo('hosted@example.com'));
      expect(linkIn(email, `${test.url}/u/reset-password/ticket?ticket=`)).toBeTruthy();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.received.some((e) => e.to.includes('stranger@example.com'))).toBe(false);

      const browser = new TestBrowser();
      const form = readForm(await forgotPage(browser), test.url);
      const invalid = await browser.submitExpectingPage(form.action, { ...form.fields, email: 'not an email' });
      expect(invalid.status).toBe(400);
      const invalidPage = await invalid.text();
      expect(invalidPage).toContain('Enter a valid email address, such as name@example.com.');
      expect(invalidPage).toContain('value="not an email"');
    });

    it('answers bad requests in the /dbconnections shape, never a 500', async () => {
      const cases: [unknown, number, string][] = [
        [{ client_id: app.client_id, connection: DB }, 400, 'invalid_request'],
        [{ client_id: app.client_id, connection: DB, email: 'not-an-email' }, 400, 'invalid_request'],
        [{ client_id: 'y'.repeat(32), connection: DB, email: 'grace@example.com' }, 400, 'invalid_request'],
        [{ client_id: app.client_id, connection: 'nope', email: 'grace@example.com' }, 400, 'invalid_request'],
        [{ client_id: app.client_id, connection: 'no-self-service', email: 'grace@example.com' }, 403, 'unauthorized'],
        [{ client_id: app.client_id, connection: DB, email: { $ne: 1 } }, 400, 'invalid_request'],
        ['{"email":', 400, 'invalid_request'],
        ['[]', 400, 'invalid_request'],
      ];
      for (const [body, status, code] of cases) {
        const response = await changePassword(body);
        expect(response.status).toBe(status);
        expect(await response.json()).toMatchObject({ code, statusCode: status, name: expect.stringMatching(/Error$/), description: expect.any(String) });
      }
    });

    it('answers bad or missing tickets on the reset page with a page, never a 500', async () => {
      const get = async (query: string) => (await fetch(`${test.url}/u/reset-password/ticket${query}`)).status;
      expect(await get('')).toBe(400);
      expect(await get(`?ticket=${'A'.repeat(43)}`)).toBe(400);
      expect(await get(`?ticket=a&ticket=b`)).toBe(400);
      expect(await get(`?ticket=%00%ff`)).toBe(400);
      const post = (body: string, type: string) => fetch(`${test.url}/u/reset-password/ticket`, { method: 'POST', headers: { 'content-type': type }, body });
      for (const [body, type] of [
        ['', 'application/x-www-form-urlencoded'],
        ['ticket=x&password=a&password_confirmation=a', 'application/x-www-form-urlencoded'],
        ['{"ticket":["x"],"password":{"a":1}}', 'application/json'],
        ['[1,2]', 'application/json'],
      ] as const) {
        const response = await post(body, type);
        expect(response.status).toBe(400);
        expect(await response.text()).toContain('This link can no longer be used');
      }
    });

    it('answers the CORS preflight for an allowed origin only', async () => {
      const preflight = (origin: string) =>
        fetch(`${test.url}/dbconnections/change_password`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'auth0-client,content-type' },
        });
      const allowed = await preflight('https://app.example');
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(allowed.headers.get('access-control-allow-headers')).toMatch(/Auth0-Client/);
      expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
      const real = await changePassword({ client_id: app.client_id, email: 'nobody2@example.com', connection: DB }, { origin: 'https://app.example' });
      expect(real.status).toBe(200);
      expect(real.headers.get('access-control-allow-origin')).toBe('https://app.example');
    });
  });
}

describe('/dbconnections rate limit', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer();
  });
  afterAll(() => test.close());

  it('answers a flood from one IP with 429 in the /dbconnections shape and the rate-limit headers', async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 60 && !limited; i++) {
      const response = await fetch(`${test.url}/dbconnections/change_password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (response.status === 429) limited = response;
      else expect(response.status).toBe(400);
    }
    expect(limited).toBeDefined();
    expect(limited!.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(limited!.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    expect(await limited!.json()).toMatchObject({ name: 'TooManyRequestsError', code: 'too_many_requests', statusCode: 429 });
  });
});
