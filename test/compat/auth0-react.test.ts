/**
 * @auth0/auth0-react v2 (unmodified, bundled with its React peer by esbuild) in a minimal app in Chromium
 * against the real server: login through the hosted page and back, the user from the ID token, an access token
 * for an API obtained silently (getAccessTokenSilently: an authorize request with prompt=none in a hidden
 * iframe, then a cross-origin token request), and logout back to the app, which ends the server's session. Chosen over nextjs-auth0 v4: it installs here without a Next.js build and server, and
 * it is the reference's SDK for single-page React apps, which is how most teams use React with it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, management, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const API = 'https://orders.example/react-api';

describe('@auth0/auth0-react v2 against the server', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;
  let bundle: string;

  beforeAll(async () => {
    const result = await build({
      entryPoints: [path.join(path.dirname(fileURLToPath(import.meta.url)), 'auth0-react-app/app.js')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    bundle = result.outputFiles[0]!.text;
    server = await startTestServer();
    browser = await launchBrowser();
    appServer = http.createServer((req, res) => {
      const pathname = new URL(req.url ?? '/', 'http://x').pathname;
      if (pathname === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      const config = { domain: server.url, clientId: app.client_id, origin: appOrigin, audience: API };
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><meta charset="utf-8"><title>react app</title><div id="root"></div><script>window.APP_CONFIG = ${JSON.stringify(config)}</script><script type="module" src="/app.js"></script>`);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, { callbacks: [appOrigin], web_origins: [appOrigin], allowed_origins: [appOrigin], allowed_logout_urls: [appOrigin] });
    expect((await management(server, 'POST', '/resource-servers', { identifier: API, name: 'Orders (React)', scopes: [{ value: 'read:orders' }] })).status).toBe(201);
    await createUser(server, 'rae@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    appServer?.close();
  });

  it('logs in through the hosted page, gets an API token, and logs out', async (context) => {
    const tab = await openPage(browser, context);
    await tab.goto(`${appOrigin}/`);
    await tab.getByRole('button', { name: 'Log in' }).click();
    await tab.waitForURL((url) => url.pathname === '/u/login');
    await tab.getByLabel('Email address').fill('rae@example.com');
    await tab.getByLabel('Password').fill(PASSWORD);
    await tab.getByRole('button', { name: 'Continue' }).click();
    await tab.waitForURL((url) => url.origin === appOrigin);
    await expect.poll(() => tab.locator('#state').innerText()).toBe('signed in');
    expect(JSON.parse(await tab.locator('#user').innerText())).toMatchObject({ email: 'rae@example.com' });

    await tab.getByRole('button', { name: 'Get token' }).click();
    await expect.poll(() => tab.locator('#token').innerText()).not.toBe('');
    const { payload } = await jwtVerify(await tab.locator('#token').innerText(), createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), {
      issuer: server.issuer,
      audience: API,
    });
    expect(payload.scope).toContain('read:orders');

    await tab.getByRole('button', { name: 'Log out' }).click();
    await tab.waitForURL((url) => url.origin === appOrigin);
    await expect.poll(() => tab.locator('#state').innerText()).toBe('signed out');
    // The server's session is gone too: logging in again shows the login page.
    await tab.getByRole('button', { name: 'Log in' }).click();
    await tab.waitForURL((url) => url.pathname === '/u/login');
  });
});
