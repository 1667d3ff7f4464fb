/**
 * The unmodified auth0-js@10 in real Chromium, on an app page of another origin: `passwordlessStart` (CORS
 * XHR) sends an SMS code (read from the dev sink) and `passwordlessVerify` posts /passwordless/verify, then
 * navigates to /passwordless/verify_redirect; `passwordlessStart` with `send: 'link'` emails a magic link (read
 * from a real SMTP server). Each login lands on the app's callback, where auth0-js `parseHash` validates the
 * ID token (signature from the JWKS, issuer, audience, nonce and state from its own transaction store).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devSmsMessages } from '../../messaging/sms.js';
import { launchBrowser, openPage, type BrowserSession } from '../../test-support/browser.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, type TestApp } from '../../test-support/sign-in.js';
import { codeIn, createPasswordlessConnection, linkIn, startSmtp, type TestSmtp } from './testing.js';

const AUTH0_JS = readFileSync(createRequire(import.meta.url).resolve('auth0-js/dist/auth0.min.js'), 'utf8');
const PAGE = '<!doctype html><title>app</title><script src="/auth0.min.js"></script><p>app</p>';

interface SdkSetup {
  domain: string;
  issuer: string;
  clientID: string;
  redirectUri: string;
}

type Outcome = { error: unknown; result: unknown };

describe('passwordless with auth0-js@10 in Chromium', () => {
  let server: TestServer;
  let smtp: TestSmtp;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;
  let sms: { name: string };
  let email: { name: string };

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer({ env: { GATEHOUSE_SMTP_URL: smtp.url } });
    browser = await launchBrowser();
    appServer = http.createServer((req, res) => {
      if (req.url === '/auth0.min.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(AUTH0_JS);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, { callbacks: [`${appOrigin}/callback`], web_origins: [appOrigin], allowed_origins: [appOrigin] });
    sms = await createPasswordlessConnection(server, 'sms', [app.client_id]);
    email = await createPasswordlessConnection(server, 'email', [app.client_id]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
    appServer?.close();
  });

  function setup(): SdkSetup {
    return { domain: new URL(server.url).origin, issuer: server.issuer, clientID: app.client_id, redirectUri: `${appOrigin}/callback` };
  }

  /** Runs one auth0-js WebAuth call on the page and resolves with its callback's (error, result). */
  function callSdk(page: Page, method: 'passwordlessStart' | 'passwordlessVerify', options: Record<string, unknown>): Promise<Outcome> {
    return page.evaluate(
      ({ sdk, method, options }) =>
        new Promise<Outcome>((resolve) => {
          const auth0 = (globalThis as unknown as { auth0: { WebAuth: new (o: unknown) => Record<string, (o: unknown, cb: (e: unknown, r: unknown) => void) => void> } }).auth0;
          const webAuth = new auth0.WebAuth({
            domain: sdk.domain,
            clientID: sdk.clientID,
            redirectUri: sdk.redirectUri,
            responseType: 'token id_token',
            scope: 'openid email',
            overrides: { __token_issuer: sdk.issuer },
          });
          webAuth[method]!(options, (error, result) => resolve({ error: error ? JSON.parse(JSON.stringify(error)) : null, result: result ?? null }));
        }),
      { sdk: setup(), method, options },
    );
  }

  /** On the callback page: auth0-js validates the fragment (JWKS signature, iss, aud, nonce, state). */
  function parseHash(page: Page): Promise<Outcome> {
    return page.evaluate(
      (sdk) =>
        new Promise<Outcome>((resolve) => {
          const auth0 = (globalThis as unknown as { auth0: { WebAuth: new (o: unknown) => { parseHash(o: unknown, cb: (e: unknown, r: unknown) => void): void } } }).auth0;
          const webAuth = new auth0.WebAuth({ domain: sdk.domain, clientID: sdk.clientID, redirectUri: sdk.redirectUri, responseType: 'token id_token', overrides: { __token_issuer: sdk.issuer } });
          webAuth.parseHash({ hash: (globalThis as unknown as { location: { hash: string } }).location.hash }, (error, result) => resolve({ error: error ? JSON.parse(JSON.stringify(error)) : null, result: result ?? null }));
        }),
      setup(),
    );
  }

  it('passwordlessStart sends an SMS code, passwordlessVerify signs in, parseHash accepts the tokens', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/`);
    const phoneNumber = '+15550177001';
    const started = await callSdk(page, 'passwordlessStart', { connection: sms.name, send: 'code', phoneNumber });
    expect(started.error).toBeNull();
    // auth0-js camelCases the JSON answer (`_id` becomes `Id`).
    expect(started.result).toMatchObject({ Id: expect.any(String), phoneNumber, phoneVerified: false });
    const code = codeIn(devSmsMessages(server.server.prepared.bootstrap!.tenant.id).filter((m) => m.to === phoneNumber).at(-1)!.body);

    const landing = page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback');
    // The SDK navigates away on success, so its callback never reports: only the landing counts.
    void callSdk(page, 'passwordlessVerify', { connection: sms.name, phoneNumber, verificationCode: code }).catch(() => undefined);
    await landing;
    const parsed = await parseHash(page);
    expect(parsed.error).toBeNull();
    expect(parsed.result).toMatchObject({ accessToken: expect.any(String), idTokenPayload: { sub: expect.stringMatching(/^sms\|/), aud: app.client_id } });
    await page.close();
  });

  it('passwordlessVerify reports a wrong code as the SDK error 403 invalid_grant', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/`);
    const phoneNumber = '+15550177002';
    expect((await callSdk(page, 'passwordlessStart', { connection: sms.name, send: 'code', phoneNumber })).error).toBeNull();
    const code = codeIn(devSmsMessages(server.server.prepared.bootstrap!.tenant.id).filter((m) => m.to === phoneNumber).at(-1)!.body);
    const wrong = code === '000000' ? '000001' : '000000';
    const verified = await callSdk(page, 'passwordlessVerify', { connection: sms.name, phoneNumber, verificationCode: wrong });
    expect(verified.error).toMatchObject({ statusCode: 403, code: 'invalid_grant', description: 'Wrong phone number or verification code.' });
    await page.close();
  });

  it("passwordlessStart with send 'link' emails a magic link that lands on the callback with valid tokens", async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/`);
    const address = 'magic@example.com';
    const started = await callSdk(page, 'passwordlessStart', { connection: email.name, send: 'link', email: address });
    expect(started.error).toBeNull();
    expect(started.result).toMatchObject({ Id: expect.any(String), email: address, emailVerified: false });
    const link = linkIn((await smtp.waitFor(address)).text);
    await page.goto(link);
    await page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback');
    const parsed = await parseHash(page);
    expect(parsed.error).toBeNull();
    expect(parsed.result).toMatchObject({ idTokenPayload: { sub: expect.stringMatching(/^email\|/), email: address } });
    await page.close();
  });
});
