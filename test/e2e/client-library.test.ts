/**
 * The browser library svc v10 in real Chromium against the real server, loaded from the server's /lib/svc.js
 * by an app on another origin: authorize + parseHash, checkSession (web_message), popup.authorize with a real
 * popup window, userInfo, logout, and svc.Management with the rule-7 token; and the error cases: wrong state,
 * wrong nonce, HS256, expired, clock skew with and without leeway, login_required, origin mismatch, closed popup.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';

interface Outcome {
  err: Record<string, unknown> | null;
  res: Record<string, unknown> | null;
}

describe('svc v10 in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;
  /** Started by the crossOriginVerification test; closed after the browser, whose keep-alive connections would hold it open. */
  let parentServer: TestServer | undefined;

  const options = () => ({ domain: server.url, clientID: app.client_id, redirectUri: `${appOrigin}/callback.html`, responseType: 'token id_token' });

  function appPage(body: string): string {
    return `<!doctype html><meta charset="utf-8"><title>app</title><script src="${server.url}/lib/svc.js"></script><script>window.webAuth = new svc.WebAuth(${JSON.stringify(options())});</script>${body}`;
  }

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    appServer = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body =
        path === '/callback.html'
          ? appPage(`<script>if (window.opener) webAuth.popup.callback(); else window.result = new Promise((r) => webAuth.parseHash((err, res) => r({ err, res })));</script>`)
          : path === '/verify.html'
            ? appPage('<script>webAuth.crossOriginVerification();</script>')
            : appPage('<p>app</p>');
      res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, { callbacks: [`${appOrigin}/callback.html`], web_origins: [appOrigin], allowed_origins: [appOrigin], allowed_logout_urls: [`${appOrigin}/app.html`], cross_origin_authentication: true });
    await createUser(server, 'mae@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await parentServer?.close();
    await server?.close();
    appServer?.close();
  });

  async function logInOnHostedPage(page: Page): Promise<void> {
    await page.getByLabel('Email address').fill('mae@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  /** An ID token signed with the tenant's real key, with the claims given (to exercise validation failures). */
  async function idToken(claims: Record<string, unknown>, alg: 'RS256' | 'HS256' = 'RS256'): Promise<string> {
    const { tenant } = server.server.prepared.bootstrap!;
    const key = await server.server.prepared.keyRing.signingKey(tenant.id);
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ iss: server.issuer, sub: 'auth0|abc', aud: app.client_id, iat: now, exp: now + 600, ...claims });
    if (alg === 'HS256') return jwt.setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('a'.repeat(32)));
    return jwt.setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(key.privateKey);
  }

  it('authorize → hosted login → parseHash with a verified ID token, then userInfo and logout', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/app.html`);
    await page.evaluate(() => (window as unknown as { webAuth: { authorize(o: unknown): void } }).webAuth.authorize({ appState: { returnTo: '/x' } }));
    await page.waitForURL((url) => url.pathname === '/u/login');
    await logInOnHostedPage(page);
    await page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback.html');
    const outcome = (await page.evaluate('window.result')) as Outcome;
    expect(outcome.err).toBeNull();
    expect(outcome.res).toMatchObject({ tokenType: 'Bearer', appState: { returnTo: '/x' } });
    expect((outcome.res!.idTokenPayload as Record<string, unknown>).email).toBe('mae@example.com');

    const user = (await page.evaluate(
      (token) => new Promise<unknown>((r) => (window as unknown as { webAuth: { client: { userInfo(t: string, cb: (e: unknown, u: unknown) => void): void } } }).webAuth.client.userInfo(token, (err, res) => r({ err, res }))),
      outcome.res!.accessToken as string
    )) as Outcome;
    expect(user.err).toBeNull();
    expect(user.res).toMatchObject({ email: 'mae@example.com', sub: (outcome.res!.idTokenPayload as { sub: string }).sub });

    const badUser = (await page.evaluate(
      () => new Promise<unknown>((r) => (window as unknown as { webAuth: { client: { userInfo(t: string, cb: (e: unknown, u: unknown) => void): void } } }).webAuth.client.userInfo('a.b.c', (err, res) => r({ err, res })))
    )) as Outcome;
    expect(badUser.err).toMatchObject({ statusCode: 401, code: 'invalid_token' });

    await page.evaluate((returnTo) => (window as unknown as { webAuth: { logout(o: unknown): void } }).webAuth.logout({ returnTo }), `${appOrigin}/app.html`);
    await page.waitForURL(`${appOrigin}/app.html`);
    await page.close();
  });

  it('checkSession: login_required without a session; tokens with one; origin mismatch refused', async (context) => {
    const fresh = await launchBrowser();
    try {
      const page = await openPage(fresh, context);
      await page.goto(`${appOrigin}/app.html`);
      const check = () =>
        page.evaluate(() => new Promise<unknown>((r) => (window as unknown as { webAuth: { checkSession(o: unknown, cb: (e: unknown, res: unknown) => void): void } }).webAuth.checkSession({}, (err, res) => r({ err, res })))) as Promise<Outcome>;
      const before = await check();
      expect(before.err).toMatchObject({ error: 'login_required', code: 'login_required' });

      const mismatch = (await page.evaluate(
        () => new Promise<unknown>((r) => (window as unknown as { webAuth: { checkSession(o: unknown, cb: (e: unknown, res: unknown) => void): void } }).webAuth.checkSession({ redirectUri: 'https://elsewhere.example/cb' }, (err, res) => r({ err, res })))
      )) as Outcome;
      expect(mismatch.err).toMatchObject({ error: 'origin_mismatch' });

      await page.evaluate(() => (window as unknown as { webAuth: { authorize(o: unknown): void } }).webAuth.authorize({}));
      await page.waitForURL((url) => url.pathname === '/u/login');
      await logInOnHostedPage(page);
      await page.waitForURL((url) => url.origin === appOrigin);
      await page.goto(`${appOrigin}/app.html`);
      const after = await check();
      expect(after.err).toBeNull();
      expect(after.res!.accessToken).toBeTruthy();
      expect((after.res!.idTokenPayload as { email: string }).email).toBe('mae@example.com');
    } finally {
      await fresh.close();
    }
  });

  it('parseHash refuses a wrong state, a wrong nonce, HS256, an expired token and one from the future unless leeway covers it', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/app.html`);
    const parse = (hash: string, opts: Record<string, unknown> = {}, leeway?: number) =>
      page.evaluate(
        ({ hash, opts, leeway, base }) =>
          new Promise<unknown>((r) => {
            const w = window as unknown as { svc: { WebAuth: new (o: unknown) => { parseHash(o: unknown, cb: (e: unknown, res: unknown) => void): void } } };
            new w.svc.WebAuth({ ...base, ...(leeway !== undefined ? { leeway } : {}) }).parseHash({ hash, ...opts }, (err, res) => r({ err, res }));
          }),
        { hash, opts, leeway, base: options() },
      ) as Promise<Outcome>;
    const now = Math.floor(Date.now() / 1000);
    const good = await idToken({ nonce: 'n1' });
    expect((await parse(`#id_token=${good}&access_token=x&state=s1`, { state: 's1', nonce: 'n1' })).err).toBeNull();
    expect((await parse(`#id_token=${good}&access_token=x&state=s1`, { state: 'other', nonce: 'n1' })).err).toMatchObject({ error: 'invalid_token', errorDescription: '`state` does not match.' });
    expect((await parse(`#id_token=${good}&access_token=x&state=s1`, { state: 's1', nonce: 'n2' })).err).toMatchObject({ error: 'invalid_token', errorDescription: expect.stringMatching(/nonce/i) });
    const hs = await idToken({ nonce: 'n1' }, 'HS256');
    expect((await parse(`#id_token=${hs}&access_token=x&state=s1`, { state: 's1', nonce: 'n1' })).err).toMatchObject({ error: 'invalid_token', errorDescription: expect.stringMatching(/HS256/) });
    const expired = await idToken({ nonce: 'n1', iat: now - 7200, exp: now - 3600 });
    expect((await parse(`#id_token=${expired}&access_token=x&state=s1`, { state: 's1', nonce: 'n1' })).err).toMatchObject({ error: 'invalid_token', errorDescription: expect.stringMatching(/Expiration/) });
    const future = await idToken({ nonce: 'n1', iat: now + 120, exp: now + 3600 });
    expect((await parse(`#id_token=${future}&access_token=x&state=s1`, { state: 's1', nonce: 'n1' }, 60)).err).toMatchObject({ error: 'invalid_token', errorDescription: expect.stringMatching(/future/) });
    expect((await parse(`#id_token=${future}&access_token=x&state=s1`, { state: 's1', nonce: 'n1' }, 180)).err).toBeNull();
    const error = await parse('#error=access_denied&error_description=User%20did%20not%20authorize&state=abc');
    expect(error.err).toMatchObject({ error: 'access_denied', errorDescription: 'User did not authorize', state: 'abc' });
    await page.close();
  });

  it('popup.authorize logs in through a real popup window, and reports a closed popup', async (context) => {
    const fresh = await launchBrowser();
    try {
      const page = await openPage(fresh, context);
      await page.goto(`${appOrigin}/app.html`);
      const popupOpened = page.waitForEvent('popup');
      const result = page.evaluate(() => new Promise<unknown>((r) => (window as unknown as { webAuth: { popup: { authorize(o: unknown, cb: (e: unknown, res: unknown) => void): void } } }).webAuth.popup.authorize({}, (err, res) => r({ err, res }))));
      const popup = await popupOpened;
      await popup.waitForURL((url) => url.pathname === '/u/login');
      await logInOnHostedPage(popup);
      const outcome = (await result) as Outcome;
      expect(outcome.err).toBeNull();
      expect((outcome.res!.idTokenPayload as { email: string }).email).toBe('mae@example.com');

      const closedOpened = page.waitForEvent('popup');
      const closedResult = page.evaluate(() => new Promise<unknown>((r) => (window as unknown as { webAuth: { popup: { authorize(o: unknown, cb: (e: unknown, res: unknown) => void): void } } }).webAuth.popup.authorize({ prompt: 'login' }, (err, res) => r({ err, res }))));
      const second = await closedOpened;
      await second.waitForURL((url) => url.pathname === '/u/login');
      await second.close();
      expect(((await closedResult) as Outcome).err).toMatchObject({ original: 'User closed the popup window' });
    } finally {
      await fresh.close();
    }
  });

  it('svc.Management reads and patches the current user with the token of library rule 7', async (context) => {
    const fresh = await launchBrowser();
    try {
      const page = await openPage(fresh, context);
      await page.goto(`${appOrigin}/app.html`);
      const audience = `${server.url}/api/v2/`;
      await page.evaluate((aud) => (window as unknown as { webAuth: { authorize(o: unknown): void } }).webAuth.authorize({ audience: aud, scope: 'openid profile email read:current_user update:current_user_metadata' }), audience);
      await page.waitForURL((url) => url.pathname === '/u/login');
      await logInOnHostedPage(page);
      await page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback.html');
      const login = (await page.evaluate('window.result')) as Outcome;
      expect(login.err).toBeNull();
      const token = login.res!.accessToken as string;
      const sub = (login.res!.idTokenPayload as { sub: string }).sub;
      const outcome = (await page.evaluate(
        ({ domain, token, sub }) =>
          new Promise<unknown>((r) => {
            const m = new (window as unknown as { svc: { Management: new (o: unknown) => { patchUserMetadata(id: string, md: unknown, cb: (e: unknown, u: unknown) => void): void; getUser(id: string, cb: (e: unknown, u: unknown) => void): void } } }).svc.Management({ domain, token });
            m.patchUserMetadata(sub, { theme: 'dark' }, (err) => {
              if (err) return r({ err, res: null });
              m.getUser(sub, (err2, res) => r({ err: err2, res }));
            });
          }),
        { domain: server.url, token, sub }
      )) as Outcome;
      expect(outcome.err).toBeNull();
      expect(outcome.res).toMatchObject({ user_id: sub, user_metadata: { theme: 'dark' } });
    } finally {
      await fresh.close();
    }
  });

  it('signup, changePassword, login errors and buildAuthorizeUrl, in the shapes auth0-js callers read', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/app.html`);
    const call = (method: string, opts: unknown) =>
      page.evaluate(
        ({ method, opts }) =>
          new Promise<unknown>((r) => (window as unknown as { webAuth: Record<string, (o: unknown, cb: (e: unknown, res: unknown) => void) => void> }).webAuth[method]!(opts, (err, res) => r({ err, res }))),
        { method, opts },
      ) as Promise<Outcome>;
    const created = await call('signup', { connection: 'Username-Password-Authentication', email: 'svc-new@example.com', password: PASSWORD, user_metadata: { plan: 'free' } });
    expect(created.err).toBeNull();
    expect(created.res).toMatchObject({ email: 'svc-new@example.com', emailVerified: false });
    expect((await call('signup', { connection: 'Username-Password-Authentication', email: 'svc-new@example.com', password: PASSWORD })).err).toMatchObject({ statusCode: 400, code: 'user_exists' });
    const weak = await call('signup', { connection: 'Username-Password-Authentication', email: 'svc-weak@example.com', password: 'zq7' });
    expect(weak.err).toMatchObject({ statusCode: 400, code: 'invalid_password', name: 'PasswordStrengthError', policy: expect.stringContaining('characters') });
    const reset = await call('changePassword', { connection: 'Username-Password-Authentication', email: 'nobody@example.com' });
    expect(reset.err).toBeNull();
    expect(reset.res).toBe("We've just sent you an email to reset your password.");
    const denied = await call('login', { realm: 'Username-Password-Authentication', email: 'mae@example.com', password: 'wrong' });
    expect(denied.err).toMatchObject({ code: 'access_denied', error: 'access_denied' });
    const url = (await page.evaluate(() =>
      (window as unknown as { webAuth: { client: { buildAuthorizeUrl(o: unknown): string } } }).webAuth.client.buildAuthorizeUrl({ responseType: 'code', state: 'a+b', codeChallenge: 'x', codeChallengeMethod: 'S256' }),
    )) as string;
    const built = new URL(url);
    expect(built.pathname).toBe('/authorize');
    expect(built.searchParams.get('client_id')).toBe(app.client_id);
    expect(built.searchParams.get('state')).toBe('a+b');
    expect(url).toContain('state=a%2Bb');
    expect(built.searchParams.get('code_challenge_method')).toBe('S256');
    await page.close();
  });

  it('crossOriginVerification answers the framing server page with the stored verifier, and only once', async (context) => {
    // A server whose origin serves a bare parent page, as the real fallback page frames cross_origin_loc.
    parentServer = await startTestServer({
      configure: (instance) =>
        instance.get('/verification-parent', { config: { tenantless: true } }, (_request, reply) =>
          reply.type('text/html').header('content-security-policy', `frame-src ${appOrigin}`).send('<!doctype html><title>parent</title>'),
        ),
    });
    const page = await openPage(browser, context);
    // The app's verification page stores what login() would have stored after /co/authenticate.
    await page.goto(`${appOrigin}/app.html`);
    await page.evaluate((base) => localStorage.setItem(`co/verifier/${encodeURIComponent(base)}/${encodeURIComponent('co_123')}`, JSON.stringify({ value: 'verifier-xyz', expiresAt: Date.now() + 60_000 })), parentServer!.url);
    await page.goto(`${parentServer!.url}/verification-parent`);
    const answers = (await page.evaluate(
      (frameUrl) =>
        new Promise<string[]>((resolve) => {
          const frame = document.createElement('iframe');
          const got: string[] = [];
          window.addEventListener('message', (event) => {
            const data = event.data as { type?: string; response?: { verifier?: string } };
            if (data.type === 'ready') {
              frame.contentWindow!.postMessage({ type: 'co_verifier_request', request: { id: 'co_123' } }, new URL(frameUrl).origin);
              frame.contentWindow!.postMessage({ type: 'co_verifier_request', request: { id: 'co_123' } }, new URL(frameUrl).origin);
            }
            if (data.type === 'co_verifier_response') {
              got.push(data.response?.verifier ?? '');
              if (got.length === 2) resolve(got);
            }
          });
          frame.src = frameUrl;
          document.body.appendChild(frame);
        }),
      `${appOrigin}/verify.html#origin=${encodeURIComponent(parentServer!.url)}`,
    )) as string[];
    expect(answers).toEqual(['verifier-xyz', '']);
    await page.close();
  });
});
