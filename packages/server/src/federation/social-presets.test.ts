/**
 * The windowslive, facebook and linkedin presets: each passes the strategy contract against oidc-provider posing
 * as the provider (its endpoints overridden, as the presets allow), sends the browser to the provider's
 * documented endpoints when nothing is overridden, refuses bad options in the Management API's shape, and uses
 * the server's development keys when it has none of its own. Facebook's profile mapping is read from a local
 * Graph API stand-in answering with Facebook's own field names (`id`, `first_name`, `picture.data.url`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcUpstream, type OidcUpstream } from '../test-support/oidc-upstream.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, management, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { APP_CALLBACK, federatedSignIn, redeem, runStrategyContract, type StrategyFixture } from './strategy-contract.js';

const WINDOWSLIVE_SECRET = 'windowslive-upstream-secret-0123456789abcdef';
const FACEBOOK_SECRET = 'facebook-upstream-secret-0123456789abcdef';
const LINKEDIN_SECRET = 'linkedin-upstream-secret-0123456789abcdef';
const DEV_KEYS_SECRET = 'facebook-dev-keys-secret-0123456789abcdef';
const PKCE = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };

/** Where /authorize?connection= sends the browser. */
async function upstreamRedirect(test: TestServer, app: TestApp, connection: string): Promise<URL> {
  const start = await new TestBrowser().get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: APP_CALLBACK, response_type: 'code', connection, ...PKCE })}`);
  expect(start.status).toBe(302);
  return new URL(start.headers.get('location')!);
}

/** A stand-in for Facebook's Graph API: the token endpoint and `GET /me`, answering in Facebook's field names. */
async function startGraphApi(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    response.setHeader('content-type', 'application/json');
    if (request.method === 'POST' && request.url === '/oauth/access_token') {
      response.end(JSON.stringify({ access_token: 'graph-access-token', token_type: 'bearer', expires_in: 5183944 }));
    } else if (request.url?.startsWith('/me?') && request.headers.authorization === 'Bearer graph-access-token') {
      response.end(
        JSON.stringify({
          id: '10228675309',
          name: 'Ada Lovelace',
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada@facebook.example',
          picture: { data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.fbsbx.com/ada.jpg', width: 50 } },
        }),
      );
    } else {
      response.statusCode = 400;
      response.end(JSON.stringify({ error: { message: 'unexpected request', type: 'OAuthException' } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`social presets (${dialect})`, () => {
    let test: TestServer;
    let app: TestApp;
    let upstream: OidcUpstream;

    beforeAll(async () => {
      test = await startTestServer({ dialect, env: { GATEHOUSE_DEVELOPMENT_KEYS: JSON.stringify({ facebook: { client_id: 'gatehouse-facebook-dev', client_secret: DEV_KEYS_SECRET } }) } });
      app = await createApp(test);
      const redirect_uris = [`${test.url}/login/callback`];
      upstream = await startOidcUpstream([
        { client_id: 'gatehouse-windowslive', client_secret: WINDOWSLIVE_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
        { client_id: 'gatehouse-facebook', client_secret: FACEBOOK_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
        { client_id: 'gatehouse-linkedin', client_secret: LINKEDIN_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
      ]);
    });
    afterAll(async () => {
      await upstream?.close();
      await test?.close();
    });

    const context = { test: () => test, app: () => app };
    /** oidc-provider's endpoints under an OIDC preset's option names. */
    const oidcEndpoints = () => ({
      issuer: upstream.issuer,
      authorization_endpoint: `${upstream.issuer}/auth`,
      token_endpoint: `${upstream.issuer}/token`,
      userinfo_endpoint: `${upstream.issuer}/me`,
      jwks_uri: `${upstream.issuer}/jwks`,
    });

    const fixtures: StrategyFixture[] = [
      {
        strategy: 'windowslive',
        connection: 'windowslive',
        options: () => ({ client_id: 'gatehouse-windowslive', client_secret: WINDOWSLIVE_SECRET, ...oidcEndpoints() }),
        secrets: { client_secret: WINDOWSLIVE_SECRET },
        refused: { options: () => ({ client_id: 'x', client_secret: 'y', jwks_uri: 'http://keys.example/keys' }), says: 'https' },
        userIdOf: (sub) => `windowslive|${sub}`,
        isSocial: true,
      },
      {
        strategy: 'facebook',
        connection: 'facebook',
        // oidc-provider posing as Facebook: its endpoints, its profile's field names, and the scope its /me wants.
        options: () => ({
          client_id: 'gatehouse-facebook',
          client_secret: FACEBOOK_SECRET,
          authorizationURL: `${upstream.issuer}/auth`,
          tokenURL: `${upstream.issuer}/token`,
          userinfoURL: `${upstream.issuer}/me`,
          scope: 'openid profile email',
          profile_mapping: { user_id: 'sub', given_name: 'given_name', family_name: 'family_name', picture: 'picture' },
        }),
        secrets: { client_secret: FACEBOOK_SECRET },
        refused: { options: () => ({ client_secret: 'y' }), says: 'go together' },
        userIdOf: (sub) => `facebook|${sub}`,
        isSocial: true,
      },
      {
        strategy: 'linkedin',
        connection: 'linkedin',
        options: () => ({ client_id: 'gatehouse-linkedin', client_secret: LINKEDIN_SECRET, ...oidcEndpoints() }),
        secrets: { client_secret: LINKEDIN_SECRET },
        refused: { options: () => ({ client_id: 'x', client_secret: 'y', token_endpoint: 'http://linkedin.example/token' }), says: 'https' },
        userIdOf: (sub) => `linkedin|${sub}`,
        isSocial: true,
      },
    ];

    for (const fixture of fixtures) {
      describe(`the strategy contract: ${fixture.strategy}`, () => runStrategyContract(fixture, context));
    }

    it("sends the browser to each provider's documented authorization endpoint with its default scope when nothing is overridden", async () => {
      const expected = {
        windowslive: { endpoint: 'https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize', scope: ['openid', 'email', 'profile'] },
        facebook: { endpoint: 'https://www.facebook.com/v19.0/dialog/oauth', scope: ['email', 'public_profile'] },
        linkedin: { endpoint: 'https://www.linkedin.com/oauth/v2/authorization', scope: ['openid', 'profile', 'email'] },
      };
      for (const [strategy, { endpoint, scope }] of Object.entries(expected)) {
        const name = `${strategy}-defaults`;
        const created = await management(test, 'POST', '/connections', { name, strategy, options: { client_id: `${strategy}-app`, client_secret: 'defaults-secret' }, enabled_clients: [app.client_id] });
        expect(created.status, await created.clone().text()).toBe(201);
        const redirect = await upstreamRedirect(test, app, name);
        expect(redirect.origin + redirect.pathname).toBe(endpoint);
        expect(redirect.searchParams.get('client_id')).toBe(`${strategy}-app`);
        expect(redirect.searchParams.get('redirect_uri')).toBe(`${test.url}/login/callback`);
        expect(redirect.searchParams.get('scope')!.split(' ').sort()).toEqual([...scope].sort());
        expect(redirect.searchParams.get('code_challenge_method')).toBe('S256');
        expect(redirect.searchParams.get('state')).toBeTruthy();
        expect(redirect.href).not.toContain('defaults-secret');
      }
    });

    it('refuses bad options of each preset with a 400 in the Management API shape', async () => {
      const bad: [string, Record<string, unknown>, string][] = [
        ['windowslive', { client_id: 'x' }, 'go together'],
        ['windowslive', { client_id: 'x', client_secret: 'y', token_endpoint: 'not a url' }, 'token_endpoint'],
        ['linkedin', { client_id: 'x', client_secret: 'y', scope: 42 }, 'scope'],
        ['linkedin', { client_id: 'x', client_secret: 'y', upstream_params: { nonce: { value: 'n' } } }, 'nonce'],
        ['facebook', { client_id: 'x', client_secret: 'y', tokenURL: 'http://graph.example/oauth/access_token' }, 'https'],
        ['facebook', { client_id: 'x', client_secret: 'y', profile_mapping: { user_id: 'id; drop' } }, 'profile_mapping'],
      ];
      for (const [strategy, options, says] of bad) {
        const response = await management(test, 'POST', '/connections', { name: `${strategy}-refused`, strategy, options });
        const body = (await response.json()) as Record<string, unknown>;
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        expect(String(body.message)).toContain(says);
      }
    });

    it("facebook maps the Graph API's profile (id, first_name, last_name, picture.data.url) and asks /me for those fields", async () => {
      const graph = await startGraphApi();
      try {
        const created = await management(test, 'POST', '/connections', {
          name: 'facebook-graph',
          strategy: 'facebook',
          options: { client_id: 'graph-app', client_secret: FACEBOOK_SECRET, authorizationURL: `${graph.url}/dialog/oauth`, tokenURL: `${graph.url}/oauth/access_token`, userinfoURL: `${graph.url}/me?fields=id,name,first_name,last_name,email,picture` },
          enabled_clients: [app.client_id],
        });
        expect(created.status, await created.clone().text()).toBe(201);
        // The Login dialog would send the browser back with a code and the state it was given.
        const result = await federatedSignIn(test, app, 'facebook-graph', {
          drive: async (upstreamUrl) => {
            const dialog = new URL(upstreamUrl);
            expect(dialog.origin + dialog.pathname).toBe(`${graph.url}/dialog/oauth`);
            const back = new URL(dialog.searchParams.get('redirect_uri')!);
            back.searchParams.set('code', 'graph-code');
            back.searchParams.set('state', dialog.searchParams.get('state')!);
            return back;
          },
        });
        const claims = decodeJwt(String((await redeem(test, app, result)).id_token));
        expect(claims.sub).toBe('facebook|10228675309');
        const user = (await (await management(test, 'GET', `/users/${encodeURIComponent('facebook|10228675309')}`)).json()) as Record<string, unknown>;
        expect(user).toMatchObject({
          user_id: 'facebook|10228675309',
          name: 'Ada Lovelace',
          given_name: 'Ada',
          family_name: 'Lovelace',
          email: 'ada@facebook.example',
          picture: 'https://platform-lookaside.fbsbx.com/ada.jpg',
          identities: [{ provider: 'facebook', user_id: '10228675309', connection: 'facebook-graph', isSocial: true }],
        });
        expect(graph.seen).toEqual(['POST /oauth/access_token', 'GET /me?fields=id,name,first_name,last_name,email,picture']);
      } finally {
        await graph.close();
      }
    });

    it("facebook without its own keys uses the server's development keys for Facebook; linkedin, with none on this server, is refused with a clear message", async () => {
      const dev = await management(test, 'POST', '/connections', { name: 'facebook-dev-keys', strategy: 'facebook', enabled_clients: [app.client_id] });
      expect(dev.status).toBe(201);
      expect(JSON.stringify(await dev.json())).not.toContain(DEV_KEYS_SECRET);
      const redirect = await upstreamRedirect(test, app, 'facebook-dev-keys');
      expect(redirect.origin + redirect.pathname).toBe('https://www.facebook.com/v19.0/dialog/oauth');
      expect(redirect.searchParams.get('client_id')).toBe('gatehouse-facebook-dev');
      expect(redirect.href).not.toContain(DEV_KEYS_SECRET);

      expect((await management(test, 'POST', '/connections', { name: 'linkedin-dev-keys', strategy: 'linkedin', enabled_clients: [app.client_id] })).status).toBe(201);
      const refused = await upstreamRedirect(test, app, 'linkedin-dev-keys');
      expect(refused.origin + refused.pathname).toBe(APP_CALLBACK);
      expect(refused.searchParams.get('error')).toBe('access_denied');
      expect(refused.searchParams.get('error_description')).toMatch(/development-keys mode.*no development keys for LinkedIn/);
    });
  });
}
