/**
 * The unmodified auth0-js@10 in real Chromium, on an app page of another origin: `signup` and `changePassword`
 * are CORS XHRs (preflighted for Content-Type and Auth0-Client), so this proves the preflight and the answers'
 * shapes as the SDK reads them: the created user, `user_exists`, a PasswordStrengthError with its policy, the
 * plain-text change_password sentence, and a page origin no client allows being stopped by the browser.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../test-support/browser.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, management, type TestApp } from '../../test-support/sign-in.js';
import { startTestSmtp, type TestSmtp } from '../../test-support/smtp.js';

const AUTH0_JS = readFileSync(createRequire(import.meta.url).resolve('auth0-js/dist/auth0.min.js'), 'utf8');
const PAGE = '<!doctype html><title>app</title><script src="/auth0.min.js"></script><p>app</p>';
const DB = 'Username-Password-Authentication';

type Outcome = { error: Record<string, unknown> | null; result: unknown };

describe('database connections with auth0-js@10 in Chromium', () => {
  let server: TestServer;
  let smtp: TestSmtp;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let strangerOrigin: string;
  let app: TestApp;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    server = await startTestServer({ env: { GATEHOUSE_SMTP_URL: smtp.url } });
    browser = await launchBrowser();
    appServer = http.createServer((req, res) => {
      if (req.url === '/auth0.min.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(AUTH0_JS);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    const port = (appServer.address() as AddressInfo).port;
    // Two origins for one page server: `localhost` is the app's, `127.0.0.1` no client allows.
    appOrigin = `http://${new URL(server.url).hostname}:${port}`;
    strangerOrigin = `http://127.0.0.1:${port}`;
    app = await createApp(server, { callbacks: [`${appOrigin}/callback`], web_origins: [appOrigin], allowed_origins: [appOrigin] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
    appServer?.close();
  });

  function call(page: Page, method: 'signup' | 'changePassword', options: Record<string, unknown>): Promise<Outcome> {
    return page.evaluate(
      ({ sdk, method, options }) =>
        new Promise<Outcome>((resolve) => {
          const auth0 = (globalThis as unknown as { auth0: { WebAuth: new (o: unknown) => Record<string, (o: unknown, cb: (e: unknown, r: unknown) => void) => void> } }).auth0;
          const webAuth = new auth0.WebAuth({ domain: sdk.domain, clientID: sdk.clientID, redirectUri: sdk.redirectUri, responseType: 'token id_token' });
          webAuth[method]!(options, (error, result) =>
            resolve({ error: error ? (JSON.parse(JSON.stringify(error)) as Record<string, unknown>) : null, result: result ?? null }),
          );
        }),
      { sdk: { domain: new URL(server.url).origin, clientID: app.client_id, redirectUri: `${appOrigin}/callback` }, method, options },
    );
  }

  it('signs a user up, reports user_exists and password policy errors as the SDK expects, and sends the reset email', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/`);

    const created = await call(page, 'signup', { connection: DB, email: ' sdk.user@example.com ', password: 'Sdk-Password-77', userMetadata: { plan: 'pro' } });
    expect(created.error).toBeNull();
    // auth0-js camel-cases the body: `_id` arrives as `Id`, `email_verified` as `emailVerified`.
    expect(created.result).toMatchObject({ Id: expect.stringMatching(/^[0-9a-f]{24}$/), email: 'sdk.user@example.com', emailVerified: false });
    await smtp.waitFor((e) => e.to.includes('sdk.user@example.com') && e.subject.startsWith('Verify'));

    const exists = await call(page, 'signup', { connection: DB, email: 'sdk.user@example.com', password: 'Sdk-Password-77' });
    expect(exists.error).toMatchObject({ statusCode: 400, code: 'user_exists', name: 'BadRequestError', description: 'The user already exists.' });

    const weak = await call(page, 'signup', { connection: DB, email: 'weak.sdk@example.com', password: 'zq7' });
    expect(weak.error).toMatchObject({ statusCode: 400, code: 'invalid_password', name: 'PasswordStrengthError' });
    expect(weak.error?.policy).toContain('At least 8 characters in length');
    expect(weak.error?.description).toMatchObject({ verified: false });

    const reset = await call(page, 'changePassword', { connection: DB, email: 'sdk.user@example.com' });
    expect(reset).toEqual({ error: null, result: "We've just sent you an email to reset your password." });
    await smtp.waitFor((e) => e.to.includes('sdk.user@example.com') && e.subject.startsWith('Reset'));
  });

  it('is stopped by the browser on a page origin no client allows', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${strangerOrigin}/`);
    const refused = await call(page, 'signup', { connection: DB, email: 'stranger@example.com', password: 'Sdk-Password-77' });
    expect(refused.error).not.toBeNull();
    // The preflight got no Access-Control-Allow-Origin: the XHR never ran, so there is no HTTP status to read.
    expect(refused.error?.statusCode).toBeUndefined();
    expect(refused.error?.code).not.toBe('user_exists');
    expect(await (await management(server, 'GET', '/users-by-email?email=stranger@example.com')).json()).toEqual([]);
  });
});
