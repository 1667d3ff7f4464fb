/**
 * The unmodified auth0-js@10 (its published dist/auth0.min.js) in Chromium against the real server, from an
 * app on another origin, pointed at it the way its own e2e page does: `domain` with a scheme and
 * `overrides.__token_issuer`. Redirect login with parseHash, checkSession, userInfo, logout.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const AUTH0_JS = readFileSync(createRequire(import.meta.url).resolve('auth0-js/dist/auth0.min.js'), 'utf8');

interface Outcome {
  err: Record<string, unknown> | null;
  res: Record<string, unknown> | null;
}

describe('auth0-js@10 against the server', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;

  const page = (body: string) =>
    `<!doctype html><meta charset="utf-8"><title>app</title><script src="/auth0.min.js"></script><script>window.webAuth = new auth0.WebAuth(${JSON.stringify({
      domain: server.url,
      clientID: app.client_id,
      redirectUri: `${appOrigin}/callback.html`,
      responseType: 'token id_token',
      scope: 'openid profile email',
      overrides: { __token_issuer: server.issuer },
    })});</script>${body}`;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    appServer = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/auth0.min.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(AUTH0_JS);
      const body = path === '/callback.html' ? page('<script>window.result = new Promise((r) => webAuth.parseHash((err, res) => r({ err, res })));</script>') : page('<p>app</p>');
      res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, { callbacks: [`${appOrigin}/callback.html`], web_origins: [appOrigin], allowed_origins: [appOrigin], allowed_logout_urls: [`${appOrigin}/app.html`], cross_origin_authentication: true });
    await createUser(server, 'ivy@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    appServer?.close();
  });

  async function hostedLogin(tab: Page): Promise<void> {
    await tab.waitForURL((url) => url.pathname === '/u/login');
    await tab.getByLabel('Email address').fill('ivy@example.com');
    await tab.getByLabel('Password').fill(PASSWORD);
    await tab.getByRole('button', { name: 'Continue' }).click();
  }

  it('authorize → hosted login → parseHash validates the ID token; userInfo; checkSession; logout', async (context) => {
    const tab = await openPage(browser, context);
    await tab.goto(`${appOrigin}/app.html`);
    // Navigation starts inside the call: run it after evaluate has returned.
    await tab.evaluate(() => void setTimeout(() => (window as unknown as { webAuth: { authorize(o: unknown): void } }).webAuth.authorize({})));
    await hostedLogin(tab);
    await tab.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback.html');
    const login = (await tab.evaluate('window.result')) as Outcome;
    expect(login.err).toBeNull();
    expect((login.res!.idTokenPayload as { email: string }).email).toBe('ivy@example.com');

    const info = (await tab.evaluate(
      (token) => new Promise<unknown>((r) => (window as unknown as { webAuth: { client: { userInfo(t: string, cb: (e: unknown, u: unknown) => void): void } } }).webAuth.client.userInfo(token, (err, res) => r({ err, res }))),
      login.res!.accessToken as string,
    )) as Outcome;
    expect(info.err).toBeNull();
    expect(info.res).toMatchObject({ email: 'ivy@example.com' });

    await tab.goto(`${appOrigin}/app.html`);
    const silent = (await tab.evaluate(
      () => new Promise<unknown>((r) => (window as unknown as { webAuth: { checkSession(o: unknown, cb: (e: unknown, res: unknown) => void): void } }).webAuth.checkSession({}, (err, res) => r({ err, res }))),
    )) as Outcome;
    expect(silent.err).toBeNull();
    expect((silent.res!.idTokenPayload as { email: string }).email).toBe('ivy@example.com');

    await tab.goto(`${appOrigin}/callback.html`);
    await tab.evaluate((returnTo) => void setTimeout(() => (window as unknown as { webAuth: { logout(o: unknown): void } }).webAuth.logout({ returnTo })), `${appOrigin}/app.html`);
    await tab.waitForURL(`${appOrigin}/app.html`);
    const after = (await tab.evaluate(
      () => new Promise<unknown>((r) => (window as unknown as { webAuth: { checkSession(o: unknown, cb: (e: unknown, res: unknown) => void): void } }).webAuth.checkSession({}, (err, res) => r({ err, res }))),
    )) as Outcome;
    expect(after.err).toMatchObject({ error: 'login_required' });
  });
});
