/**
 * MFA on the hosted login, in real Chromium under the real CSP, with codes computed by otplib from the secret
 * the page shows (as an authenticator app would): enrollment with a QR code, the recovery code shown once, the
 * challenge on the next login, the recovery code used once and replaced, the ID token's `amr`, and (over
 * HTTP) the lockout after 10 wrong codes and its unblock, the gate on sessions from a first factor alone, and
 * prompt=none. Screenshots go to /tmp/screens/mfa-*.png.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { openBody } from '../messaging/email-outbox.js';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { mailTo } from '../test-support/operation-examples.js';
import { createApp, createUser, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';

/** The application's callback: a local server, since the browser really goes there. */
let CALLBACK = '';
const PASSWORD = 'correct horse battery staple 9';
const SCREENS = '/tmp/screens';

interface Pkce {
  verifier: string;
  query: Record<string, string>;
}

function codeRequest(clientId: string, extra: Record<string, string> = {}): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return {
    verifier,
    query: { client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256', ...extra },
  };
}

describe('MFA on the hosted login (Chromium)', () => {
  let test: TestServer;
  let app: TestApp;
  let browser: BrowserSession;
  let appServer: Server;
  const email = 'ada@example.com';
  let userId: string;
  /** What the person kept from enrollment. */
  const kept = { secret: '', recoveryCode: '' };

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await management(test, method, path, body);
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

  async function exchange(callback: URL, pkce: Pkce): Promise<Record<string, unknown>> {
    const code = callback.searchParams.get('code');
    expect(code, callback.href).toBeTruthy();
    const res = await fetch(`${test.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: app.client_id, code, redirect_uri: CALLBACK, code_verifier: pkce.verifier }),
    });
    expect(res.status).toBe(200);
    return decodeJwt(((await res.json()) as { id_token: string }).id_token);
  }

  /** A fresh browser context at the login form, the app's callback answered locally. */
  async function startLogin(page: Page, pkce: Pkce): Promise<void> {
    await page.goto(`${test.url}/authorize?${new URLSearchParams(pkce.query)}`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: `${SCREENS}/mfa-${name}.png`, fullPage: true });
  const codeAt = (offsetSeconds = 0) => generate({ secret: kept.secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

  beforeAll(async () => {
    mkdirSync(SCREENS, { recursive: true });
    appServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app'));
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    CALLBACK = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/callback`;
    test = await startTestServer();
    app = await createApp(test, { callbacks: [CALLBACK], grant_types: ['authorization_code', 'http://auth0.com/oauth/grant-type/password-realm'] });
    userId = (await createUser(test, email, PASSWORD)).user_id;
    expect((await api('PUT', '/guardian/factors/otp', { enabled: true })).status).toBe(200);
    expect((await api('PUT', '/guardian/factors/recovery-code', { enabled: true })).status).toBe(200);
    expect((await api('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
    await new Promise((resolve) => appServer?.close(resolve));
  });

  it('enrolls an authenticator app after the password, shows the recovery code once, and signs in with amr pwd+mfa', async (context) => {
    const page = await openPage(browser, context);
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const pkce = codeRequest(app.client_id);
    await startLogin(page, pkce);
    await expect.poll(() => page.getByRole('heading', { name: 'Secure your account' }).count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe('/u/mfa');
    // The QR code is drawn server-side, inline; the key is there for typing in.
    expect(await page.locator('figure.qr svg path').count()).toBeGreaterThan(0);
    kept.secret = (await page.locator('#secret').getAttribute('data-secret'))!;
    expect(kept.secret).toMatch(/^[A-Z2-7]{32}$/);
    await shot(page, 'enroll');

    // A wrong code: the page again, saying so.
    const right = await codeAt();
    await page.getByLabel('6-digit code').fill(right === '123456' ? '654321' : '123456');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That code is not right');

    await page.getByLabel('6-digit code').fill(await codeAt());
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Save your recovery code' }).count()).toBe(1);
    kept.recoveryCode = (await page.locator('#recovery-code').textContent())!.trim();
    expect(kept.recoveryCode).toMatch(/^[A-Z2-9]{24}$/);
    await shot(page, 'recovery-code');

    const landing = page.waitForURL((url) => url.href.startsWith(CALLBACK));
    await page.getByRole('button', { name: 'I have saved it, continue' }).click();
    await landing;
    const claims = await exchange(new URL(page.url()), pkce);
    expect(claims).toMatchObject({ sub: userId, amr: ['pwd', 'mfa'] });
    expect(violations).toEqual([]);

    const methods = (await api('GET', `/users/${encodeURIComponent(userId)}/authentication-methods`)).body as { type: string; confirmed: boolean }[];
    expect(methods.map((m) => [m.type, m.confirmed])).toEqual([
      ['totp', true],
      ['recovery-code', true],
    ]);
    // Shown once: a new login does not show it again (it asks for a code).
    await page.close();
  });

  it('asks for a code on the next login, refuses it again, and takes the recovery code once, replacing it', async (context) => {
    const page = await openPage(browser, context);
    await page.context().clearCookies();
    const pkce = codeRequest(app.client_id);
    await startLogin(page, pkce);
    await expect.poll(() => page.getByRole('heading', { name: 'Verify your identity' }).count()).toBe(1);
    await shot(page, 'challenge');
    // Codes already used (at enrollment, within the window, or since) are refused.
    await page.getByLabel('6-digit code').fill(await codeAt(-30));
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That code is not right');

    await page.getByRole('link', { name: 'Use your recovery code' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Use your recovery code' }).count()).toBe(1);
    await page.getByLabel('Recovery code').fill(kept.recoveryCode.toLowerCase());
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Save your recovery code' }).count()).toBe(1);
    const next = (await page.locator('#recovery-code').textContent())!.trim();
    expect(next).toMatch(/^[A-Z2-9]{24}$/);
    expect(next).not.toBe(kept.recoveryCode);
    const landing = page.waitForURL((url) => url.href.startsWith(CALLBACK));
    await page.getByRole('button', { name: 'I have saved it, continue' }).click();
    await landing;
    expect(await exchange(new URL(page.url()), pkce)).toMatchObject({ amr: ['pwd', 'mfa'] });

    // The old recovery code is spent.
    await page.context().clearCookies();
    await startLogin(page, codeRequest(app.client_id));
    await page.getByRole('link', { name: 'Use your recovery code' }).click();
    await page.getByLabel('Recovery code').fill(kept.recoveryCode);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That recovery code is not right');
    kept.recoveryCode = next;
    await page.close();
  });

  /** Over HTTP: the password step, to the MFA page; its form. */
  async function passwordStep(http: TestBrowser, who = email, extra: Record<string, string> = {}) {
    const start = await http.follow(test.url, await http.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, extra).query)}`));
    if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
    const login = readForm(await start.text(), test.url);
    const mfa = await http.submitExpectingPage(login.action, { ...login.fields, username: who, password: PASSWORD });
    return { page: mfa, form: readForm(await mfa.clone().text(), test.url) };
  }

  it('locks MFA after 10 wrong codes (even the right one is then refused) until DELETE /user-blocks/{id}', async () => {
    // The spent recovery code above began a streak; an unblock ends it, so this one starts from nothing.
    expect((await api('DELETE', `/user-blocks/${encodeURIComponent(userId)}`)).status).toBe(204);
    const http = new TestBrowser();
    const { page, form } = await passwordStep(http);
    expect(page.status).toBe(200);
    const right = await codeAt();
    const wrong = right === '000000' ? '111111' : '000000';
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await http.submitExpectingPage(form.action, { ...form.fields, code: wrong })).status);
    expect(statuses).toEqual([...Array<number>(9).fill(400), 429]);
    const refused = await http.submitExpectingPage(form.action, { ...form.fields, code: await codeAt() });
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('locked for this account');

    expect((await api('DELETE', `/user-blocks/${encodeURIComponent(userId)}`)).status).toBe(204);
    // Next step's code (the current one may have been used above by the refused request: it was not checked).
    const done = await http.submit(form.action, { ...form.fields, code: await codeAt(30) });
    expect(done instanceof URL && done.href.startsWith(CALLBACK)).toBe(true);
  });

  it('emails a one-time code as another way at the challenge (the email factor): a wrong one refused, the right one once', async () => {
    expect((await api('PUT', '/guardian/factors/email', { enabled: true })).status).toBe(200);
    expect((await api('PATCH', `/users/${encodeURIComponent(userId)}`, { email_verified: true })).status).toBe(200);
    try {
      const http = new TestBrowser();
      const { page, form } = await passwordStep(http);
      expect(await page.text()).toContain('Email me a code instead');
      const sent = await http.submitExpectingPage(form.action, { ...form.fields, send_email_code: 'yes' });
      expect(sent.status).toBe(200);
      expect(await sent.text()).toContain('We sent a 6-digit code to <strong>a•••@example.com</strong>');
      const mail = await mailTo(test, email, (text) => text.includes('verification code'));
      const code = /(\d{6}) is your/.exec(mail)![1]!;
      const wrong = await http.submitExpectingPage(form.action, { ...form.fields, email_code: code === '000000' ? '111111' : '000000' });
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toContain('That code is not right, or has expired');
      const done = await http.submit(form.action, { ...form.fields, email_code: code });
      expect(done instanceof URL && done.href.startsWith(CALLBACK)).toBe(true);

      // Used once: the same code does not pass another login's step.
      const again = new TestBrowser();
      const next = await passwordStep(again);
      const replayed = await again.submitExpectingPage(next.form.action, { ...next.form.fields, email_code: code });
      expect(replayed.status).toBe(400);
    } finally {
      await api('PUT', '/guardian/factors/email', { enabled: false });
    }
  });

  it('words the emailed code with the tenant’s mfa_oob_code template ({{ code }}), and says codes by email are not available while it is disabled', async () => {
    expect((await api('PUT', '/guardian/factors/email', { enabled: true })).status).toBe(200);
    expect((await api('PATCH', `/users/${encodeURIComponent(userId)}`, { email_verified: true })).status).toBe(200);
    const saved = await api('PUT', '/email-templates/mfa_oob_code', { enabled: true, subject: 'Sign-in code {{ code }}', body: '<p>Dear {{ user.email }}, type [{{ code }}].</p>' });
    expect(saved.status).toBe(200);
    expect((await api('PATCH', '/email-templates/mfa_oob_code', { resultUrl: 'https://app.example/' })).status).toBe(400);
    try {
      const http = new TestBrowser();
      const { form } = await passwordStep(http);
      expect((await http.submitExpectingPage(form.action, { ...form.fields, send_email_code: 'yes' })).status).toBe(200);
      const mail = await mailTo(test, email, (text) => text.includes('Sign-in code'));
      const code = /Sign-in code (\d{6})/.exec(mail)![1]!;
      const { store, sealer } = test.server.prepared;
      const sent = await store.db.selectFrom('email_outbox').select(['id', 'body_sealed']).where('subject', '=', `Sign-in code ${code}`).executeTakeFirstOrThrow();
      expect(openBody(sealer, sent)!.html).toBe(`<p>Dear ${email}, type [${code}].</p>`);
      const done = await http.submit(form.action, { ...form.fields, email_code: code });
      expect(done instanceof URL && done.href.startsWith(CALLBACK)).toBe(true);

      expect((await api('PATCH', '/email-templates/mfa_oob_code', { enabled: false })).status).toBe(200);
      const other = new TestBrowser();
      const next = await passwordStep(other);
      const refused = await other.submitExpectingPage(next.form.action, { ...next.form.fields, send_email_code: 'yes' });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('Codes by email are not available');
    } finally {
      await test.server.prepared.store.db.deleteFrom('email_templates').where('template', '=', 'mfa_oob_code').execute();
      await api('PUT', '/guardian/factors/email', { enabled: false });
    }
  });

  it('sends a session from the password alone (a signup) through the second step, and answers prompt=none with interaction_required', async () => {
    const http = new TestBrowser();
    const newcomer = `new${Date.now()}@example.com`;
    const start = await http.follow(test.url, await http.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { screen_hint: 'signup' }).query)}`));
    if (start instanceof URL) throw new Error('expected the signup page');
    const signup = readForm(await start.text(), test.url);
    const next = await http.submitExpectingPage(signup.action, { ...signup.fields, email: newcomer, password: PASSWORD });
    expect(new URL(next.url).pathname).toBe('/u/mfa');
    expect(await next.text()).toContain('Secure your account');

    const silent = await http.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id, { prompt: 'none' }).query)}`);
    expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('interaction_required');
  });

  it('issues nothing to the password-realm grant on the password alone: mfa_required, after the password was right', async () => {
    const grant = (password: string) =>
      fetch(`${test.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'http://auth0.com/oauth/grant-type/password-realm', client_id: app.client_id, realm: 'Username-Password-Authentication', username: email, password, scope: 'openid' }),
      });
    const wrong = await grant('not the password');
    expect({ status: wrong.status, body: await wrong.json() }).toMatchObject({ status: 403, body: { error: 'invalid_grant' } });
    const right = await grant(PASSWORD);
    const body = (await right.json()) as Record<string, unknown>;
    expect({ status: right.status, error: body.error }).toEqual({ status: 403, error: 'mfa_required' });
    expect(body.access_token).toBeUndefined();
  });

  it('lets the password alone sign in again once the policy is back to never', async () => {
    expect((await api('PUT', '/guardian/policies', [])).status).toBe(200);
    const http = new TestBrowser();
    const start = await http.follow(test.url, await http.get(`${test.url}/authorize?${new URLSearchParams(codeRequest(app.client_id).query)}`));
    if (start instanceof URL) throw new Error('expected the login page');
    const login = readForm(await start.text(), test.url);
    const done = await http.submit(login.action, { ...login.fields, username: email, password: PASSWORD });
    expect(done instanceof URL && done.href.startsWith(CALLBACK)).toBe(true);
    const grant = await fetch(`${test.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'http://auth0.com/oauth/grant-type/password-realm', client_id: app.client_id, realm: 'Username-Password-Authentication', username: email, password: PASSWORD }),
    });
    expect(grant.status).toBe(200);
    // A stale MFA form (no challenge on this transaction) gets the error page, not a session.
    const stale = await http.post(`${test.url}/u/mfa`, { ...login.fields, code: '123456' });
    expect(stale.status).toBe(400);
  });
});
