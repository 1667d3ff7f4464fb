/**
 * OpenID Connect Back-Channel Logout 1.0 over real HTTP: clients registered with `oidc_logout`
 * (the reference's shape) take part in a session through the hosted login; when the session ends, a real HTTP
 * receiver gets a form-encoded `logout_token` that jose verifies against our published JWKS
 * (createRemoteJWKSet), with the claims §2.4 requires. Also: retries through the delivery worker, a logout that
 * answers while the receiver hangs, the initiators (logout, block, password reset through the emailed link, each
 * told only to the clients that chose it), bad settings refused, and initiators never raised here refused rather
 * than stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver, type ReceivedRequest } from '../../events/test-receiver.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { postgresAvailable } from '../../test-support/services.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser } from '../../test-support/sign-in.js';
import { linkIn, startTestSmtp, type TestSmtp } from '../../test-support/smtp.js';
import { BACKCHANNEL_LOGOUT_EVENT } from './logout-token.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('OIDC Back-Channel Logout (%s)', (dialect) => {
  let server: TestServer;
  let receiverA: Receiver;
  let receiverB: Receiver;
  let appA: { client_id: string };
  let appB: { client_id: string };
  let quiet: { client_id: string };
  let userId: string;
  let smtp: TestSmtp;
  const email = 'bcl@example.com';

  beforeAll(async () => {
    smtp = await startTestSmtp();
    server = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url } });
    [receiverA, receiverB] = await Promise.all([startReceiver(), startReceiver()]);
    appA = await createApp(server, { oidc_logout: { backchannel_logout_urls: [receiverA.url] } });
    // Every initiator, so a block or a password reset reaches it too.
    appB = await createApp(server, { oidc_logout: { backchannel_logout_urls: [receiverB.url], backchannel_logout_initiators: { mode: 'all' } } });
    quiet = await createApp(server);
    userId = (await createUser(server, email, PASSWORD)).user_id;
  });
  afterAll(async () => {
    await Promise.all([receiverA?.close(), receiverB?.close()]);
    await server?.close();
    await smtp?.close();
  });

  const jwks = () => createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));

  function pkce(): { verifier: string; challenge: string } {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  }

  function authorizeQuery(clientId: string, challenge: string, extra: Record<string, string> = {}): Record<string, string> {
    return { client_id: clientId, response_type: 'code', redirect_uri: CALLBACK, scope: 'openid', state: 's', nonce: 'n', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
  }

  async function idToken(clientId: string, callback: URL, verifier: string): Promise<Record<string, unknown>> {
    const code = callback.searchParams.get('code');
    expect(code, callback.href).toBeTruthy();
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: code!, redirect_uri: CALLBACK, code_verifier: verifier }).toString(),
    });
    expect(res.status).toBe(200);
    return decodeJwt(((await res.json()) as { id_token: string }).id_token);
  }

  /** Logs in through the hosted page with app A, then silently into app B and the quiet app (the same session). */
  async function sessionWithThreeClients(): Promise<{ browser: TestBrowser; sid: unknown }> {
    const browser = new TestBrowser();
    const a = pkce();
    const claims = await idToken(appA.client_id, await logIn(server, browser, authorizeQuery(appA.client_id, a.challenge), { username: email, password: PASSWORD }), a.verifier);
    for (const app of [appB, quiet]) {
      const p = pkce();
      const silent = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${new URLSearchParams(authorizeQuery(app.client_id, p.challenge, { prompt: 'none' }))}`));
      expect(silent).toBeInstanceOf(URL);
      const other = await idToken(app.client_id, silent as URL, p.verifier);
      expect(other.sid).toBe(claims.sid);
    }
    expect(typeof claims.sid).toBe('string');
    return { browser, sid: claims.sid };
  }

  async function verifyLogoutToken(request: ReceivedRequest, clientId: string) {
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const token = new URLSearchParams(request.body).get('logout_token');
    expect(token).toBeTruthy();
    const { payload, protectedHeader } = await jwtVerify(token!, jwks(), { issuer: server.issuer, audience: clientId, typ: 'logout+jwt', requiredClaims: ['iat', 'exp', 'jti', 'sid', 'sub', 'events'] });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload.events).toEqual({ [BACKCHANNEL_LOGOUT_EVENT]: {} });
    expect(payload).not.toHaveProperty('nonce');
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(120);
    return payload;
  }

  it('is announced in discovery', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.backchannel_logout_supported).toBe(true);
    expect(metadata.backchannel_logout_session_supported).toBe(true);
  });

  it('keeps oidc_logout in the reference shape and refuses a malformed one', async () => {
    const read = (await (await management(server, 'GET', `/clients/${appB.client_id}`)).json()) as { oidc_logout: unknown };
    expect(read.oidc_logout).toEqual({ backchannel_logout_urls: [receiverB.url], backchannel_logout_initiators: { mode: 'all' } });
    for (const oidc_logout of [
      { backchannel_logout_urls: ['https://a.example/1', 'https://a.example/2'] },
      { backchannel_logout_urls: ['not a url'] },
      { backchannel_logout_urls: ['https://a.example/'], backchannel_logout_initiators: { mode: 'some' } },
      { backchannel_logout_urls: ['https://a.example/'], backchannel_logout_initiators: { mode: 'custom', selected_initiators: ['whenever'] } },
    ]) {
      const res = await management(server, 'PATCH', `/clients/${quiet.client_id}`, { oidc_logout });
      expect(res.status, JSON.stringify(oidc_logout)).toBe(400);
    }
  });

  it('refuses initiators that nothing here raises, rather than store a promise of logout tokens never sent', async () => {
    for (const initiator of ['session-expired', 'session-revoked', 'email-identifier-changed', 'mfa-phone-unenrolled']) {
      const res = await management(server, 'PATCH', `/clients/${quiet.client_id}`, {
        oidc_logout: { backchannel_logout_urls: ['https://a.example/'], backchannel_logout_initiators: { mode: 'custom', selected_initiators: ['rp-logout', 'idp-logout', initiator] } },
      });
      expect(res.status, initiator).toBe(400);
      expect(((await res.json()) as { message: string }).message).toContain(`${initiator} is not offered`);
    }
    // What the reference asks for in a custom selection (rp-logout, idp-logout) with the ones raised here.
    const chosen = { backchannel_logout_urls: ['https://a.example/'], backchannel_logout_initiators: { mode: 'custom', selected_initiators: ['rp-logout', 'idp-logout', 'password-changed', 'account-deactivated', 'account-deleted'] } };
    const accepted = await management(server, 'PATCH', `/clients/${quiet.client_id}`, { oidc_logout: chosen });
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as { oidc_logout: unknown }).oidc_logout).toEqual(chosen);
    expect((await management(server, 'PATCH', `/clients/${quiet.client_id}`, { oidc_logout: {} })).status).toBe(200);
  });

  it('POSTs a signed logout token to each client of the session when it logs out (/v2/logout)', async () => {
    receiverA.received.length = 0;
    receiverB.received.length = 0;
    const { browser, sid } = await sessionWithThreeClients();
    const logout = await browser.get(`${server.url}/v2/logout?client_id=${appA.client_id}&returnTo=${encodeURIComponent('https://app.example/')}`);
    expect(logout.status).toBe(302);
    const [toA] = await receiverA.waitFor((r) => r.length >= 1);
    const [toB] = await receiverB.waitFor((r) => r.length >= 1);
    const a = await verifyLogoutToken(toA!, appA.client_id);
    const b = await verifyLogoutToken(toB!, appB.client_id);
    for (const payload of [a, b]) {
      expect(payload.sid).toBe(sid);
      expect(payload.sub).toBe(userId);
    }
    expect(a.jti).not.toBe(b.jti);
    // The session is gone: silent authentication now needs a login.
    const p = pkce();
    const after = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${new URLSearchParams(authorizeQuery(appA.client_id, p.challenge, { prompt: 'none' }))}`));
    expect((after as URL).searchParams.get('error')).toBe('login_required');
  });

  it('retries a failed delivery through the worker with the same jti, and answers the logout without waiting (/oidc/logout)', async () => {
    receiverA.received.length = 0;
    // The first attempt fails (503), the second succeeds.
    receiverA.answer = (_request, index) => (index === 0 ? { status: 503 } : { status: 200 });
    receiverB.received.length = 0;
    receiverB.answer = () => 'hang';
    const { browser, sid } = await sessionWithThreeClients();
    const logout = await browser.get(`${server.url}/oidc/logout?client_id=${appA.client_id}`);
    // Answered while B's receiver still holds its delivery open.
    expect(logout.status).toBe(200);
    const received = await receiverA.waitFor((r) => r.length >= 2, 15_000);
    const first = await verifyLogoutToken(received[0]!, appA.client_id);
    const second = await verifyLogoutToken(received[1]!, appA.client_id);
    expect(second.jti).toBe(first.jti);
    expect(second.sid).toBe(sid);
    await receiverB.waitFor((r) => r.length >= 1);
    const row = await server.server.prepared.store.db
      .selectFrom('backchannel_logout_deliveries')
      .selectAll()
      .where('client_id', '=', appA.client_id)
      .where('session_id', '=', sid as string)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('delivered');
    expect(Number(row.attempt_count)).toBe(2);
    receiverA.answer = () => ({ status: 200 });
    receiverB.answer = () => ({ status: 200 });
  }, 30_000);

  it('tells only the clients whose initiators include a block (account-deactivated)', async () => {
    receiverA.received.length = 0;
    receiverB.received.length = 0;
    const { sid } = await sessionWithThreeClients();
    expect((await management(server, 'PATCH', `/users/${encodeURIComponent(userId)}`, { blocked: true })).status).toBe(200);
    const [toB] = await receiverB.waitFor((r) => r.length >= 1);
    expect((await verifyLogoutToken(toB!, appB.client_id)).sid).toBe(sid);
    // A (default initiators: rp-logout, idp-logout) is not told; its row was never queued.
    const rows = await server.server.prepared.store.db.selectFrom('backchannel_logout_deliveries').select(['client_id', 'initiator']).where('session_id', '=', sid as string).execute();
    expect(rows).toEqual([{ client_id: appB.client_id, initiator: 'account-deactivated' }]);
    expect(receiverA.received).toHaveLength(0);
    expect((await management(server, 'PATCH', `/users/${encodeURIComponent(userId)}`, { blocked: false })).status).toBe(200);
  });

  it('refuses to deliver to a public address over plain http (the webhook destination rules)', async () => {
    const app = await createApp(server, { oidc_logout: { backchannel_logout_urls: ['http://8.8.8.8/logout'] } });
    const browser = new TestBrowser();
    const p = pkce();
    await idToken(app.client_id, await logIn(server, browser, authorizeQuery(app.client_id, p.challenge), { username: email, password: PASSWORD }), p.verifier);
    expect((await browser.get(`${server.url}/v2/logout?client_id=${app.client_id}`)).status).toBe(302);
    const db = server.server.prepared.store.db;
    let row;
    for (let i = 0; i < 100; i++) {
      row = await db.selectFrom('backchannel_logout_deliveries').selectAll().where('client_id', '=', app.client_id).executeTakeFirst();
      if (row?.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(row?.status).toBe('failed');
    expect(row?.last_error).toMatch(/^Refused: .*plain http/);
  });

  // Last: it changes the user's password.
  it('tells the clients whose initiators include a password reset (password-changed) when the emailed link ends the session', async () => {
    receiverA.received.length = 0;
    receiverB.received.length = 0;
    const { sid } = await sessionWithThreeClients();
    const asked = await fetch(`${server.url}/dbconnections/change_password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: appA.client_id, email, connection: 'Username-Password-Authentication' }),
    });
    expect(asked.status).toBe(200);
    const mail = await smtp.waitFor((e) => e.to.includes(email) && e.subject.startsWith('Reset your password'));
    const browser = new TestBrowser();
    const page = await browser.get(linkIn(mail, `${server.url}/u/reset-password/ticket?ticket=`));
    expect(page.status).toBe(200);
    const form = readForm(await page.text(), server.url);
    const newPassword = 'Another-correct-horse-7';
    const posted = await browser.post(form.action, { ...form.fields, password: newPassword, password_confirmation: newPassword });
    expect(posted.status).toBe(303);

    const [toB] = await receiverB.waitFor((r) => r.length >= 1);
    const payload = await verifyLogoutToken(toB!, appB.client_id);
    expect(payload).toMatchObject({ sid, sub: userId });
    // A (default initiators) is not told; the quiet app has no URL.
    const rows = await server.server.prepared.store.db.selectFrom('backchannel_logout_deliveries').select(['client_id', 'initiator']).where('session_id', '=', sid as string).execute();
    expect(rows).toEqual([{ client_id: appB.client_id, initiator: 'password-changed' }]);
    expect(receiverA.received).toHaveLength(0);
  });
});
