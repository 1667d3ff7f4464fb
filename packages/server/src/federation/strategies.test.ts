/**
 * Every federation strategy against a real upstream: the strategy contract (strategy-contract.ts) run for `oidc`
 * (discovery, client_secret_basic) and `oauth2` (explicit endpoints and a userinfo mapping), both toward one
 * oidc-provider instance, through one Gatehouse.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { startOidcUpstream, type OidcUpstream } from '../test-support/oidc-upstream.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, type TestApp } from '../test-support/sign-in.js';
import { runStrategyContract, type StrategyFixture } from './strategy-contract.js';

let test: TestServer;
let app: TestApp;
let upstream: OidcUpstream;
const OIDC_SECRET = 'oidc-upstream-secret-0123456789abcdef';
const OAUTH2_SECRET = 'oauth2-upstream-secret-0123456789abcdef';

beforeAll(async () => {
  test = await startTestServer();
  app = await createApp(test);
  const redirect_uris = [`${test.url}/login/callback`];
  upstream = await startOidcUpstream([
    { client_id: 'gatehouse-oidc', client_secret: OIDC_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_basic' },
    { client_id: 'gatehouse-oauth2', client_secret: OAUTH2_SECRET, redirect_uris, token_endpoint_auth_method: 'client_secret_post' },
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
    requiredOption: 'client_id',
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
    requiredOption: 'tokenURL',
    userIdOf: (sub) => `oauth2|upstream-oauth2|${sub}`,
    isSocial: true,
  },
];

for (const fixture of fixtures) {
  describe(`federation strategy contract: ${fixture.strategy}`, () => runStrategyContract(fixture, context));
}
