/**
 * Post/redirect/get on the hosted pages (#19) over real HTTP: a refused form answers 303 to its page, which shows
 * the problem with what was typed (never the password), again on reload, and not on a fresh visit; the outcome
 * travels sealed. "Forgot password?" and the reset link's page finish with a redirect too, so a reload sends
 * nothing twice, and the reset's success page links to the application's login.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBody } from '../messaging/email-outbox.js';
import { requestPasswordReset } from '../messaging/account-emails.js';
import { findConnectionByName } from '../store/connections.js';
import { findTenantById, updateTenant } from '../store/tenants.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';

const PASSWORD = 'correct horse battery staple 9';

function codeRequest(clientId: string, extra: Record<string, string> = {}): Record<string, string> {
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  return { client_id: clientId, redirect_uri: 'https://app.example/callback', response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
}

describe('hosted forms answer with a redirect (post/redirect/get)', () => {
  let test: TestServer;
  let app: TestApp;

  beforeAll(async () => {
    test = await startTestServer();
    app = await createApp(test);
    await createUser(test, 'grace@example.com', PASSWORD);
  });
  afterAll(() => test.close());

  async function firstPage(browser: TestBrowser, extra: Record<string, string> = {}): Promise<{ url: string; form: ReturnType<typeof readForm> }> {
    const response = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, extra))}`));
    if (response instanceof URL) throw new Error('expected a page');
    return { url: response.url, form: readForm(await response.text(), test.url) };
  }

  it('log in: a wrong password comes back as the page with the identifier, on reload too, and a fresh visit is clean', async () => {
    const browser = new TestBrowser();
    const { form } = await firstPage(browser);
    const secret = 'my-Wrong-pa55word';
    const posted = await browser.post(form.action, { ...form.fields, username: 'grace@example.com', password: secret });
    expect(posted.status).toBe(303);
    const location = new URL(posted.headers.get('location')!, test.url);
    expect(location.pathname).toBe('/u/login');
    expect(location.searchParams.get('state')).toBe(form.fields.transaction);
    expect(location.searchParams.get('retry')).toMatch(/^[A-Za-z0-9]{16}$/);
    const cookie = posted.headers.getSetCookie().find((c) => c.startsWith('gh_form='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Path=\/u(;|$)/);
    expect(cookie).not.toContain('grace');
    expect(cookie).not.toContain(secret);

    for (let load = 0; load < 2; load++) {
      const page = await browser.get(location.href);
      expect(page.status).toBe(400);
      const html = await page.text();
      expect(html).toContain('Wrong email or password. Check both and try again');
      expect(html).toContain('value="grace@example.com"');
      expect(html).not.toContain(secret);
      // The form still works: same transaction, same CSRF token.
      expect(readForm(html, test.url).fields).toEqual(form.fields);
    }
    const fresh = await browser.get(`${test.url}/u/login?state=${form.fields.transaction}`);
    expect(fresh.status).toBe(200);
    expect(await fresh.text()).not.toContain('Wrong email or password');
    const forged = await browser.get(`${test.url}/u/login?state=${form.fields.transaction}&retry=${'A'.repeat(16)}`);
    expect(forged.status).toBe(200);
    // Another page of the same transaction does not show the login page's outcome.
    const signup = await browser.get(`${test.url}/u/signup?state=${form.fields.transaction}&retry=${location.searchParams.get('retry')}`);
    expect(signup.status).toBe(200);
    expect(await signup.text()).not.toContain('Wrong email or password');

    const right = await browser.submit(form.action, { ...form.fields, username: 'grace@example.com', password: PASSWORD });
    expect(right).toBeInstanceOf(URL);
  });

  it('sign up: a refused password comes back with the address kept and each rule marked, never the password', async () => {
    const browser = new TestBrowser();
    const { form } = await firstPage(browser, { screen_hint: 'signup' });
    const page = await browser.submitExpectingPage(form.action, { ...form.fields, email: 'newcomer@example.com', password: 'abcdefgh' });
    expect(page.status).toBe(400);
    expect(new URL(page.url).searchParams.get('retry')).toBeTruthy();
    const html = await page.text();
    expect(html).toContain('Choose a stronger password: it must meet each rule marked as still needed below.');
    expect(html).toContain('value="newcomer@example.com"');
    expect(html).not.toContain('abcdefgh');
    expect(html).toContain('<li class="rule rule-met"><span class="visually-hidden">Done: </span>At least 8 characters in length</li>');
    expect(html).toContain('<li class="rule rule-unmet"><span class="visually-hidden">Still needed: </span>upper case letters (A-Z)</li>');
    expect(html).toMatch(/<input id="password"[^>]*aria-describedby="password-rules"[^>]*aria-invalid="true"[^>]*autofocus>/);

    // Several problems at once: the one to act on first is shown (the address before the password).
    const both = await browser.submitExpectingPage(form.action, { ...form.fields, email: 'not an address', password: 'abc' });
    expect(await both.text()).toContain('Enter a valid email address, such as name@example.com.');
    const taken = await browser.submitExpectingPage(form.action, { ...form.fields, email: 'GRACE@example.com', password: 'abc' });
    expect(await taken.text()).toContain('already exists. Log in instead');
  });

  it('forgot password: "check your email" comes after a redirect, and a reload sends no second email', async () => {
    const browser = new TestBrowser();
    const { url } = await firstPage(browser);
    const forgot = await browser.get(`${test.url}/u/reset-password?state=${new URL(url).searchParams.get('state')}`);
    const form = readForm(await forgot.text(), test.url);
    const posted = await browser.post(form.action, { ...form.fields, email: 'grace@example.com' });
    expect(posted.status).toBe(303);
    const sent = new URL(posted.headers.get('location')!, test.url).href;
    const db = test.server.prepared.store.db;
    const tickets = () => db.selectFrom('user_tickets').select('token_hash').where('purpose', '=', 'password_reset').where('email', '=', 'grace@example.com').execute();
    await expect.poll(async () => (await tickets()).length).toBe(1);
    for (let load = 0; load < 2; load++) {
      const page = await browser.get(sent);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Check your email');
    }
    expect(await tickets()).toHaveLength(1);
  });

  describe('the reset link page', () => {
    /** A fresh reset link for a new user, as emailed (read from the outbox). */
    async function resetLink(clientId?: string): Promise<string> {
      const email = `reset-${randomBytes(4).toString('hex')}@example.com`;
      await createUser(test, email, PASSWORD);
      const { store, sealer, bootstrap } = test.server.prepared;
      const tenant = (await findTenantById(store.db, bootstrap!.tenant.id))!;
      const connection = (await findConnectionByName(store.db, tenant.id, DATABASE_CONNECTION_NAME))!;
      expect(await requestPasswordReset(test.server.services, tenant, connection, { email }, clientId)).toBe(true);
      const rows = await store.db.selectFrom('email_outbox').select(['id', 'body_sealed']).where('recipient', '=', email).where('subject', 'like', 'Reset%').execute();
      return /(http\S+\/u\/reset-password\/ticket\?ticket=\S+)/.exec(openBody(sealer, rows[0]!)!.text)![1]!;
    }

    async function changePassword(link: string): Promise<{ page: Response; url: string; browser: TestBrowser }> {
      const browser = new TestBrowser();
      const form = readForm(await (await browser.get(link)).text(), test.url);
      const mismatch = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'New-Password-456', password_confirmation: 'New-Password-457' });
      expect(mismatch.status).toBe(400);
      expect(await mismatch.text()).toContain('Type the same new password in both fields.');
      const page = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'New-Password-456', password_confirmation: 'New-Password-456' });
      return { page, url: page.url, browser };
    }

    it("links to the application's login route once the password is changed, also after a reload", async () => {
      const withLogin = await createApp(test, { initiate_login_uri: 'https://app.example/login' });
      const { page, url, browser } = await changePassword(await resetLink(withLogin.client_id));
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Your password has been changed');
      expect(html).toContain('<a class="button button-primary" href="https://app.example/login">Log in</a>');
      expect(await (await browser.get(url)).text()).toContain('href="https://app.example/login"');
    });

    it("falls back to the tenant's default login route, and says to go back to the application without either", async () => {
      const { page } = await changePassword(await resetLink(app.client_id));
      expect(await page.text()).toContain('Go back to the application and log in with your new password.');

      const { store, bootstrap } = test.server.prepared;
      const tenant = (await findTenantById(store.db, bootstrap!.tenant.id))!;
      await updateTenant(store.db, tenant.id, { settings: { ...tenant.settings, default_redirection_uri: 'https://portal.example/login' } });
      test.server.services.tenants.invalidate();
      try {
        const { page: routed } = await changePassword(await resetLink(app.client_id));
        expect(await routed.text()).toContain('href="https://portal.example/login"');
      } finally {
        await updateTenant(store.db, tenant.id, { settings: tenant.settings });
        test.server.services.tenants.invalidate();
      }
    });

    it('sends the Default App back to the demo, and a dead link to the log-in page it knows', async () => {
      const clients = (await (await management(test, 'GET', '/clients')).json()) as { client_id: string; name: string }[];
      const defaultApp = clients.find((c) => c.name === 'Default App')!;
      const link = await resetLink(defaultApp.client_id);
      const { page, browser } = await changePassword(link);
      expect(await page.text()).toContain(`href="${test.url}/demo"`);
      const dead = await browser.get(link);
      expect(dead.status).toBe(400);
      const html = await dead.text();
      expect(html).toContain('This link can no longer be used');
      expect(html).toContain(`href="${test.url}/demo"`);
    });
  });
});
