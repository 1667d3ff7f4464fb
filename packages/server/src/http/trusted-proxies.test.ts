/**
 * GATEHOUSE_TRUSTED_PROXIES: X-Forwarded-For names the client only when the connection comes from a listed
 * proxy; otherwise the socket's address is the client (rate limits and attack protection key on it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../config.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, createUser, management } from '../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';

async function lastIpAfterLogin(server: TestServer, email: string): Promise<unknown> {
  const app = await createApp(server, { grant_types: ['http://auth0.com/oauth/grant-type/password-realm'] });
  const user = await createUser(server, email, PASSWORD);
  const token = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.7' },
    body: new URLSearchParams({ grant_type: 'http://auth0.com/oauth/grant-type/password-realm', client_id: app.client_id, username: email, password: PASSWORD, realm: 'Username-Password-Authentication', scope: 'openid' }),
  });
  expect(token.status).toBe(200);
  return ((await (await management(server, 'GET', `/users/${encodeURIComponent(user.user_id)}`)).json()) as { last_ip?: string }).last_ip;
}

describe('trusted proxies', () => {
  let trusting: TestServer;
  let plain: TestServer;
  beforeAll(async () => {
    trusting = await startTestServer({ env: { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1, ::1' } });
    plain = await startTestServer();
  });
  afterAll(async () => {
    await trusting?.close();
    await plain?.close();
  });

  it('believes X-Forwarded-For from a listed proxy, and only then', async () => {
    expect(await lastIpAfterLogin(trusting, 'proxied@example.com')).toBe('203.0.113.7');
    expect(await lastIpAfterLogin(plain, 'direct@example.com')).not.toBe('203.0.113.7');
  });

  it('refuses a list entry that is not an IP or CIDR, naming the key', () => {
    expect(loadConfig({ GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/8,192.168.1.1' }).trustedProxies).toEqual(['10.0.0.0/8', '192.168.1.1']);
    for (const bad of ['proxy.example.com', '10.0.0.0/33', '::1/129', '10.0.0.1/x']) {
      expect(() => loadConfig({ GATEHOUSE_TRUSTED_PROXIES: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ GATEHOUSE_SMS_GATEWAY_URL: 'ftp://sms' })).toThrow(/GATEHOUSE_SMS_GATEWAY_URL/);
    expect(loadConfig({ GATEHOUSE_SMS_GATEWAY_URL: 'https://sms.example/send' }).smsGatewayUrl).toBe('https://sms.example/send');
  });
});
