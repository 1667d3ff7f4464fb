/**
 * Real Chromium against the real server: logging in through the hosted page lands on the app's redirect URI
 * with a code; silent authentication through a hidden web_message iframe answers login_required without a
 * session and tokens with one, posted to the app's origin only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const SCREENS = '/tmp/screens';

/** The customer's single-page app: a callback page, and a page that runs silent authentication in an iframe. */
const SILENT_PAGE = `<!doctype html><title>app</title><script>
window.result = new Promise((resolve) => {
  window.addEventListener('message', (event) => {
    if (event.data && event.data.type === 'authorization_response') resolve({ origin: event.origin, response: event.data.response });
  });
});
const frame = document.createElement('iframe');
frame.style.display = 'none';
frame.src = new URLSearchParams(location.search).get('authorize');
document.documentElement.appendChild(frame);
</script>`;

describe('sign-in in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    appServer = http.createServer((req, res) => {
      const body = req.url?.startsWith('/silent') ? SILENT_PAGE : '<!doctype html><title>callback</title><p>signed in</p>';
      res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    // Same host name as the server, another port: same-site, as an app and its identity service on one domain.
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, { callbacks: [`${appOrigin}/callback`], web_origins: [appOrigin], allowed_logout_urls: [`${appOrigin}/`] });
    await createUser(server, 'lin@example.com', PASSWORD);
    mkdirSync(SCREENS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    appServer?.close();
  });

  function authorizeUrl(extra: Record<string, string>): string {
    return `${server.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: `${appOrigin}/callback`, ...extra })}`;
  }

  it('logs in through the hosted page and lands on the redirect URI with a code', async (context) => {
    const page = await openPage(browser, context);
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    await page.goto(authorizeUrl({ response_type: 'code', scope: 'openid profile email', state: 'st~1.x', code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(new URL(page.url()).pathname).toBe('/u/login');
    await page.screenshot({ path: `${SCREENS}/e2e-login.png` });
    await page.getByLabel('Email address').fill('lin@example.com');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Wrong email or password.').waitFor();
    await page.screenshot({ path: `${SCREENS}/e2e-login-error.png` });
    // Post/redirect/get: the refused attempt is a page of its own URL with the address kept and no password,
    // a reload shows it again without sending the form, and Back returns to the form as it was first shown.
    expect(new URL(page.url()).searchParams.get('retry')).toBeTruthy();
    expect(await page.getByLabel('Email address').inputValue()).toBe('lin@example.com');
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url());
    });
    await page.reload();
    await page.getByText('Wrong email or password.').waitFor();
    expect(posts).toEqual([]);
    await page.goBack();
    await page.waitForURL((url) => url.pathname === '/u/login' && !url.searchParams.has('retry'));
    expect(await page.getByText('Wrong email or password.').count()).toBe(0);
    await page.goForward();
    await page.getByText('Wrong email or password.').waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === appOrigin);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe('/callback');
    expect(landed.searchParams.get('code')).toMatch(/.{20,}/);
    expect(landed.searchParams.get('state')).toBe('st~1.x');
    expect(landed.searchParams.get('iss')).toBe(server.issuer);
    await page.close();
  });

  it('checks the session silently with prompt=none in a web_message iframe, before and after logging in', async (context) => {
    const fresh = await launchBrowser();
    try {
      const page = await openPage(fresh, context);
      const silent = authorizeUrl({ response_type: 'token id_token', response_mode: 'web_message', prompt: 'none', scope: 'openid', nonce: 'nonce-1', state: 'silent-1' });
      await page.goto(`${appOrigin}/silent?${new URLSearchParams({ authorize: silent })}`);
      const before = (await page.evaluate('window.result')) as { origin: string; response: Record<string, string> };
      expect(before.origin).toBe(new URL(server.url).origin);
      expect(before.response).toMatchObject({ error: 'login_required', state: 'silent-1', iss: server.issuer });

      await page.goto(authorizeUrl({ response_type: 'code', code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'), code_challenge_method: 'S256' }));
      await page.getByLabel('Email address').fill('lin@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((url) => url.origin === appOrigin);

      const again = authorizeUrl({ response_type: 'token id_token', response_mode: 'web_message', prompt: 'none', scope: 'openid', nonce: 'nonce-2', state: 'silent-2' });
      await page.goto(`${appOrigin}/silent?${new URLSearchParams({ authorize: again })}`);
      const after = (await page.evaluate('window.result')) as { response: Record<string, string> };
      expect(after.response.state).toBe('silent-2');
      expect(after.response.error).toBeUndefined();
      expect(after.response.access_token).toBeTruthy();
      const claims = JSON.parse(Buffer.from(after.response.id_token!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
      expect(claims.nonce).toBe('nonce-2');
    } finally {
      await fresh.close();
    }
  });
});
