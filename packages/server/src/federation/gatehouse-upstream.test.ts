/**
 * Gatehouse federating to another Gatehouse: a second server is the `oidc` upstream (discovery, a confidential
 * client with client_secret_basic, its own hosted login page), as a customer's own Gatehouse tenant would be.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { federatedSignIn, redeem } from './strategy-contract.js';

const PASSWORD = 'correct horse battery staple 9';

describe('another Gatehouse as the oidc upstream', () => {
  let downstream: TestServer;
  let upstream: TestServer;
  let app: TestApp;
  let upstreamUserId: string;

  beforeAll(async () => {
    [downstream, upstream] = await Promise.all([startTestServer(), startTestServer()]);
    app = await createApp(downstream);
    const client = await createApp(upstream, {
      name: 'Downstream Gatehouse',
      app_type: 'regular_web',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      callbacks: [`${downstream.url}/login/callback`],
    });
    upstreamUserId = (await createUser(upstream, 'ada@upstream.example', PASSWORD, { name: 'Ada Lovelace' })).user_id;
    const created = await management(downstream, 'POST', '/connections', {
      name: 'partner',
      strategy: 'oidc',
      options: { client_id: client.client_id, client_secret: client.client_secret, discovery_url: `${upstream.url}/.well-known/openid-configuration`, scope: 'openid profile email' },
      enabled_clients: [app.client_id],
    });
    expect(created.status, await created.clone().text()).toBe(201);
  });
  afterAll(async () => {
    await Promise.all([downstream?.close(), upstream?.close()]);
  });

  it("signs in through the upstream Gatehouse's login page and gets the downstream's tokens", async () => {
    // The upstream's hosted login page: its form, filled in as a person would.
    const browser = new TestBrowser();
    const loginAtUpstream = async (url: string) => {
      const page = await browser.follow(upstream.url, await browser.get(url));
      if (page instanceof URL) return page;
      const form = readForm(await page.text(), upstream.url);
      const done = await browser.follow(upstream.url, await browser.post(form.action, { ...form.fields, username: 'ada@upstream.example', password: PASSWORD }));
      if (!(done instanceof URL)) throw new Error(`the upstream login ended on a page: ${done.status}`);
      return done;
    };
    const result = await federatedSignIn(downstream, app, 'partner', { drive: loginAtUpstream }, browser);
    const claims = decodeJwt(String((await redeem(downstream, app, result)).id_token));
    expect(claims.sub).toBe(`oidc|partner|${upstreamUserId}`);
    expect(claims).toMatchObject({ email: 'ada@upstream.example', name: 'Ada Lovelace' });
  });
});
