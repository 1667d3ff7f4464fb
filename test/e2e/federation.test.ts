/**
 * Federation and the classic-login conventions in real Chromium, against a real upstream (oidc-provider, as an
 * OIDC provider `acme` with a domain alias, and posing as GitHub behind the `github` preset in development-keys
 * mode): the hosted login page's social button, `authorize({connection})` with the unmodified auth0-js@10 and
 * with svc, home-realm discovery by email domain, checkSession's `login_required` for development keys,
 * getSSOData (and rule 9 on localhost), federated logout; and the unmodified auth0-lock (latest, its published
 * lib/ bundled as is) rendering the client's connections from /client/{id}.js and signing in through the
 * database connection and through the OIDC upstream.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { build, type PluginBuild } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startOidcUpstream, type OidcUpstream } from '../../packages/server/src/test-support/oidc-upstream.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, management, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const require = createRequire(import.meta.url);
const PASSWORD = 'correct horse battery staple 11';
const OIDC_SECRET = 'acme-upstream-secret-0123456789abcdef';
const DEV_KEYS_SECRET = 'dev-keys-upstream-secret-0123456789abcdef';
const AUTH0_JS = readFileSync(require.resolve('auth0-js/dist/auth0.min.js'), 'utf8');

interface Outcome {
  err: Record<string, unknown> | null;
  res: Record<string, unknown> | null;
}

describe('federation in Chromium', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp;
  /** auth0-lock's published lib/ (Babel output of its source), bundled unchanged into one script. */
  let lockJs: string;

  const auth0Options = () => ({ domain: server.url, clientID: app.client_id, redirectUri: `${appOrigin}/a0-callback.html`, responseType: 'token id_token', scope: 'openid profile email', overrides: { __token_issuer: server.issuer } });
  const svcOptions = (scope: string) => ({ domain: server.url, clientID: app.client_id, redirectUri: `${appOrigin}/svc-callback.html`, responseType: 'token id_token', scope });
  const lockOptions = () => ({
    configurationBaseUrl: server.url,
    overrides: { __token_issuer: server.issuer },
    rememberLastLogin: false,
    auth: { redirect: true, redirectUrl: `${appOrigin}/lock.html`, responseType: 'token id_token', params: { scope: 'openid profile email' } },
  });

  function appPage(path: string, query: URLSearchParams): string {
    const head = '<!doctype html><meta charset="utf-8"><title>app</title>';
    const parse = (lib: string) => `<script>window.result = new Promise((r) => ${lib}.parseHash((err, res) => r({ err, res })));</script>`;
    switch (path) {
      case '/a0.html':
      case '/a0-callback.html':
        return `${head}<script src="/auth0.min.js"></script><script>window.webAuth = new auth0.WebAuth(${JSON.stringify(auth0Options())});</script>${path === '/a0-callback.html' ? parse('webAuth') : ''}`;
      case '/svc.html':
      case '/svc-callback.html':
        return `${head}<script src="${server.url}/lib/svc.js"></script><script>window.webAuth = new svc.WebAuth(${JSON.stringify(svcOptions(query.get('scope') ?? 'openid profile email'))});</script>${path === '/svc-callback.html' ? parse('webAuth') : ''}`;
      case '/lock.html':
        // As Lock's own examples: the same page shows the box and, back from /authorize, reports `authenticated`.
        return `${head}<body><script src="/lock.js"></script><script>
          window.lock = new Auth0Lock(${JSON.stringify(app.client_id)}, ${JSON.stringify(server.url)}, ${JSON.stringify(lockOptions())});
          window.result = new Promise((r) => { lock.on('authenticated', (res) => r({ err: null, res })); lock.on('authorization_error', (err) => r({ err, res: null })); });
          if (!location.hash) lock.show();
        </script>`;
      default:
        return `${head}<p>app</p>`;
    }
  }

  beforeAll(async () => {
    // auth0-js@9's package says "type": "module" but its main file is UMD; Lock's own webpack build reads it as
    // CommonJS, and so does this bundle (the UMD runs with a module object; its exports are the default export).
    const umdAsCommonJs = {
      name: 'umd-as-commonjs',
      setup(b: PluginBuild) {
        b.onLoad({ filter: /auth0-js[\\/]dist[\\/]auth0\.min\.js$/ }, (args) => ({
          contents: `const module = { exports: {} };\n(function (exports, module) {\n${readFileSync(args.path, 'utf8')}\n}).call(globalThis, module.exports, module);\nexport default module.exports;`,
          loader: 'js',
        }));
      },
    };
    // One React for the whole box: Lock's own (18), also for its dependencies found at the top (react-transition-group).
    const lockDir = path.dirname(require.resolve('auth0-lock/package.json'));
    const lockReact = { react: path.join(lockDir, 'node_modules/react'), 'react-dom': path.join(lockDir, 'node_modules/react-dom') };
    const bundle = await build({ entryPoints: [require.resolve('auth0-lock')], bundle: true, format: 'iife', globalName: 'Auth0LockModule', write: false, platform: 'browser', mainFields: ['browser', 'main'], plugins: [umdAsCommonJs], alias: lockReact, define: { 'process.env.NODE_ENV': '"production"', global: 'window' }, logLevel: 'error' });
    lockJs = `${bundle.outputFiles[0]!.text}\nwindow.Auth0Lock = Auth0LockModule.default;`;
    server = await startTestServer({ env: { GATEHOUSE_DEVELOPMENT_KEYS: JSON.stringify({ github: { client_id: 'gatehouse-dev-keys', client_secret: DEV_KEYS_SECRET } }) } });
    appServer = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/auth0.min.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(AUTH0_JS);
      if (url.pathname === '/lock.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(lockJs);
      res.writeHead(200, { 'content-type': 'text/html' }).end(appPage(url.pathname, url.searchParams));
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    // The app on localhost too: same-site with the server, as a developer runs it (rule 9 applies there).
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;
    const redirect_uris = [`${server.url}/login/callback`];
    upstream = await startOidcUpstream([
      { client_id: 'gatehouse-oidc', client_secret: OIDC_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_basic', post_logout_redirect_uris: [`${appOrigin}/svc.html`] },
      { client_id: 'gatehouse-dev-keys', client_secret: DEV_KEYS_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
    ]);
    browser = await launchBrowser();
    app = await createApp(server, {
      callbacks: [`${appOrigin}/a0-callback.html`, `${appOrigin}/svc-callback.html`, `${appOrigin}/lock.html`],
      web_origins: [appOrigin],
      allowed_origins: [appOrigin],
      allowed_logout_urls: [`${appOrigin}/svc.html`],
      cross_origin_authentication: true,
    });
    const created = async (body: Record<string, unknown>) => {
      const response = await management(server, 'POST', '/connections', { ...body, enabled_clients: [app.client_id] });
      expect(response.status, await response.clone().text()).toBe(201);
    };
    await created({ name: 'acme', display_name: 'Acme', strategy: 'oidc', options: { client_id: 'gatehouse-oidc', client_secret: OIDC_SECRET, discovery_url: upstream.discoveryUrl, scope: 'openid profile email', domain_aliases: ['acme.example'] } });
    // No client_id/secret of its own: development-keys mode, with the operator's pair from the configuration.
    await created({
      name: 'github',
      strategy: 'github',
      options: { authorizationURL: `${upstream.issuer}/auth`, tokenURL: `${upstream.issuer}/token`, userinfoURL: `${upstream.issuer}/me`, scope: 'openid profile email', profile_mapping: { user_id: 'sub', nickname: 'nickname' } },
    });
    await createUser(server, 'lock@example.com', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await upstream?.close();
    await server?.close();
    appServer?.close();
  });
  // Each test starts signed out everywhere (here and at the upstream).
  beforeEach(async () => {
    await browser.context.clearCookies();
  });

  /** At the upstream's login form: any login name signs in as that subject. */
  async function upstreamLogin(page: Page, login: string): Promise<void> {
    await page.waitForURL((url) => url.origin === upstream.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button.login-submit').click();
  }

  const call = <T>(page: Page, script: string) => page.evaluate(script) as Promise<T>;
  /** Starts a navigation from inside the page after evaluate has returned. */
  const navigate = (page: Page, script: string) => page.evaluate(`void setTimeout(() => { ${script} })`);
  const result = async (page: Page, path: string) => {
    // Back with the answer in the fragment (Lock's page is also where it started).
    await page.waitForURL((url) => url.origin === appOrigin && url.pathname === path && url.hash.length > 1);
    return call<Outcome>(page, 'window.result');
  };
  const ssoData = (page: Page) => call<Outcome>(page, 'new Promise((r) => webAuth.client.getSSOData((err, res) => r({ err, res })))');
  const checkSession = (page: Page) => call<Outcome>(page, 'new Promise((r) => webAuth.checkSession({}, (err, res) => r({ err, res: res ? { sub: res.idTokenPayload.sub } : null })))');

  it("the hosted login page's social button (development keys) signs in upstream; checkSession then answers login_required", async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/svc.html`);
    await navigate(page, 'webAuth.authorize({})');
    await page.waitForURL((url) => url.pathname === '/u/login');
    await expect(page.getByRole('link', { name: 'Continue with Acme' }).isVisible()).resolves.toBe(true);
    await page.getByRole('link', { name: 'Continue with github (development keys)' }).click();
    await upstreamLogin(page, 'gh-user');
    const login = await result(page, '/svc-callback.html');
    expect(login.err).toBeNull();
    expect((login.res!.idTokenPayload as { sub: string }).sub).toBe('github|gh-user');

    // Rule 4: a session from development keys is never renewed silently, though it is live.
    await page.goto(`${appOrigin}/svc.html`);
    expect((await checkSession(page)).err).toMatchObject({ error: 'login_required' });
    expect((await ssoData(page)).res).toEqual({ sso: false });
  });

  it('authorize({connection}) with auth0-js@10 goes straight to the upstream and back with a verified ID token', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/a0.html`);
    await navigate(page, "webAuth.authorize({ connection: 'acme' })");
    await upstreamLogin(page, 'bob');
    const login = await result(page, '/a0-callback.html');
    expect(login.err).toBeNull();
    expect(login.res!.idTokenPayload).toMatchObject({ sub: 'oidc|acme|bob', email: 'bob@upstream.example' });
  });

  it('authorize({connection}) with svc, getSSOData names the connection, and federated logout ends the upstream session too', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/svc.html`);
    await navigate(page, "webAuth.authorize({ connection: 'acme' })");
    await upstreamLogin(page, 'carol');
    const login = await result(page, '/svc-callback.html');
    expect(login.err).toBeNull();
    expect((login.res!.idTokenPayload as { sub: string }).sub).toBe('oidc|acme|carol');

    await page.goto(`${appOrigin}/svc.html`);
    const sso = await ssoData(page);
    expect(sso.err).toBeNull();
    expect(sso.res).toEqual({ sso: true, lastUsedConnection: { name: 'acme' }, lastUsedUserID: 'oidc|acme|carol', lastUsedUsername: 'carol@upstream.example', lastUsedClientID: app.client_id, sessionClients: [app.client_id] });

    await navigate(page, `webAuth.logout({ returnTo: ${JSON.stringify(`${appOrigin}/svc.html`)}, federated: true })`);
    // The upstream's own end-session page asks; then it sends the browser on to returnTo.
    await page.waitForURL((url) => url.origin === upstream.issuer);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${appOrigin}/svc.html`);
    expect((await ssoData(page)).res).toEqual({ sso: false });
    // Signed out upstream as well: the next sign-in there asks again.
    await navigate(page, "webAuth.authorize({ connection: 'acme' })");
    await page.waitForURL((url) => url.origin === upstream.issuer);
    await expect(page.locator('input[name="login"]').isVisible()).resolves.toBe(true);
  });

  it("home-realm discovery: an email of acme's domain on the hosted login page goes to acme's provider", async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/svc.html`);
    await navigate(page, 'webAuth.authorize({})');
    await page.waitForURL((url) => url.pathname === '/u/login');
    await page.getByLabel('Email address').fill('dave@acme.example');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await upstreamLogin(page, 'dave');
    const login = await result(page, '/svc-callback.html');
    expect(login.err).toBeNull();
    expect((login.res!.idTokenPayload as { sub: string }).sub).toBe('oidc|acme|dave');
  });

  it('rule 9: getSSOData on localhost without openid profile email is consent_required, in the console too', async (context) => {
    const page = await openPage(browser, context);
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await page.goto(`${appOrigin}/svc.html?scope=openid`);
    const sso = await ssoData(page);
    expect(sso.err).toMatchObject({ error: 'consent_required', error_description: expect.stringContaining('openid profile email') });
    expect(sso.res).toEqual({ sso: false });
    expect(errors.some((e) => e.includes('consent_required'))).toBe(true);
  });

  it('auth0-lock renders the connections of /client/{id}.js and signs in through the database connection', async (context) => {
    const page = await openPage(browser, context);
    const scripts: string[] = [];
    page.on('request', (request) => request.url().includes('/client/') && scripts.push(request.url()));
    await page.goto(`${appOrigin}/lock.html`);
    // The social connection as Lock's button, the database connection as its form.
    await page.locator('.auth0-lock-social-button[data-provider="github"]').waitFor();
    expect(scripts[0]).toMatch(new RegExp(`^${server.url}/client/${app.client_id}\\.js\\?t\\d+$`));
    await page.locator('input[name="email"]').fill('lock@example.com');
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button.auth0-lock-submit').click();
    const login = await result(page, '/lock.html');
    expect(login.err).toBeNull();
    expect(login.res!.idTokenPayload).toMatchObject({ sub: expect.stringMatching(/^auth0\|/), email: 'lock@example.com' });
  });

  it("auth0-lock sends an email of acme's domain to the OIDC upstream (enterprise SSO) and back", async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${appOrigin}/lock.html`);
    await page.locator('input[name="email"]').fill('frank@acme.example');
    // Lock sees the domain among the enterprise connection's aliases: single sign-on, no password.
    await page.locator('.auth0-sso-notice-container').waitFor();
    await page.locator('button.auth0-lock-submit').click();
    await upstreamLogin(page, 'frank');
    const login = await result(page, '/lock.html');
    expect(login.err).toBeNull();
    expect(login.res!.idTokenPayload).toMatchObject({ sub: 'oidc|acme|frank' });
  });
});
