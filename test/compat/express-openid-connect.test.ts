/**
 * The unmodified express-openid-connect@2 (the reference's Express middleware) with its defaults against the
 * real server, in real Chromium: a regular web application created with default settings (so registered for
 * client_secret_post), while the middleware authenticates with client_secret_basic, its default. Code flow with
 * a secret, through the hosted login page; an access token for an API that validates against the JWKS; a
 * refresh; and logout with `idpLogout: true`, which ends the server's session too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { auth, requiresAuth } from 'express-openid-connect';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, createUser, management, type TestApp } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const API = 'https://orders.example/api';

describe('express-openid-connect@2 with its defaults', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let appServer: http.Server;
  let appOrigin: string;
  let app: TestApp & { token_endpoint_auth_method?: string };

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    appServer = http.createServer();
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${new URL(server.url).hostname}:${(appServer.address() as AddressInfo).port}`;

    // A regular web application with the default settings (no auth method or grants chosen).
    app = await createApp(server, {
      name: 'Express app',
      app_type: 'regular_web',
      token_endpoint_auth_method: undefined,
      grant_types: undefined,
      callbacks: [`${appOrigin}/callback`],
      allowed_logout_urls: [appOrigin],
      web_origins: undefined,
    });
    const api = await management(server, 'POST', '/resource-servers', { identifier: API, name: 'Orders', allow_offline_access: true, scopes: [{ value: 'read:orders' }] });
    expect(api.status).toBe(201);
    await createUser(server, 'eve@example.com', PASSWORD);

    const express_ = express();
    express_.use(
      auth({
        issuerBaseURL: server.url,
        baseURL: appOrigin,
        clientID: app.client_id,
        clientSecret: app.client_secret!,
        secret: 'a-long-enough-cookie-secret-for-the-app-session',
        idpLogout: true,
        authorizationParams: { response_type: 'code', audience: API, scope: 'openid profile email offline_access read:orders' },
      }),
    );
    express_.get('/', (req, res) => {
      res.json({ user: req.oidc.user ?? null, accessToken: req.oidc.accessToken?.access_token ?? null });
    });
    express_.get('/refresh', requiresAuth(), async (req, res, next) => {
      try {
        const refreshed = await req.oidc.accessToken!.refresh();
        res.json({ accessToken: refreshed.access_token });
      } catch (error) {
        next(error);
      }
    });
    appServer.on('request', express_);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    appServer?.close();
  });

  async function hostedLogin(tab: Page): Promise<void> {
    await tab.waitForURL((url) => url.pathname === '/u/login');
    await tab.getByLabel('Email address').fill('eve@example.com');
    await tab.getByLabel('Password').fill(PASSWORD);
    await tab.getByRole('button', { name: 'Continue' }).click();
  }

  const bodyJson = async (tab: Page) => JSON.parse((await tab.locator('body').innerText()) as string) as Record<string, unknown>;

  it('logs in through the hosted page, gets an API token, refreshes, and logs out at the server', async (context) => {
    const registered = (await (await management(server, 'GET', `/clients/${app.client_id}`)).json()) as { token_endpoint_auth_method: string };
    expect(registered.token_endpoint_auth_method).toBe('client_secret_post');

    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
    const tab = await openPage(browser, context);
    // authRequired (the default): the app itself sends the browser to /authorize.
    await tab.goto(`${appOrigin}/`);
    await hostedLogin(tab);
    await tab.waitForURL(`${appOrigin}/`);
    const session = await bodyJson(tab);
    expect(session.user).toMatchObject({ email: 'eve@example.com' });
    const { payload } = await jwtVerify(session.accessToken as string, jwks, { issuer: server.issuer, audience: API });
    expect(payload.scope).toContain('read:orders');

    await tab.goto(`${appOrigin}/refresh`);
    const refreshed = (await bodyJson(tab)).accessToken as string;
    expect(refreshed).not.toBe(session.accessToken);
    await jwtVerify(refreshed, jwks, { issuer: server.issuer, audience: API });
    await tab.goto(`${appOrigin}/`);
    expect((await bodyJson(tab)).accessToken).toBe(refreshed);

    // idpLogout: the app's /logout goes through the server's end_session_endpoint and back to the app.
    const logoutRequests: string[] = [];
    tab.on('request', (request) => logoutRequests.push(request.url()));
    await tab.goto(`${appOrigin}/logout`);
    // Back at the app, which requires a login again: the server shows its login page, its session ended.
    await tab.waitForURL((url) => url.pathname === '/u/login');
    expect(logoutRequests.some((url) => new URL(url).pathname === '/oidc/logout')).toBe(true);
    await hostedLogin(tab);
    await tab.waitForURL(`${appOrigin}/`);
    expect((await bodyJson(tab)).user).toMatchObject({ email: 'eve@example.com' });
  });
});
