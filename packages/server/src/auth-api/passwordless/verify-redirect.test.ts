/**
 * The browser ends of passwordless login over real HTTP on both dialects, driven by TestBrowser (cookie jar,
 * manual redirects): the emailed magic link (from a real SMTP server) finishing the stored authParams like
 * /authorize, and auth0-js's passwordlessVerify pair, POST /passwordless/verify then GET
 * /passwordless/verify_redirect. Both leave an SSO session; both are single use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devSmsMessages } from '../../messaging/sms.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { TestBrowser } from '../../test-support/sign-in.js';
import { createClient, decodeJwt, REDIRECT_URI, type TestClient } from '../user-tokens/testing.js';
import { codeIn, createPasswordlessConnection, linkIn, postJson, startSmtp, type TestSmtp } from './testing.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
// auth0-js states use - . _ ~ and must come back byte for byte.
const STATE = 'xwDEAm2MAvLGs.SHf13AlpBCgGD-fN~_';

function fragmentOf(url: URL | Response): URLSearchParams {
  if (!(url instanceof URL)) throw new Error(`expected a redirect to the client, got ${url.status}`);
  expect(`${url.origin}${url.pathname}`).toBe(REDIRECT_URI);
  return new URLSearchParams(url.hash.slice(1));
}

describe.each(dialects)('passwordless in the browser on %s', (dialect) => {
  let server: TestServer;
  let smtp: TestSmtp;
  let app: TestClient;
  let email: { id: string; name: string };
  let sms: { id: string; name: string };
  let n = 0;
  const phone = () => `+1444${String(Date.now() % 1000).padStart(3, '0')}${String(++n).padStart(4, '0')}`;
  const tenantId = () => server.server.prepared.bootstrap!.tenant.id;

  async function smsCode(to: string): Promise<string> {
    const res = await postJson(server, '/passwordless/start', { client_id: app.client.client_id, connection: sms.name, phone_number: to, send: 'code' });
    expect(res.status).toBe(200);
    return codeIn(devSmsMessages(tenantId()).filter((m) => m.to === to).at(-1)!.body);
  }

  function verifyRedirectUrl(to: string, code: string, extra: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      client_id: app.client.client_id,
      response_type: 'token id_token',
      redirect_uri: REDIRECT_URI,
      connection: sms.name,
      phone_number: to,
      verification_code: code,
      state: STATE,
      nonce: 'verify-nonce',
      scope: 'openid',
      auth0Client: 'eyJuYW1lIjoiYXV0aDAuanMiLCJ2ZXJzaW9uIjoiMTAuMi4xIn0=',
      ...extra,
    });
    return `${server.url}/passwordless/verify_redirect?${query}`;
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url } });
    app = await createClient(server, { grant_types: ['implicit', 'authorization_code'] });
    email = await createPasswordlessConnection(server, 'email', [app.client.client_id]);
    sms = await createPasswordlessConnection(server, 'sms', [app.client.client_id]);
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('the emailed link signs in once and finishes the stored authParams like /authorize, leaving an SSO session', async () => {
    const to = `link-${dialect}@example.com`;
    const start = await postJson(server, '/passwordless/start', {
      client_id: app.client.client_id,
      connection: email.name,
      email: to,
      send: 'link',
      authParams: { response_type: 'token id_token', redirect_uri: REDIRECT_URI, scope: 'openid email', state: STATE, nonce: 'link-nonce' },
    });
    expect(start.status).toBe(200);
    const mail = await smtp.waitFor(to);
    const link = linkIn(mail.text);
    expect(link.startsWith(`${server.url}/passwordless/verify_redirect?token=`)).toBe(true);
    expect(mail.raw).not.toMatch(/\b\d{6}\b.*verification code/); // a link, not a code

    const browser = new TestBrowser();
    const fragment = fragmentOf(await browser.follow(server.url, await browser.get(link)));
    expect(fragment.get('state')).toBe(STATE);
    expect(fragment.get('token_type')).toBe('Bearer');
    const { payload } = decodeJwt(fragment.get('id_token')!);
    expect(payload).toMatchObject({ nonce: 'link-nonce', email: to, email_verified: true, aud: app.client.client_id, sid: expect.any(String) });
    expect(payload.sub).toMatch(/^email\|[0-9a-f]{24}$/);

    // The session answers silent authentication afterwards.
    const silent = await browser.follow(
      server.url,
      await browser.get(`${server.url}/authorize?${new URLSearchParams({ client_id: app.client.client_id, response_type: 'id_token', redirect_uri: REDIRECT_URI, scope: 'openid', nonce: 'n2', state: 's2', prompt: 'none' })}`),
    );
    expect(decodeJwt(fragmentOf(silent).get('id_token')!).payload.sub).toBe(payload.sub);

    // The link works once, in any browser.
    const replay = await new TestBrowser().get(link);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toMatch(/expired or was already used/);
  });

  it('a link refuses what /authorize would refuse: authParams are checked at start', async () => {
    const res = await postJson(server, '/passwordless/start', {
      client_id: app.client.client_id,
      connection: email.name,
      email: `bad-link-${dialect}@example.com`,
      send: 'link',
      authParams: { response_type: 'token', redirect_uri: 'https://evil.example/callback' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error_description).toMatch(/Allowed Callback URLs/);
    const unknown = await new TestBrowser().get(`${server.url}/passwordless/verify_redirect?token=not-a-real-token`);
    expect(unknown.status).toBe(400);
  });

  it('POST /passwordless/verify then GET /passwordless/verify_redirect sign in with the code, once', async () => {
    const to = phone();
    const code = await smsCode(to);
    const verify = await postJson(server, '/passwordless/verify', { connection: sms.name, verification_code: code, phone_number: to, client_id: app.client.client_id });
    expect(verify.status).toBe(200);
    const browser = new TestBrowser();
    const fragment = fragmentOf(await browser.follow(server.url, await browser.get(verifyRedirectUrl(to, code))));
    expect(fragment.get('state')).toBe(STATE);
    const { payload } = decodeJwt(fragment.get('id_token')!);
    expect(payload).toMatchObject({ nonce: 'verify-nonce', aud: app.client.client_id, sid: expect.any(String) });
    expect(payload.sub).toMatch(/^sms\|[0-9a-f]{24}$/);

    const replay = fragmentOf(await browser.follow(server.url, await browser.get(verifyRedirectUrl(to, code))));
    expect(replay.get('error')).toBe('access_denied');
    expect(replay.get('error_description')).toBe('Wrong phone number or verification code.');
    expect(replay.get('state')).toBe(STATE);
  });

  it('verify_redirect refuses a code that /passwordless/verify did not accept first', async () => {
    const to = phone();
    const code = await smsCode(to);
    const fragment = fragmentOf(await new TestBrowser().follow(server.url, await new TestBrowser().get(verifyRedirectUrl(to, code))));
    expect(fragment.get('error')).toBe('access_denied');
    // The code itself is still pending: verify accepts it afterwards.
    expect((await postJson(server, '/passwordless/verify', { connection: sms.name, verification_code: code, phone_number: to, client_id: app.client.client_id })).status).toBe(200);
  });

  it('a wrong guess at verify_redirect ends a verified code', async () => {
    const to = phone();
    const code = await smsCode(to);
    expect((await postJson(server, '/passwordless/verify', { connection: sms.name, verification_code: code, phone_number: to, client_id: app.client.client_id })).status).toBe(200);
    const wrong = code === '999999' ? '999998' : '999999';
    const browser = new TestBrowser();
    expect(fragmentOf(await browser.follow(server.url, await browser.get(verifyRedirectUrl(to, wrong)))).get('error')).toBe('access_denied');
    expect(fragmentOf(await browser.follow(server.url, await browser.get(verifyRedirectUrl(to, code)))).get('error')).toBe('access_denied');
  });

  it('/passwordless/verify answers wrong codes with 403 invalid_grant, and bad input with 4xx', async () => {
    const to = phone();
    const code = await smsCode(to);
    const wrong = code === '123123' ? '321321' : '123123';
    const res = await postJson(server, '/passwordless/verify', { connection: sms.name, verification_code: wrong, phone_number: to, client_id: app.client.client_id });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'Wrong phone number or verification code.' });
    for (const body of [
      {},
      { client_id: app.client.client_id, connection: sms.name, phone_number: to },
      { client_id: app.client.client_id, connection: sms.name, verification_code: code },
      { client_id: 'unknown-client', connection: sms.name, phone_number: to, verification_code: code },
      { client_id: app.client.client_id, connection: 'nope', phone_number: to, verification_code: code },
      { client_id: app.client.client_id, connection: sms.name, phone_number: { a: 1 }, verification_code: code },
    ]) {
      const bad = await postJson(server, '/passwordless/verify', body);
      expect(bad.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
      expect(bad.body).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    }
  });

  it('verify_redirect never redirects to an unregistered URI, and never answers 500 to odd queries', async () => {
    const to = phone();
    const evil = await new TestBrowser().get(verifyRedirectUrl(to, '123456', { redirect_uri: 'https://evil.example/cb' }));
    expect(evil.status).toBe(400);
    expect(evil.headers.get('location')).toBeNull();
    for (const query of ['', 'client_id=', 'token=', `client_id=${app.client.client_id}&connection=${sms.name}`, 'token=a&token=b', `verification_code=${'9'.repeat(5000)}`]) {
      const res = await new TestBrowser().get(`${server.url}/passwordless/verify_redirect?${query}`);
      expect(res.status, query).toBeGreaterThanOrEqual(300);
      expect(res.status, query).toBeLessThan(500);
    }
  });
});
