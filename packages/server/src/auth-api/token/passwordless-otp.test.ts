/**
 * The passwordless/otp grant over real HTTP on both dialects: tokens for the code sent, users created on first
 * login (with their user.created event) and found again after, single use, three tries, five minutes, signup
 * disabled, blocked users, and the client rules. Codes come from a real SMTP server (email) and from the SMS
 * dev sink, which keeps the messages in this process when no gateway is configured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../events/outbox.js';
import { devSmsMessages } from '../../messaging/sms.js';
import { findPasswordlessCode } from '../../store/passwordless-codes.js';
import { findUser, findUserInConnection } from '../../store/users.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { CODE_LIFETIME_MS } from '../passwordless/codes.js';
import { verifyPasswordlessOtp } from '../passwordless/otp.js';
import { codeIn, createPasswordlessConnection, postJson, startSmtp, type TestSmtp } from '../passwordless/testing.js';
import { createClient, createUser, decodeJwt, type TestClient } from '../user-tokens/testing.js';
import { PASSWORDLESS_OTP_GRANT } from './passwordless-otp.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const WRONG_PHONE = { error: 'invalid_grant', error_description: 'Wrong phone number or verification code.' };
const SPENT = { error: 'invalid_grant', error_description: 'The verification code has expired or was tried too many times. Ask for a new one.' };

describe.each(dialects)('POST /oauth/token with the passwordless/otp grant on %s', (dialect) => {
  let server: TestServer;
  let smtp: TestSmtp;
  let app: TestClient;
  let email: { id: string; name: string };
  let sms: { id: string; name: string };
  let closed: { id: string; name: string };
  let n = 0;
  const phone = () => `+1555${String(Date.now() % 1000).padStart(3, '0')}${String(++n).padStart(4, '0')}`;
  const db = () => server.server.prepared.store.db;
  const tenant = () => server.server.prepared.bootstrap!.tenant;
  const token = (body: Record<string, unknown>, client: TestClient = app) => postJson(server, '/oauth/token', { grant_type: PASSWORDLESS_OTP_GRANT, ...client.auth, ...body });

  /** Starts an SMS login and reads the code the dev sink kept. */
  async function smsCode(to: string, connection = sms, client: TestClient = app): Promise<string> {
    const res = await postJson(server, '/passwordless/start', { ...client.auth, connection: connection.name, phone_number: to, send: 'code' });
    expect(res.status).toBe(200);
    const message = devSmsMessages(tenant().id).filter((m) => m.to === to).at(-1);
    return codeIn(message!.body);
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url } });
    app = await createClient(server, { grant_types: ['implicit', PASSWORDLESS_OTP_GRANT, 'refresh_token'] });
    email = await createPasswordlessConnection(server, 'email', [app.client.client_id]);
    sms = await createPasswordlessConnection(server, 'sms', [app.client.client_id]);
    closed = await createPasswordlessConnection(server, 'sms', [app.client.client_id], { disable_signup: true });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('creates an email|… user on the first login, with its user.created event, and finds it again on the next', async () => {
    const to = `first-${dialect}@example.com`;
    await postJson(server, '/passwordless/start', { ...app.auth, connection: email.name, email: to, send: 'code' });
    const res = await token({ realm: email.name, username: to, otp: codeIn((await smtp.waitFor(to)).text), scope: 'openid email offline_access' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'openid email offline_access', refresh_token: expect.any(String) });
    const { payload } = decodeJwt(res.body.id_token as string);
    expect(payload).toMatchObject({ sub: expect.stringMatching(/^email\|[0-9a-f]{24}$/), email: to, email_verified: true, aud: app.client.client_id });
    const userId = payload.sub as string;
    const created = (await listEvents(db(), tenant().id, { type: 'user.created' })).filter((e) => (e.data.object as { user_id?: string }).user_id === userId);
    expect(created).toHaveLength(1);

    await postJson(server, '/passwordless/start', { ...app.auth, connection: email.name, email: to, send: 'code' });
    const second = await token({ realm: email.name, username: to, otp: codeIn((await smtp.waitFor(to, 1)).text), scope: 'openid' });
    expect(second.status).toBe(200);
    expect(decodeJwt(second.body.id_token as string).payload.sub).toBe(userId);
    expect(await findUser(db(), tenant().id, userId)).toMatchObject({ logins_count: 2, last_ip: '127.0.0.1', connection_id: email.id });
    expect((await listEvents(db(), tenant().id, { type: 'user.created' })).filter((e) => (e.data.object as { user_id?: string }).user_id === userId)).toHaveLength(1);
  });

  it('creates an sms|… user with the verified phone number', async () => {
    const to = phone();
    const res = await token({ realm: sms.name, username: to, otp: await smsCode(to), scope: 'openid' });
    expect(res.status).toBe(200);
    const sub = decodeJwt(res.body.id_token as string).payload.sub as string;
    expect(sub).toMatch(/^sms\|[0-9a-f]{24}$/);
    expect(await findUser(db(), tenant().id, sub)).toMatchObject({ phone_number: to, phone_verified: true, email: null, password_hash: null });
  });

  it('a code works once: the replay is refused', async () => {
    const to = phone();
    const code = await smsCode(to);
    expect((await token({ realm: sms.name, username: to, otp: code })).status).toBe(200);
    const replay = await token({ realm: sms.name, username: to, otp: code });
    expect(replay.status).toBe(403);
    expect(replay.body).toEqual(WRONG_PHONE);
  });

  it('three wrong tries end the code: the right one is refused after them', async () => {
    const to = phone();
    const code = await smsCode(to);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 3; i++) {
      const res = await token({ realm: sms.name, username: to, otp: wrong });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(WRONG_PHONE);
    }
    expect(await findPasswordlessCode(db(), sms.id, to)).toBeUndefined();
    const late = await token({ realm: sms.name, username: to, otp: code });
    expect(late.status).toBe(403);
  });

  it('two wrong tries leave the third for the right code', async () => {
    const to = phone();
    const code = await smsCode(to);
    const wrong = code === '111111' ? '222222' : '111111';
    expect((await token({ realm: sms.name, username: to, otp: wrong })).status).toBe(403);
    expect((await token({ realm: sms.name, username: to, otp: wrong })).status).toBe(403);
    expect((await token({ realm: sms.name, username: to, otp: code })).status).toBe(200);
  });

  it('parallel guesses share the three attempts: after ten at once the right code is spent', async () => {
    const to = phone();
    const code = await smsCode(to);
    const wrong = code === '333333' ? '444444' : '333333';
    const answers = await Promise.all(Array.from({ length: 10 }, () => token({ realm: sms.name, username: to, otp: wrong })));
    expect(answers.every((a) => a.status === 403)).toBe(true);
    expect((await token({ realm: sms.name, username: to, otp: code })).status).toBe(403);
  });

  it('a code expires after five minutes', async () => {
    const to = phone();
    const code = await smsCode(to);
    // The clock moved past the lifetime: passed through code, no waiting.
    const later = await verifyPasswordlessOtp(server.server.services, tenant(), { connection: sms.name, username: to, otp: code }, { now: Date.now() + CODE_LIFETIME_MS + 1 });
    expect(later).toEqual({ outcome: 'expired' });
    expect(await findPasswordlessCode(db(), sms.id, to)).toBeUndefined();

    // Over HTTP, with the stored expiry moved into the past.
    const other = phone();
    const fresh = await smsCode(other);
    const earlier = await verifyPasswordlessOtp(server.server.services, tenant(), { connection: sms.name, username: other, otp: fresh }, { now: Date.now() + CODE_LIFETIME_MS - 5_000 });
    expect(earlier.outcome).toBe('ok'); // still good just before the five minutes are up
    const third = phone();
    const stale = await smsCode(third);
    await db().updateTable('passwordless_codes').set({ expires_at: Date.now() - 1 }).where('connection_id', '=', sms.id).where('identifier', '=', third).execute();
    const res = await token({ realm: sms.name, username: third, otp: stale });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(SPENT);
  });

  it('a connection that disables signup refuses new users after the right code, and lets existing ones in', async () => {
    const to = phone();
    const res = await token({ realm: closed.name, username: to, otp: await smsCode(to, closed) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'access_denied', error_description: 'Signups are disabled for this connection' });
    expect(await findUserInConnection(db(), closed.id, { phone_number: to })).toBeUndefined();

    const existing = phone();
    await createUser(server, { user_id: `sms|${'a'.repeat(20)}${String(n).padStart(4, '0')}`, connection_id: closed.id, email: null, phone_number: existing, password_hash: null });
    const ok = await token({ realm: closed.name, username: existing, otp: await smsCode(existing, closed), scope: 'openid' });
    expect(ok.status).toBe(200);
  });

  it('a blocked user is refused with 401 unauthorized after the right code', async () => {
    const to = phone();
    await createUser(server, { user_id: `sms|${'b'.repeat(20)}${String(n).padStart(4, '0')}`, connection_id: sms.id, email: null, phone_number: to, password_hash: null, blocked: true });
    const res = await token({ realm: sms.name, username: to, otp: await smsCode(to) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', error_description: 'user is blocked' });
  });

  it('only clients allowed the grant may use it, and a code works only for the client that asked for it', async () => {
    const plain = await createClient(server, { grant_types: ['implicit'] });
    const res = await token({ realm: sms.name, username: phone(), otp: '123456' }, plain);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('unauthorized_client');

    const other = await createClient(server, { grant_types: [PASSWORDLESS_OTP_GRANT] });
    await db().insertInto('connection_clients').values({ connection_id: sms.id, client_id: other.client.client_id, tenant_id: tenant().id }).execute();
    const to = phone();
    const code = await smsCode(to);
    const stolen = await token({ realm: sms.name, username: to, otp: code }, other);
    expect(stolen.status).toBe(403);
    expect(stolen.body).toEqual(WRONG_PHONE);
  });

  it('answers missing or bad parameters with 400 invalid_request, never a 500', async () => {
    const cases: Record<string, unknown>[] = [
      { realm: sms.name, username: phone() },
      { realm: sms.name, otp: '123456' },
      { username: phone(), otp: '123456' },
      { realm: 'no-such-connection', username: phone(), otp: '123456' },
      { realm: 'Username-Password-Authentication', username: phone(), otp: '123456' },
    ];
    for (const body of cases) {
      const res = await token(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
    for (const otp of ['', 'abcdef', '1'.repeat(99), '12 34 56']) {
      const res = await token({ realm: sms.name, username: phone(), otp });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    const badPhone = await token({ realm: sms.name, username: 'not a phone', otp: '123456' });
    expect(badPhone.status).toBe(403);
    expect(badPhone.body).toEqual(WRONG_PHONE);
  });
});
