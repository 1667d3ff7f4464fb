/**
 * Step-up and "Remember this browser", in real Chromium under the real CSP, with TOTP codes computed by otplib
 * from the secret the page shows: a session from the password alone asked for the second factor only when the
 * application sends acr_values=…/multi-factor (and then `acr` and `amr` in the ID token), max_age still sending
 * the person back to the password; the remember-browser cookie skipping the tenant policy's second step but
 * never a step-up, forgotten by invalidate-remember-browser and by resetting the user's factors; the Guardian
 * settings that offer it. Screenshots go to /tmp/screens/stepup-*.png (the README's come from here).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const SCREENS = '/tmp/screens';
const MULTI_FACTOR = 'http://schemas.openid.net/pape/policies/2007/06/multi-factor';
const REMEMBER_COOKIE = 'gh_mfa_remember';
const SESSION_COOKIE = 'gh_session';

interface Pkce {
  verifier: string;
  query: Record<string, string>;
}

describe('Step-up and remember this browser (Chromium)', () => {
  let test: TestServer;
  let app: TestApp;
  let browser: BrowserSession;
  let appServer: Server;
  let callback = '';
  const email = `stepup${Date.now()}@example.com`;
  let userId = '';
  /** What the person kept: the TOTP secret the page showed, the newest recovery code, the last time step used. */
  const kept = { secret: '', recoveryCode: '', lastStep: 0 };

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await management(test, method, path, body);
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

  function codeRequest(extra: Record<string, string> = {}): Pkce {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    return {
      verifier,
      query: { client_id: app.client_id, redirect_uri: callback, response_type: 'code', scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256', ...extra },
    };
  }

  async function exchange(page: Page, pkce: Pkce): Promise<Record<string, unknown>> {
    const code = new URL(page.url()).searchParams.get('code');
    expect(code, page.url()).toBeTruthy();
    const res = await fetch(`${test.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: app.client_id, code, redirect_uri: callback, code_verifier: pkce.verifier }),
    });
    expect(res.status).toBe(200);
    return decodeJwt(((await res.json()) as { id_token: string }).id_token);
  }

  /** A code of a time step not used yet (a step is accepted once): waits for the next step when needed. */
  async function freshCode(): Promise<string> {
    for (;;) {
      const step = Math.floor(Date.now() / 30_000);
      if (step > kept.lastStep) {
        kept.lastStep = step;
        return generate({ secret: kept.secret, epoch: Math.floor(Date.now() / 1000) });
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  const authorize = (page: Page, pkce: Pkce) => page.goto(`${test.url}/authorize?${new URLSearchParams(pkce.query)}`);
  const landed = (page: Page) => page.waitForURL((url) => url.href.startsWith(callback));
  async function password(page: Page) {
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
  }
  const heading = (page: Page, name: string) => expect.poll(() => page.getByRole('heading', { name }).count()).toBe(1);
  /** The card alone, small enough for the README. */
  const shot = (page: Page, name: string) => page.locator('.card').screenshot({ path: `${SCREENS}/stepup-${name}.png` });
  /** Ends the SSO session only, as a closed browser or an expired session would; other cookies stay. */
  const endSession = (page: Page) => page.context().clearCookies({ name: SESSION_COOKIE });
  const cspViolations = (page: Page) => {
    const seen: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
    });
    return seen;
  };

  beforeAll(async () => {
    mkdirSync(SCREENS, { recursive: true });
    appServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app'));
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/callback`;
    test = await startTestServer();
    app = await createApp(test, { callbacks: [callback] });
    userId = (await createUser(test, email, PASSWORD)).user_id;
    expect((await api('PUT', '/guardian/factors/otp', { enabled: true })).status).toBe(200);
    expect((await api('PUT', '/guardian/factors/recovery-code', { enabled: true })).status).toBe(200);
    // No policy: a second factor only when an application asks for one.
    expect((await api('PUT', '/guardian/policies', [])).status).toBe(200);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
    await new Promise((resolve) => appServer?.close(resolve));
  });

  it('advertises the multi-factor acr and the acr claim in discovery', async () => {
    const metadata = (await (await fetch(`${test.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(metadata.acr_values_supported).toEqual([MULTI_FACTOR]);
    expect(metadata.claims_supported).toContain('acr');
  });

  it('steps a password session up with acr_values: only the second step (TOTP enrolled from the shown secret), then acr and amr pwd+otp+mfa; a session with mfa is not asked again', async (context) => {
    const page = await openPage(browser, context);
    const violations = cspViolations(page);
    const plain = codeRequest();
    await authorize(page, plain);
    await password(page);
    await landed(page);
    const first = await exchange(page, plain);
    expect(first).toMatchObject({ sub: userId, amr: ['pwd'] });
    expect(first.acr).toBeUndefined();

    // Silently, it cannot be had: interaction_required.
    await authorize(page, codeRequest({ acr_values: MULTI_FACTOR, prompt: 'none' }));
    await landed(page);
    expect(new URL(page.url()).searchParams.get('error')).toBe('interaction_required');

    // The application asks for more: the same session, the second step only (no password form).
    const stepUp = codeRequest({ acr_values: MULTI_FACTOR });
    await authorize(page, stepUp);
    await heading(page, 'Secure your account');
    expect(new URL(page.url()).pathname).toBe('/u/mfa');
    expect(await page.getByLabel('Password').count()).toBe(0);
    kept.secret = (await page.locator('#secret').getAttribute('data-secret'))!;
    expect(kept.secret).toMatch(/^[A-Z2-7]{32}$/);
    await shot(page, 'enroll');
    await page.getByLabel('6-digit code').fill(await freshCode());
    await page.getByRole('button', { name: 'Verify' }).click();
    await heading(page, 'Save your recovery code');
    kept.recoveryCode = (await page.locator('#recovery-code').textContent())!.trim();
    await shot(page, 'recovery-code');
    const done = landed(page);
    await page.getByRole('button', { name: 'I have saved it, continue' }).click();
    await done;
    const stepped = await exchange(page, stepUp);
    expect(stepped).toMatchObject({ sub: userId, acr: MULTI_FACTOR, amr: ['pwd', 'otp', 'mfa'] });
    expect(stepped.auth_time).toBeGreaterThanOrEqual(first.auth_time as number);

    // The session now has its second factor: the same request is answered without a page.
    const again = codeRequest({ acr_values: MULTI_FACTOR });
    await authorize(page, again);
    await landed(page);
    expect(await exchange(page, again)).toMatchObject({ acr: MULTI_FACTOR, amr: ['pwd', 'otp', 'mfa'] });
    expect(violations).toEqual([]);
    await page.close();
  });

  it('still honours max_age with a step-up: an older session means the password again, then the code', async (context) => {
    const page = await openPage(browser, context);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const pkce = codeRequest({ acr_values: MULTI_FACTOR, max_age: '1' });
    await authorize(page, pkce);
    await expect.poll(() => page.getByLabel('Password').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe('/u/login');
    const before = Math.floor(Date.now() / 1000);
    await password(page);
    await heading(page, 'Verify your identity');
    await shot(page, 'challenge');
    await page.getByLabel('6-digit code').fill(await freshCode());
    const done = landed(page);
    await page.getByRole('button', { name: 'Continue' }).click();
    await done;
    const claims = await exchange(page, pkce);
    expect(claims).toMatchObject({ acr: MULTI_FACTOR, amr: ['pwd', 'otp', 'mfa'] });
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    await page.close();
  });

  it('remembers this browser: the tenant policy skips the second step there (amr pwd, no acr), a step-up does not; invalidate-remember-browser forgets it', async (context) => {
    expect((await api('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    const page = await openPage(browser, context);
    await page.context().clearCookies();
    const violations = cspViolations(page);

    // The policy asks; the person uses the recovery code and, keeping the new one, ticks the box.
    const first = codeRequest();
    await authorize(page, first);
    await password(page);
    await heading(page, 'Verify your identity');
    expect(await page.getByLabel('Remember this browser for 30 days').isChecked()).toBe(false);
    await page.getByRole('link', { name: 'Use your recovery code' }).click();
    await heading(page, 'Use your recovery code');
    await page.getByLabel('Recovery code').fill(kept.recoveryCode);
    await page.getByRole('button', { name: 'Continue' }).click();
    await heading(page, 'Save your recovery code');
    kept.recoveryCode = (await page.locator('#recovery-code').textContent())!.trim();
    await page.getByLabel('Remember this browser for 30 days').check();
    await shot(page, 'remember');
    let done = landed(page);
    await page.getByRole('button', { name: 'I have saved it, continue' }).click();
    await done;
    expect(await exchange(page, first)).toMatchObject({ acr: MULTI_FACTOR, amr: ['pwd', 'mfa'] });
    const remembered = (await page.context().cookies(test.url)).find((c) => c.name === REMEMBER_COOKIE);
    expect(remembered).toMatchObject({ httpOnly: true, path: '/' });
    const days = (remembered!.expires - Date.now() / 1000) / 86_400;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);

    // A new session on this browser: the password, and straight back to the application.
    await endSession(page);
    const second = codeRequest();
    await authorize(page, second);
    await password(page);
    await landed(page);
    const claims = await exchange(page, second);
    expect(claims).toMatchObject({ sub: userId, amr: ['pwd'] });
    expect(claims.acr).toBeUndefined();

    // An application that asks for a second factor gets one asked for, remembered browser or not.
    const stepUp = codeRequest({ acr_values: MULTI_FACTOR });
    await authorize(page, stepUp);
    await heading(page, 'Verify your identity');
    await page.getByLabel('6-digit code').fill(await freshCode());
    done = landed(page);
    await page.getByRole('button', { name: 'Continue' }).click();
    await done;
    expect(await exchange(page, stepUp)).toMatchObject({ acr: MULTI_FACTOR, amr: ['pwd', 'otp', 'mfa'] });

    // Another user on this browser is not vouched for by it.
    const other = `other${Date.now()}@example.com`;
    await createUser(test, other, PASSWORD);
    await endSession(page);
    await authorize(page, codeRequest());
    await page.getByLabel('Email address').fill(other);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await heading(page, 'Secure your account');

    // The administrator forgets the user's remembered browsers: the policy asks again here.
    expect((await api('POST', `/users/${encodeURIComponent(userId)}/multifactor/actions/invalidate-remember-browser`)).status).toBe(204);
    expect((await api('POST', '/users/auth0%7Cnobody/multifactor/actions/invalidate-remember-browser')).status).toBe(404);
    await endSession(page);
    await authorize(page, codeRequest());
    await password(page);
    await heading(page, 'Verify your identity');
    expect(violations).toEqual([]);
    await page.close();
  });

  it('forgets the remembered browser when the user\'s factors are reset', async (context) => {
    const page = await openPage(browser, context);
    await page.context().clearCookies();
    const pkce = codeRequest();
    await authorize(page, pkce);
    await password(page);
    await heading(page, 'Verify your identity');
    await page.getByLabel('6-digit code').fill(await freshCode());
    await page.getByLabel('Remember this browser for 30 days').check();
    const done = landed(page);
    await page.getByRole('button', { name: 'Continue' }).click();
    await done;
    expect(await exchange(page, pkce)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });

    // Remembered: a new session needs the password only.
    await endSession(page);
    await authorize(page, codeRequest());
    await password(page);
    await landed(page);

    // The phone is lost; the administrator resets the factors. This browser no longer skips the step (and,
    // with no factor left, the person enrolls again).
    expect((await api('DELETE', `/users/${encodeURIComponent(userId)}/authentication-methods`)).status).toBe(204);
    await endSession(page);
    await authorize(page, codeRequest());
    await password(page);
    await heading(page, 'Secure your account');
    expect((await page.context().cookies(test.url)).some((c) => c.name === REMEMBER_COOKIE)).toBe(true);
    await page.close();
  });

  it('offers the checkbox as the Guardian settings say (GET/PUT /api/v2/guardian/settings), in the reference shape and ranges', async () => {
    expect((await api('GET', '/guardian/settings')).body).toEqual({
      display_remember_me_checkbox: true,
      remember_me_default_value: false,
      mfa_session_inactivity_timeout: 604_800,
      mfa_session_overall_timeout: 2_592_000,
    });
    const refused = await api('PUT', '/guardian/settings', { mfa_session_overall_timeout: 60 });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect((await api('PUT', '/guardian/settings', { mfa_session_inactivity_timeout: 86_400 * 20, mfa_session_overall_timeout: 86_400 * 10 })).status).toBe(400);
    expect((await api('PUT', '/guardian/settings', { remember_me_default_value: true, mfa_session_overall_timeout: 86_400 * 14 })).body).toMatchObject({
      display_remember_me_checkbox: true,
      remember_me_default_value: true,
      mfa_session_overall_timeout: 1_209_600,
    });

    // Over HTTP: a new user enrolls; the page that ends the step has the box, ticked, for 14 days.
    const who = `settings${Date.now()}@example.com`;
    const { user_id: whoId } = await createUser(test, who, PASSWORD);
    const enrollAndKeep = async () => {
      const http = new TestBrowser();
      const start = await http.follow(test.url, await http.get(`${test.url}/authorize?${new URLSearchParams(codeRequest().query)}`));
      if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
      const login = readForm(await start.text(), test.url);
      const enroll = await (await http.submitExpectingPage(login.action, { ...login.fields, username: who, password: PASSWORD })).text();
      const secret = /data-secret="([A-Z2-7]+)"/.exec(enroll)![1]!;
      const form = readForm(enroll, test.url);
      return (await http.submitExpectingPage(form.action, { ...form.fields, code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) }) })).text();
    };
    let keep = await enrollAndKeep();
    expect(keep).toContain('Save your recovery code');
    expect(keep).toMatch(/<input id="rememberBrowser" name="rememberBrowser" type="checkbox" value="true" checked>/);
    expect(keep).toContain('Remember this browser for 14 days');

    expect((await api('PUT', '/guardian/settings', { display_remember_me_checkbox: false })).status).toBe(200);
    expect((await api('DELETE', `/users/${encodeURIComponent(whoId)}/authentication-methods`)).status).toBe(204);
    keep = await enrollAndKeep();
    expect(keep).toContain('Save your recovery code');
    expect(keep).not.toContain('rememberBrowser');

    // Scopes: reading needs read:guardian_factors, writing update:guardian_factors.
    const readOnly = await managementToken(test, ['read:guardian_factors']);
    expect((await fetch(`${test.url}/api/v2/guardian/settings`, { headers: { authorization: `Bearer ${readOnly}` } })).status).toBe(200);
    const write = await fetch(`${test.url}/api/v2/guardian/settings`, { method: 'PUT', headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' }, body: '{}' });
    expect(write.status).toBe(403);
    expect(await write.json()).toMatchObject({ statusCode: 403, errorCode: 'insufficient_scope' });
    const writeOnly = await managementToken(test, ['update:guardian_factors']);
    expect((await fetch(`${test.url}/api/v2/guardian/settings`, { headers: { authorization: `Bearer ${writeOnly}` } })).status).toBe(403);
  });
});
