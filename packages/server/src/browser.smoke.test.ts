/** Proves the browser fixture: real Chromium loads a page from the real server and runs script in it. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from './test-support/browser.js';
import { startTestServer, type TestServer } from './test-support/server.js';

describe('browser fixture', () => {
  let server: TestServer;
  let browser: BrowserSession;
  /** A stand-in for a customer's web app: a plain page on its own origin. */
  let app: http.Server;
  let appOrigin: string;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    app?.close();
  });

  it('loads discovery in Chromium and fetches the JWKS cross-origin from another origin', async (context) => {
    const page = await openPage(browser, context);
    const response = await page.goto(`${server.url}/.well-known/openid-configuration`);
    expect(response?.status()).toBe(200);
    const document = JSON.parse(await page.locator('body').innerText()) as { issuer: string; jwks_uri: string };
    expect(document.issuer).toBe(server.issuer);

    // From an app on another origin the JWKS must be readable: that is what `Access-Control-Allow-Origin: *`
    // is for, and what browser libraries verifying ID tokens rely on.
    await page.goto(appOrigin);
    const kids = await page.evaluate(async (jwksUri) => {
      const res = await fetch(jwksUri);
      const body = (await res.json()) as { keys: { kid: string }[] };
      return body.keys.map((k) => k.kid);
    }, document.jwks_uri);
    expect(kids.length).toBeGreaterThanOrEqual(2);
  });

  it('renders the demo page under its strict CSP, with its stylesheet applied and no console errors', async (context) => {
    const page = await openPage(browser, context);
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(`${server.url}/demo`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    await expect(page.title()).resolves.toBe('Gatehouse demo');
    // A string, so the browser-side code needs no DOM types in this Node-typed project.
    const radius = await page.evaluate("getComputedStyle(document.querySelector('.card')).borderRadius");
    expect(radius).toBe('14px'); // from style.css: the stylesheet loaded and CSP allowed it
    // The page restores a session silently first; with none, it shows the ways to sign in.
    await page.getByRole('button', { name: 'Log in with the hosted page' }).waitFor();
    expect(problems).toEqual([]);
  });
});
