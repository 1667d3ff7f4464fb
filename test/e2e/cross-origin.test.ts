/**
 * Embedded login in real Chromium: an app page on another origin POSTs /co/authenticate with credentials, as
 * auth0-js `login` does, then follows the ticket to /authorize and lands on its callback with tokens. Then the
 * same with the ticket's cookie missing (as when third-party cookies are blocked): the server's verification
 * page frames the app's cross_origin_loc, which plays auth0-js `crossOriginVerification()`, and /co/verify
 * finishes the login. Both again with the unmodified auth0-js@10 (`login`, `crossOriginVerification`,
 * `parseHash`).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const AUTH0_JS = readFileSync(createRequire(import.meta.url).resolve('auth0-js/dist/auth0.min.js'), 'utf8');
const SDK_PAGE = '<!doctype html><title>sdk app</title><script src="/auth0.min.js"></script><p>app</p>';

/**
 * The app's verification page, as auth0-js `crossOriginVerification()` behaves (protocol 5.4): tell the parent
 * (at the origin in the fragment) it is ready, answer a co_verifier_request with the stored verifier, delete it.
 */
const VERIFY_PAGE = `<!doctype html><title>co verify</title><script>
var origin = decodeURIComponent((location.hash.match(/origin=([^&]*)/) || [])[1] || '');
window.addEventListener('message', function (event) {
  if (!event.data || event.data.type !== 'co_verifier_request') return;
  var key = 'co/verifier/' + encodeURIComponent(event.origin) + '/' + encodeURIComponent(event.data.request.id);
  var verifier = localStorage.getItem(key) || '';
  localStorage.removeItem(key);
  event.source.postMessage({ type: 'co_verifier_response', response: { verifier: verifier } }, event.origin);
});
window.parent.postMessage({ type: 'ready' }, origin);
</script>`;

interface LoginInput {
  server: string;
  clientId: string;
  callback: string;
  credentials: 'include' | 'omit';
}

