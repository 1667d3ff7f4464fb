/**
 * Every federation strategy against a real upstream: the strategy contract (strategy-contract.ts) run for `oidc`
 * (discovery, client_secret_basic), `oauth2` (explicit endpoints, a userinfo mapping) and the `google-oauth2`
 * preset (oidc-provider posing as Google through overridden endpoints, client_secret_post as Google documents),
 * all toward one oidc-provider instance, through one Gatehouse per storage dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcUpstream, type OidcUpstream } from '../test-support/oidc-upstream.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, management, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { APP_CALLBACK, federatedSignIn, runStrategyContract, type StrategyFixture } from './strategy-contract.js';

const OIDC_SECRET = 'oidc-upstream-secret-0123456789abcdef';
const OAUTH2_SECRET = 'oauth2-upstream-secret-0123456789abcdef';
const GOOGLE_SECRET = 'google-upstream-secret-0123456789abcdef';
const GITHUB_SECRET = 'github-upstream-secret-0123456789abcdef';
const DEV_KEYS_SECRET = 'dev-keys-upstream-secret-0123456789abcdef';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`federation strategies (${dialect})`, () => {
    let test: TestServer;
    let app: TestApp;
    let upstream: OidcUpstream;

    beforeAll(async () => {
      // Development keys for github: the server's own client at the upstream.
      test = await startTestServer({ dialect, env: { GATEHOUSE_DEVELOPMENT_KEYS: JSON.stringify({ github: { client_id: 'gatehouse-dev-keys', client_secret: DEV_KEYS_SECRET } }) } });
      app = await createApp(test);
      const redirect_uris = [`${test.url}/login/callback`];
      upstream = await startOidcUpstream([
        { client_id: 'gatehouse-oidc', client_secret: OIDC_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_basic', post_logout_redirect_uris: ['https://app.example/'] },
        { client_id: 'gatehouse-oauth2', client_secret: OAUTH2_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
        { client_id: 'gatehouse-google', client_secret: GOOGLE_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
        { client_id: 'gatehouse-github', client_secret: GITHUB_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
        { client_id: 'gatehouse-dev-keys', client_secret: DEV_KEYS_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
      ]);
    });
    afterAll(async () => {
      await upstream?.close();
      await test?.close();
    });

    const context = { test: () => test, app: () => app };

    const fixtures: StrategyFixture[] = [
      {
        strategy: 'oidc',
        connection: 'upstream-oidc',
        options: () => ({ client_id: 'gatehouse-oidc', client_secret: OIDC_SECRET, discovery_url: upstream.discoveryUrl, scope: 'openid profile email' }),
        secrets: { client_secret: OIDC_SECRET },
        refused: { options: () => ({ client_secret: OIDC_SECRET, discovery_url: upstream.discoveryUrl }), says: 'client_id' },
        userIdOf: (sub) => `oidc|upstream-oidc|${sub}`,
        isSocial: false,
      },
      {
        strategy: 'oauth2',
        connection: 'upstream-oauth2',
        options: () => ({
          client_id: 'gatehouse-oauth2',
          client_secret: OAUTH2_SECRET,
          authorizationURL: `${upstream.issuer}/auth`,
          tokenURL: `${upstream.issuer}/token`,
          userinfoURL: `${upstream.issuer}/me`,
          // oidc-provider's userinfo wants `openid`; the ID token it also returns is not what oauth2 reads.
          scope: ['openid', 'profile', 'email'],
          profile_mapping: { user_id: 'sub', nickname: 'nickname' },
        }),
        secrets: { client_secret: OAUTH2_SECRET },
        refused: { options: () => ({ client_id: 'x', client_secret: 'y', authorizationURL: `${upstream.issuer}/auth`, userinfoURL: `${upstream.issuer}/me` }), says: 'tokenURL' },
        userIdOf: (sub) => `oauth2|upstream-oauth2|${sub}`,
        isSocial: true,
      },
      {
        strategy: 'google-oauth2',
        connection: 'google-oauth2',
        options: () => ({
          client_id: 'gatehouse-google',
          client_secret: GOOGLE_SECRET,
          issuer: upstream.issuer,
          authorization_endpoint: `${upstream.issuer}/auth`,
          token_endpoint: `${upstream.issuer}/token`,
          userinfo_endpoint: `${upstream.issuer}/me`,
          jwks_uri: `${upstream.issuer}/jwks`,
        }),
        secrets: { client_secret: GOOGLE_SECRET },
        refused: { options: () => ({ client_id: 'x', client_secret: 'y', token_endpoint: 'http://upstream.example/token' }), says: 'https' },
        userIdOf: (sub) => `google-oauth2|${sub}`,
        isSocial: true,
      },
      {
        strategy: 'github',
        connection: 'github',
        // oidc-provider posing as GitHub: its endpoints, its profile's field names, and the scope its /me wants.
        options: () => ({
          client_id: 'gatehouse-github',
          client_secret: GITHUB_SECRET,
          authorizationURL: `${upstream.issuer}/auth`,
          tokenURL: `${upstream.issuer}/token`,
          userinfoURL: `${upstream.issuer}/me`,
          scope: 'openid profile email',
          profile_mapping: { user_id: 'sub', nickname: 'nickname', picture: 'picture' },
        }),
        secrets: { client_secret: GITHUB_SECRET },
        refused: { options: () => ({ client_id: 'x' }), says: 'go together' },
        userIdOf: (sub) => `github|${sub}`,
        isSocial: true,
      },
    ];

    for (const fixture of fixtures) {
      describe(`the strategy contract: ${fixture.strategy}`, () => runStrategyContract(fixture, context));
    }

    it('ends the upstream session too on /v2/logout?federated (oidc end_session_endpoint), then returns to the application', async () => {
      const result = await federatedSignIn(test, app, 'upstream-oidc', 'leaving-user');
      const { browser } = result;
      /** Whether the upstream still has a session: its authorization answers at once, without a login page. */
      const upstreamRemembers = async () => {
        const start = await browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', prompt: 'login', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', connection: 'upstream-oidc' })}`);
        let url = start.headers.get('location')!;
        for (let i = 0; i < 8 && !url.startsWith(`${test.url}/login/callback`); i++) {
          const response = await browser.get(url);
          const next = response.headers.get('location');
          if (!next) return false;
          url = new URL(next, url).href;
        }
        return url.startsWith(`${test.url}/login/callback`);
      };
      expect(await upstreamRemembers()).toBe(true);
      const logout = await browser.get(`${test.url}/v2/logout?client_id=${app.client_id}&returnTo=${encodeURIComponent('https://app.example/')}&federated`);
      expect(logout.status).toBe(302);
      const endSession = new URL(logout.headers.get('location')!);
      expect(endSession.origin).toBe(upstream.issuer);
      expect(endSession.searchParams.get('id_token_hint')).toBeTruthy();
      expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe('https://app.example/');
      expect(browser.cookies.has('gh_session')).toBe(false);
      // oidc-provider asks the person to confirm.
      const page = await (await browser.get(endSession.href)).text();
      const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(page)![1]!;
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)![1]!;
      let step = await browser.post(new URL(action, upstream.issuer).href, { xsrf, logout: 'yes' });
      let location = new URL(step.headers.get('location')!, upstream.issuer);
      while (location.origin === upstream.issuer) {
        step = await browser.get(location.href);
        location = new URL(step.headers.get('location')!, upstream.issuer);
      }
      expect(location.href).toBe('https://app.example/');
      expect(await upstreamRemembers()).toBe(false);
      // Without `federated`, or for a user of no upstream, the logout stays here.
      const local = await new TestBrowser().get(`${test.url}/v2/logout?client_id=${app.client_id}&returnTo=${encodeURIComponent('https://app.example/')}&federated`);
      expect(local.headers.get('location')).toBe('https://app.example/');
    });

    it("github without its own keys signs in with the server's development keys, interactively only (rule 4: prompt=none gives login_required)", async () => {
      const created = await management(test, 'POST', '/connections', {
        name: 'github-dev-keys',
        strategy: 'github',
        options: { authorizationURL: `${upstream.issuer}/auth`, tokenURL: `${upstream.issuer}/token`, userinfoURL: `${upstream.issuer}/me`, scope: 'openid profile email', profile_mapping: { user_id: 'sub' } },
        enabled_clients: [app.client_id],
      });
      expect(created.status).toBe(201);
      const result = await federatedSignIn(test, app, 'github-dev-keys', 'dev-keys-user');
      expect(result.done.searchParams.get('code')).toBeTruthy();
      const silent = await result.browser.get(
        `${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', prompt: 'none', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
      );
      const answer = new URL(silent.headers.get('location')!);
      expect(answer.searchParams.get('error')).toBe('login_required');
      expect(answer.searchParams.get('error_description')).toMatch(/development keys/);
      // The login page says so on the button.
      const page = await result.browser.follow(test.url, await result.browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', prompt: 'login', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`));
      expect(await (page as Response).text()).toContain('Continue with github-dev-keys (development keys)');
    });

    it('google-oauth2 without its own keys (development-keys mode) is refused when used, with a clear message', async () => {
      const created = await management(test, 'POST', '/connections', { name: 'google-dev-keys', strategy: 'google-oauth2', enabled_clients: [app.client_id] });
      expect(created.status).toBe(201);
      const browser = new TestBrowser();
      const start = await browser.get(
        `${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', connection: 'google-dev-keys' })}`,
      );
      const answer = new URL(start.headers.get('location')!);
      expect(answer.origin + answer.pathname).toBe(APP_CALLBACK);
      expect(answer.searchParams.get('error')).toBe('access_denied');
      expect(answer.searchParams.get('error_description')).toMatch(/development-keys mode.*client_id and client_secret/);
    });
  });
}
