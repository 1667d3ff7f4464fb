/**
 * The unmodified auth0-js@10 over HTTPS, as `gatehouse start --https` serves it (the dev certificate, which
 * Chromium is told to accept): `domain` is a plain host, so auth0-js builds every URL itself, the issuer
 * included, and its Management client (https only) works. Embedded login through /co/authenticate,
 * passwordlessStart + passwordlessLogin, signup, changePassword, and Management getUser, patchUserMetadata,
 * linkUser. Emails go to a real SMTP server in the test.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevCertificate } from '../../packages/server/src/crypto/dev-certificate.js';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, management, type TestApp } from '../../packages/server/src/test-support/sign-in.js';
import { startTestSmtp, type TestSmtp } from '../../packages/server/src/test-support/smtp.js';

const PASSWORD = 'correct horse battery staple 9';
const AUTH0_JS = readFileSync(createRequire(import.meta.url).resolve('auth0-js/dist/auth0.min.js'), 'utf8');

interface Outcome {
  err: Record<string, unknown> | null;
  res: unknown;
}

type Auth0Window = {
  webAuth: Record<string, (...args: unknown[]) => void> & { client: Record<string, (...args: unknown[]) => void> };
  auth0: { Management: new (o: unknown) => Record<string, (...args: unknown[]) => void> };
  result?: Promise<Outcome>;
};

describe('auth0-js@10 over HTTPS', () => {
  let server: TestServer;
  let smtp: TestSmtp;
  let browser: BrowserSession;
  let appServer: https.Server;
  let appOrigin: string;
  let app: TestApp;
  let domain: string;

  const appPage = (body: string) =>
    `<!doctype html><meta charset="utf-8"><title>app</title><script src="/auth0.min.js"></script><script>window.webAuth = new auth0.WebAuth(${JSON.stringify({
      domain,
      clientID: app.client_id,
      redirectUri: `${appOrigin}/callback.html`,
      responseType: 'token id_token',
      scope: 'openid profile email',
    })});</script>${body}`;

  let trustedBefore: string | undefined;
  beforeAll(async () => {
    // The server's own certificate, trusted by this process for the Management calls of the set-up.
    trustedBefore = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    const certDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cert-'));
    const { certFile, keyFile } = await ensureDevCertificate(certDir);
    smtp = await startTestSmtp();
    server = await startTestServer({ env: { GATEHOUSE_TLS_CERT: certFile, GATEHOUSE_TLS_KEY: keyFile, GATEHOUSE_SMTP_URL: smtp.url } });
    expect(server.url).toMatch(/^https:\/\/localhost:\d+$/);
    domain = new URL(server.url).host;
    browser = await launchBrowser();
    // The app is served over https too, with the same certificate: same-site with the server (cookies of the
    // cross-origin login reach it as a browser with third-party cookies blocked still sends them).
    appServer = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
      const route = new URL(req.url ?? '/', 'http://x').pathname;
      if (route === '/auth0.min.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(AUTH0_JS);
      const body = route === '/callback.html' ? appPage('<script>window.result = new Promise((r) => webAuth.parseHash((err, res) => r({ err, res })));</script>') : appPage('<p>app</p>');
      res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `https://localhost:${(appServer.address() as AddressInfo).port}`;
    app = await createApp(server, { callbacks: [`${appOrigin}/callback.html`], web_origins: [appOrigin], allowed_origins: [appOrigin], cross_origin_authentication: true });
    await createUser(server, 'main@example.com', PASSWORD);
    await createUser(server, 'other@example.com', PASSWORD);
    const [email] = (await (await management(server, 'GET', '/connections?name=email')).json()) as { id: string }[];
    expect((await management(server, 'PATCH', `/connections/${email!.id}/clients`, [{ client_id: app.client_id, status: true }])).status).toBe(204);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
    appServer?.close();
    // Trust is for this file's own server: a file run next in the same worker (isolate: false) checks certificates again.
    if (trustedBefore === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trustedBefore;
  });

  /** Calls a node-style method of webAuth (or webAuth.client) in the page and returns {err, res}. */
  function call(tab: Page, method: string, options: unknown, target: 'webAuth' | 'client' = 'webAuth'): Promise<Outcome> {
    return tab.evaluate(
      ({ method, options, target }) =>
        new Promise<Outcome>((resolve) => {
          const w = window as unknown as Auth0Window;
          const object = target === 'client' ? w.webAuth.client : w.webAuth;
          object[method]!(options, (err: Record<string, unknown> | null, res: unknown) => resolve({ err, res }));
        }),
      { method, options, target },
    );
  }

  async function landed(tab: Page): Promise<Outcome> {
    await tab.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback.html');
    return (await tab.evaluate('window.result')) as Outcome;
  }

  it('login through /co/authenticate (with its errors), signup, changePassword', async (context) => {
    const tab = await openPage(browser, context);
    await tab.goto(`${appOrigin}/app.html`);
    const wrong = await call(tab, 'login', { realm: 'Username-Password-Authentication', email: 'main@example.com', password: 'wrong' });
    expect(wrong.err).toMatchObject({ code: 'access_denied', error: 'access_denied' });

    const signup = await call(tab, 'signup', { connection: 'Username-Password-Authentication', email: 'fresh@example.com', password: PASSWORD });
    expect(signup.err).toBeNull();
    expect(signup.res).toMatchObject({ email: 'fresh@example.com', emailVerified: false });
    const exists = await call(tab, 'signup', { connection: 'Username-Password-Authentication', email: 'fresh@example.com', password: PASSWORD });
    expect(exists.err).toMatchObject({ statusCode: 400, code: 'user_exists' });

    const reset = await call(tab, 'changePassword', { connection: 'Username-Password-Authentication', email: 'main@example.com' });
    expect(reset.err).toBeNull();
    expect(reset.res).toBe("We've just sent you an email to reset your password.");
    await smtp.waitFor((mail) => mail.to.includes('main@example.com'));

    await tab.evaluate(() => void setTimeout(() => (window as unknown as Auth0Window).webAuth.login!({ realm: 'Username-Password-Authentication', email: 'main@example.com', password: 'correct horse battery staple 9' }, () => undefined)));
    const login = await landed(tab);
    expect(login.err).toBeNull();
    expect(((login.res as { idTokenPayload: { email: string } }).idTokenPayload).email).toBe('main@example.com');
  });

  it('passwordlessStart + passwordlessLogin with an emailed code', async (context) => {
    const fresh = await launchBrowser();
    try {
      const tab = await openPage(fresh, context);
      await tab.goto(`${appOrigin}/app.html`);
      const start = await call(tab, 'passwordlessStart', { connection: 'email', send: 'code', email: 'code@example.com' });
      expect(start.err).toBeNull();
      const mail = await smtp.waitFor((m) => m.to.includes('code@example.com'));
      const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
      await tab.evaluate((otp) => void setTimeout(() => (window as unknown as Auth0Window).webAuth.passwordlessLogin!({ connection: 'email', email: 'code@example.com', verificationCode: otp }, () => undefined)), code);
      const login = await landed(tab);
      expect(login.err).toBeNull();
      expect(((login.res as { idTokenPayload: { sub: string } }).idTokenPayload).sub).toMatch(/^email\|/);
    } finally {
      await fresh.close();
    }
  });

  it('Management getUser, patchUserMetadata and linkUser with the current-user token', async (context) => {
    // The secondary account's ID token, issued to the same application.
    const second = await launchBrowser();
    let secondaryIdToken: string;
    try {
      const tab = await openPage(second, context);
      await tab.goto(`${appOrigin}/app.html`);
      await tab.evaluate(() => void setTimeout(() => (window as unknown as Auth0Window).webAuth.login!({ realm: 'Username-Password-Authentication', email: 'other@example.com', password: 'correct horse battery staple 9' }, () => undefined)));
      secondaryIdToken = ((await landed(tab)).res as { idToken: string }).idToken;
    } finally {
      await second.close();
    }

    const fresh = await launchBrowser();
    try {
      const tab = await openPage(fresh, context);
      await tab.goto(`${appOrigin}/app.html`);
      const audience = `${server.url}/api/v2/`;
      await tab.evaluate(
        (aud) =>
          void setTimeout(() =>
            (window as unknown as Auth0Window).webAuth.login!(
              { realm: 'Username-Password-Authentication', email: 'main@example.com', password: 'correct horse battery staple 9', audience: aud, scope: 'openid profile email read:current_user update:current_user_metadata update:current_user_identities' },
              () => undefined,
            ),
          ),
        audience,
      );
      const login = (await landed(tab)).res as { accessToken: string; idTokenPayload: { sub: string } };
      const outcome = await tab.evaluate(
        ({ domain, token, sub, secondary }) =>
          new Promise<Record<string, Outcome>>((resolve) => {
            const m = new (window as unknown as Auth0Window).auth0.Management({ domain, token });
            m.patchUserMetadata!(sub, { plan: 'pro' }, (e1: Record<string, unknown> | null, patched: unknown) =>
              m.getUser!(sub, (e2: Record<string, unknown> | null, user: unknown) =>
                m.linkUser!(sub, secondary, (e3: Record<string, unknown> | null, identities: unknown) =>
                  resolve({ patch: { err: e1, res: patched }, get: { err: e2, res: user }, link: { err: e3, res: identities } }),
                ),
              ),
            );
          }),
        { domain, token: login.accessToken, sub: login.idTokenPayload.sub, secondary: secondaryIdToken },
      );
      expect(outcome.patch!.err).toBeNull();
      expect(outcome.get!.err).toBeNull();
      expect(outcome.get!.res).toMatchObject({ user_id: login.idTokenPayload.sub, user_metadata: { plan: 'pro' } });
      expect(outcome.link!.err).toBeNull();
      expect((outcome.link!.res as unknown[]).length).toBe(2);
    } finally {
      await fresh.close();
    }
  });
});