describe('embedded login in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;
  let sdkApp: TestApp;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    const serverOrigin = new URL(server.url).origin;
    appServer = http.createServer((req, res) => {
      if (req.url === '/auth0.min.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(AUTH0_JS);
      // The unmodified SDK's verification page: all it does is call crossOriginVerification().
      if (req.url === '/sdk-verify.js') {
        return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(`new auth0.WebAuth({ domain: ${JSON.stringify(serverOrigin)}, clientID: 'any' }).crossOriginVerification();`);
      }
      if (req.url?.startsWith('/sdk-co-verify')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script src="/auth0.min.js"></script><script src="/sdk-verify.js"></script>');
      if (req.url?.startsWith('/sdk')) return void res.writeHead(200, { 'content-type': 'text/html' }).end(SDK_PAGE);
      const body = req.url?.startsWith('/co-verify') ? VERIFY_PAGE : '<!doctype html><title>app</title><p>app</p>';
      res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, {
      callbacks: [`${appOrigin}/callback`],
      web_origins: [appOrigin],
      cross_origin_authentication: true,
      cross_origin_loc: `${appOrigin}/co-verify`,
    });
    sdkApp = await createApp(server, {
      callbacks: [`${appOrigin}/sdk/callback`],
      web_origins: [appOrigin],
      cross_origin_authentication: true,
      cross_origin_loc: `${appOrigin}/sdk-co-verify`,
    });
    await createUser(server, 'lin@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    appServer?.close();
  });

  /**
   * What auth0-js `login` does on the app page: the credentialed XHR, the verifier kept in localStorage under the
   * SDK's key, then the navigation to /authorize with the ticket. Resolves to the /co/authenticate status.
   */
  function embeddedLogin(input: LoginInput): Promise<number> {
    return (async ({ server, clientId, callback, credentials }: LoginInput) => {
      const response = await fetch(`${server}/co/authenticate`, {
        method: 'POST',
        credentials,
        headers: { 'content-type': 'application/json', 'auth0-client': btoa('{"name":"auth0.js","version":"10.2.1"}') },
        body: JSON.stringify({
          client_id: clientId,
          username: 'lin@example.com',
          password: 'correct horse battery staple 9',
          realm: 'Username-Password-Authentication',
          credential_type: 'http://auth0.com/oauth/grant-type/password-realm',
        }),
      });
      if (response.status !== 200) return response.status;
      const ticket = (await response.json()) as { login_ticket: string; co_verifier: string; co_id: string };
      localStorage.setItem(`co/verifier/${encodeURIComponent(server)}/${encodeURIComponent(ticket.co_id)}`, ticket.co_verifier);
      const query = new URLSearchParams({
        client_id: clientId,
        response_type: 'token id_token',
        redirect_uri: callback,
        realm: 'Username-Password-Authentication',
        scope: 'openid profile email',
        state: 'embedded-1',
        nonce: 'nonce-embedded',
        login_ticket: ticket.login_ticket,
      });
      setTimeout(() => location.assign(`${server}/authorize?${query}`), 0);
      return response.status;
    })(input);
  }

  function loginInput(credentials: LoginInput['credentials']): LoginInput {
    return { server: new URL(server.url).origin, clientId: app.client_id, callback: `${appOrigin}/callback`, credentials };
  }

  function expectTokens(url: string): void {
    const landed = new URL(url);
    expect(landed.origin + landed.pathname).toBe(`${appOrigin}/callback`);
    const params = new URLSearchParams(landed.hash.slice(1));
    expect(params.get('error')).toBeNull();
    expect(params.get('state')).toBe('embedded-1');
    expect(params.get('access_token')).toBeTruthy();
    const claims = JSON.parse(Buffer.from(params.get('id_token')!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ nonce: 'nonce-embedded', aud: app.client_id, email: 'lin@example.com' });
  }

  it('logs in with /co/authenticate (credentials included) and lands on the callback with tokens', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/`);
    const landing = page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback');
    const status = await page.evaluate(embeddedLogin, loginInput('include'));
    expect(status).toBe(200);
    await landing;
    expectTokens(page.url());
    // The ticket's cookie made the verification page unnecessary: the verifier is still unread.
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('co/verifier/')).length)).toBe(1);
    await page.close();
  });

  it('without the ticket cookie, verifies through the app’s cross_origin_loc page and /co/verify', async (context) => {
    await browser.context.clearCookies();
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/`);
    await page.evaluate(() => localStorage.clear());
    const verified = page.waitForRequest((request) => request.url().endsWith('/co/verify') && request.method() === 'POST');
    const landing = page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback');
    const status = await page.evaluate(embeddedLogin, loginInput('omit'));
    expect(status).toBe(200);
    const post = await verified;
    expect(new URLSearchParams(post.postData() ?? '').get('verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await landing;
    expectTokens(page.url());
    // The verification page consumed the stored verifier, as auth0-js does.
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('co/verifier/')).length)).toBe(0);
    await page.close();
  });

  describe('with the unmodified auth0-js@10', () => {
    interface SdkSetup {
      domain: string;
      issuer: string;
      clientID: string;
      redirectUri: string;
    }
    type Outcome = { error: unknown; result: unknown };
    type SdkWindow = {
      auth0: { WebAuth: new (options: unknown) => Record<string, (options: unknown, callback: (error: unknown, result: unknown) => void) => void> };
      continueLogin?: () => void;
      location: { hash: string };
    };

    function sdkSetup(): SdkSetup {
      return { domain: new URL(server.url).origin, issuer: server.issuer, clientID: sdkApp.client_id, redirectUri: `${appOrigin}/sdk/callback` };
    }

    /**
     * `webAuth.login()`: resolves with its callback's error (it calls back only on failure), or 'redirecting' when
     * its onRedirecting hook runs. With `hold`, the navigation waits for `window.continueLogin()`.
     */
    function sdkLogin(page: Page, password: string, hold: boolean): Promise<Outcome | 'redirecting'> {
      return page.evaluate(
        ({ sdk, password, hold }) =>
          new Promise<Outcome | 'redirecting'>((resolve) => {
            const w = globalThis as unknown as SdkWindow;
            const webAuth = new w.auth0.WebAuth({ domain: sdk.domain, clientID: sdk.clientID, redirectUri: sdk.redirectUri, responseType: 'token id_token', scope: 'openid profile email', overrides: { __token_issuer: sdk.issuer } });
            const onRedirecting = (done: () => void) => {
              resolve('redirecting');
              if (hold) w.continueLogin = done;
              else setTimeout(done, 50);
            };
            webAuth.login!({ realm: 'Username-Password-Authentication', username: 'lin@example.com', password, onRedirecting }, (error, result) =>
              resolve({ error: error ? JSON.parse(JSON.stringify(error)) : null, result: result ?? null }),
            );
          }),
        { sdk: sdkSetup(), password, hold },
      );
    }

    /** On the callback page: auth0-js validates the fragment (JWKS signature, iss, aud, nonce and state). */
    function parseHash(page: Page): Promise<Outcome> {
      return page.evaluate(
        (sdk) =>
          new Promise<Outcome>((resolve) => {
            const w = globalThis as unknown as SdkWindow;
            const webAuth = new w.auth0.WebAuth({ domain: sdk.domain, clientID: sdk.clientID, redirectUri: sdk.redirectUri, responseType: 'token id_token', overrides: { __token_issuer: sdk.issuer } });
            webAuth.parseHash!({ hash: w.location.hash }, (error, result) => resolve({ error: error ? JSON.parse(JSON.stringify(error)) : null, result: result ?? null }));
          }),
        sdkSetup(),
      );
    }

    async function expectSdkTokens(page: Page): Promise<void> {
      const parsed = await parseHash(page);
      expect(parsed.error).toBeNull();
      expect(parsed.result).toMatchObject({ accessToken: expect.any(String), idTokenPayload: { email: 'lin@example.com', aud: sdkApp.client_id } });
    }

    it('login() reports a wrong password as access_denied, then logs in; parseHash accepts the tokens', async (context) => {
      const page = await openPage(browser, context);
      await page.goto(`${appOrigin}/sdk`);
      const denied = await sdkLogin(page, 'not the password', false);
      expect(denied).toMatchObject({ error: { code: 'access_denied', description: 'Wrong email or password.', error: 'access_denied' } });
      const landing = page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/sdk/callback');
      expect(await sdkLogin(page, PASSWORD, false)).toBe('redirecting');
      await landing;
      await expectSdkTokens(page);
      await page.close();
    });

    it('with the ticket cookie lost, the server page and crossOriginVerification() finish the login', async (context) => {
      await browser.context.clearCookies();
      const page = await openPage(browser, context);
      await page.goto(`${appOrigin}/sdk`);
      expect(await sdkLogin(page, PASSWORD, true)).toBe('redirecting');
      // As if the browser had refused the cookie of the cross-site /co/authenticate response.
      expect((await browser.context.cookies()).some((c) => c.name === 'gh_co')).toBe(true);
      await browser.context.clearCookies({ name: 'gh_co' });
      const verified = page.waitForRequest((request) => request.url().endsWith('/co/verify') && request.method() === 'POST');
      const landing = page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/sdk/callback');
      void page.evaluate(() => (globalThis as unknown as SdkWindow).continueLogin!()).catch(() => undefined);
      expect(new URLSearchParams((await verified).postData() ?? '').get('verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await landing;
      await expectSdkTokens(page);
      await page.close();
    });
  });
});
