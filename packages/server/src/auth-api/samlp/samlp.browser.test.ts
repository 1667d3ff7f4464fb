/**
 * Gatehouse as a SAML identity provider in real Chromium: a service provider on its own origin (node-saml behind
 * a small HTTP server) signs the user in through the hosted login page; an OpenID Connect application then signs
 * in without a password prompt (one SSO session); a logout at Gatehouse reaches the SAML application
 * front-channel (its LogoutRequest page, the SP's LogoutResponse) before the browser lands where it asked to.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SAML, ValidateInResponseTo, type Profile } from '@node-saml/node-saml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_PATH } from '../authorize/complete.js';
import { launchBrowser, openPage, type BrowserSession } from '../../test-support/browser.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser } from '../../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 12';

describe('SAML identity provider in Chromium', () => {
  let test: TestServer;
  let browser: BrowserSession;
  let spServer: http.Server;
  /** The service provider's origin: `localhost`, another site than the server's 127.0.0.1. */
  let sp: string;
  let saml: SAML;
  let oidcClientId: string;
  const signedIn: Profile[] = [];
  const logoutRequests: Profile[] = [];

  async function formBody(request: http.IncomingMessage): Promise<Record<string, string>> {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    return Object.fromEntries(new URLSearchParams(body));
  }

  /** The service provider: /login starts SP-initiated sign-in, /acs reads the Response, /slo answers our LogoutRequest. */
  async function serveSp(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', sp);
    const page = (text: string) => response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>SP</title><h1>${text}</h1>`);
    if (url.pathname === '/login') {
      response.writeHead(302, { location: await saml.getAuthorizeUrlAsync('from-sp', undefined, {}) }).end();
    } else if (url.pathname === '/acs' && request.method === 'POST') {
      const { profile } = await saml.validatePostResponseAsync(await formBody(request));
      signedIn.push(profile!);
      page(`Signed in as ${profile!.nameID}`);
    } else if (url.pathname === '/slo' && request.method === 'POST') {
      const body = await formBody(request);
      const { profile } = await saml.validatePostRequestAsync({ SAMLRequest: body.SAMLRequest! });
      logoutRequests.push(profile!);
      response.writeHead(302, { location: await saml.getLogoutResponseUrlAsync(profile!, body.RelayState!, {}, true) }).end();
    } else {
      page(url.pathname === '/bye' ? 'Goodbye' : 'OIDC callback');
    }
  }

  beforeAll(async () => {
    test = await startTestServer();
    browser = await launchBrowser();
    spServer = http.createServer((request, response) => {
      serveSp(request, response).catch((error: unknown) => response.writeHead(500).end(String(error)));
    });
    await new Promise<void>((resolve) => spServer.listen(0, '127.0.0.1', resolve));
    sp = `http://localhost:${(spServer.address() as AddressInfo).port}`;
    await createUser(test, 'ada@example.com', PASSWORD);
    const samlClientId = (
      await createApp(test, {
        name: 'Wiki',
        app_type: 'regular_web',
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code'],
        callbacks: [`${sp}/acs`],
        addons: { samlp: { audience: `${sp}/metadata`, nameIdentifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', nameIdentifierProbes: ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'], logout: { callback: `${sp}/slo`, slo_enabled: true } } },
      })
    ).client_id;
    oidcClientId = (await createApp(test, { name: 'Dashboard', callbacks: [`${sp}/oidc-callback`], allowed_logout_urls: [`${sp}/bye`], web_origins: [sp] })).client_id;
    saml = new SAML({
      entryPoint: `${test.url}/samlp/${samlClientId}`,
      logoutUrl: `${test.url}/samlp/${samlClientId}/logout`,
      callbackUrl: `${sp}/acs`,
      issuer: `${sp}/metadata`,
      audience: `${sp}/metadata`,
      idpCert: await (await fetch(`${test.url}/pem`)).text(),
      idpIssuer: `urn:${new URL(test.url).host}`,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      disableRequestedAuthnContext: true,
      validateInResponseTo: ValidateInResponseTo.ifPresent,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
    spServer?.close();
  });

  it('signs in through the hosted login page, shares the session with an OIDC application, and logs out of both', async (context) => {
    const page = await openPage(browser, context);
    const visited: string[] = [];
    page.on('framenavigated', (frame) => frame === page.mainFrame() && visited.push(frame.url()));

    // SP-initiated: the SP's /login → the hosted login page → the auto-submitted Response → the SP's ACS.
    await page.goto(`${sp}/login`);
    await page.getByLabel('Email address').fill('ada@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Signed in as ada@example.com' }).waitFor();
    expect(page.url()).toBe(`${sp}/acs`);
    expect(signedIn).toHaveLength(1);
    expect(visited.some((url) => url.startsWith(`${test.url}${LOGIN_PATH}`))).toBe(true);

    // The OIDC application: straight back to its callback with tokens, no login page on the way.
    visited.length = 0;
    const authorize = new URL(`${test.url}/authorize`);
    authorize.search = new URLSearchParams({ client_id: oidcClientId, redirect_uri: `${sp}/oidc-callback`, response_type: 'token id_token', nonce: 'n-1', scope: 'openid' }).toString();
    await page.goto(authorize.href);
    await page.waitForURL((url) => url.href.startsWith(`${sp}/oidc-callback`));
    expect(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('id_token')).toMatch(/^ey/);
    expect(visited.filter((url) => url.startsWith(`${test.url}${LOGIN_PATH}`))).toEqual([]);

    // A logout at Gatehouse: the SAML application gets a LogoutRequest for its session, answers, and the browser lands on /bye.
    await page.goto(`${test.url}/v2/logout?client_id=${oidcClientId}&returnTo=${encodeURIComponent(`${sp}/bye`)}`);
    await page.getByRole('heading', { name: 'Goodbye' }).waitFor();
    expect(logoutRequests).toHaveLength(1);
    expect(logoutRequests[0]!.nameID).toBe('ada@example.com');
    expect(logoutRequests[0]!.sessionIndex).toBe(signedIn[0]!.sessionIndex);

    // Signed out everywhere: the SAML sign-in asks for the password again.
    await page.goto(`${sp}/login`);
    await page.getByLabel('Password').waitFor();
    expect(page.url().startsWith(`${test.url}${LOGIN_PATH}`)).toBe(true);
  });
});
