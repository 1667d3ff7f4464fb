/**
 * The unmodified openid-client@6 as a FAPI 2.0 relying party, with real Chromium doing the browser's part (the
 * hosted login form) and nothing else: the relying party runs in this process, pushes the authorization request
 * (PAR) with private_key_jwt and PKCE, sends Chromium to the request_uri, takes the redirect Chromium lands on,
 * redeems the code, reads /userinfo and refreshes, each sender-constrained by the client's FAPI 2.0 level:
 *  - `fapi2_sp_pkj_dpop`: DPoP on every call (openid-client's DPoP handle, its nonce retries), the code bound to
 *    the key at PAR (RFC 9449 §10), `cnf.jkt` in the access tokens;
 *  - `fapi2_sp_pkj_mtls`: the client certificate presented through the edge headers the contract defines
 *    (`client-certificate` with the tenant's `cname-api-key`), added by a fetch in front of openid-client the way
 *    the TLS-terminating edge adds them; `cnf["x5t#S256"]` in the access tokens, /userinfo with that certificate.
 * On both dialects.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK, exportSPKI, generateKeyPair, type GenerateKeyPairResult } from 'jose';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../packages/server/src/store/tenants.js';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { postgresAvailable } from '../../packages/server/src/test-support/services.js';
import { createApp, createUser } from '../../packages/server/src/test-support/sign-in.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';
const EDGE_API_KEY = 'edge-api-key-openid-client-fapi2-0123456789';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('openid-client@6, FAPI 2.0, hosted login in Chromium (%s)', (dialect) => {
  let server: TestServer;
  let browser: BrowserSession;
  let clientKeys: GenerateKeyPairResult;
  let certificate: string;
  const email = `fapi2-rp-${dialect}@example.com`;

  /** A FAPI 2.0 client at `level`, authenticated by private_key_jwt with clientKeys. */
  async function fapiClient(level: string): Promise<string> {
    const app = await createApp(server, {
      name: `FAPI 2.0 ${level}`,
      app_type: 'regular_web',
      token_endpoint_auth_method: undefined,
      grant_types: ['authorization_code', 'refresh_token'],
      callbacks: [CALLBACK],
      client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: await exportSPKI(clientKeys.publicKey), alg: 'ES256' }] } },
      compliance_level: level,
    });
    return app.client_id;
  }

  async function configuration(clientId: string, fetchThroughEdge?: oidc.CustomFetch): Promise<oidc.Configuration> {
    const config = await oidc.discovery(new URL(server.url), clientId, { token_endpoint_auth_signing_alg: 'ES256' }, oidc.PrivateKeyJwt(clientKeys.privateKey), {
      execute: [oidc.allowInsecureRequests],
    });
    // Every later call (PAR, token, userinfo) goes through the edge; discovery needs no certificate.
    if (fetchThroughEdge) config[oidc.customFetch] = fetchThroughEdge;
    return config;
  }

  /**
   * Chromium's part: open the authorization URL (a request_uri from PAR), sign in on the hosted page, and hand
   * back the URL it is redirected to. The relying party's own site is not there (no network): the callback is
   * answered by Playwright, after Chromium made the request. Each test starts without an SSO session, so that
   * each shows the login form.
   */
  async function signInWithChromium(page: Page, authorizationUrl: URL): Promise<URL> {
    await page.context().clearCookies();
    await page.route(`${new URL(CALLBACK).origin}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'relying party' }));
    await page.goto(authorizationUrl.href);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.href.startsWith(CALLBACK));
    return new URL(page.url());
  }

  async function pushedAuthorization(config: oidc.Configuration, options?: oidc.DPoPOptions): Promise<{ url: URL; verifier: string; state: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(
      config,
      { redirect_uri: CALLBACK, scope: 'openid email offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state },
      options,
    );
    // Only client_id and request_uri go through the browser (RFC 9126 §4).
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    return { url, verifier, state };
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const { tenant } = server.server.prepared.bootstrap!;
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, custom_domain_api_key_sha256: createHash('sha256').update(EDGE_API_KEY).digest('hex') },
    });
    server.server.services.tenants.invalidate();
    await createUser(server, email, PASSWORD);
    clientKeys = await generateKeyPair('ES256', { extractable: true });
    certificate = (await generate([{ name: 'commonName', value: 'fapi2-relying-party' }], { keySize: 2048 })).cert;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('fapi2_sp_pkj_dpop: PAR + private_key_jwt + PKCE + DPoP through the hosted login, then /userinfo and refresh with DPoP', async (context) => {
    const config = await configuration(await fapiClient('fapi2_sp_pkj_dpop'));
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const dpop = oidc.getDPoPHandle(config, keyPair);
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');

    const { url, verifier, state } = await pushedAuthorization(config, { DPoP: dpop });
    const callback = await signInWithChromium(await openPage(browser, context), url);
    expect(callback.searchParams.get('iss')).toBe(server.issuer);

    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true }, undefined, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP: dpop });
    expect(info.email).toBe(email);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(refreshed.token_type).toBe('dpop');
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt });
    expect((await oidc.fetchUserInfo(config, refreshed.access_token, tokens.claims()!.sub, { DPoP: dpop })).email).toBe(email);
    // The level's binding holds: the same token without its proof is refused.
    await expect(oidc.fetchUserInfo(config, refreshed.access_token, tokens.claims()!.sub)).rejects.toMatchObject({ status: 401 });
  });

  it('fapi2_sp_pkj_mtls: PAR + private_key_jwt + PKCE through the hosted login, certificate-bound tokens through the edge headers, /userinfo and refresh', async (context) => {
    // What the TLS-terminating edge adds after the handshake with the client's certificate (the contract's headers).
    const throughEdge: oidc.CustomFetch = (url, options) => {
      const headers = new Headers(options.headers);
      headers.set('cname-api-key', EDGE_API_KEY);
      headers.set('client-certificate', encodeURIComponent(certificate));
      headers.set('client-certificate-ca-verified', 'SUCCESS');
      return fetch(url, { ...options, headers } as RequestInit);
    };
    const clientId = await fapiClient('fapi2_sp_pkj_mtls');
    const config = await configuration(clientId, throughEdge);
    const x5t = createHash('sha256').update(new X509Certificate(certificate).raw).digest('base64url');

    const { url, verifier, state } = await pushedAuthorization(config);
    const callback = await signInWithChromium(await openPage(browser, context), url);
    expect(callback.searchParams.get('iss')).toBe(server.issuer);

    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.token_type).toBe('bearer');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ 'x5t#S256': x5t });
    expect((await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)).email).toBe(email);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ 'x5t#S256': x5t });
    expect((await oidc.fetchUserInfo(config, refreshed.access_token, tokens.claims()!.sub)).email).toBe(email);
    // Without the certificate (straight to the server, not through the edge) the same token is refused.
    const withoutCertificate = await fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(withoutCertificate.status).toBe(401);
  });
});
