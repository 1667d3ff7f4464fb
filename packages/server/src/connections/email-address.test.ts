/**
 * One account per normalised address (#19): `normalizeEmail` itself, then every door over real HTTP on both
 * dialects with a full-width and an upper-case spelling of an address that exists: signup (/dbconnections,
 * hosted page), the Management API (create, update, search, users-by-email, user blocks), every login,
 * passwordless and password reset.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { PASSWORDLESS_OTP_GRANT } from '../auth-api/token/passwordless-otp.js';
import { createPasswordlessConnection } from '../auth-api/passwordless/testing.js';
import { openBody } from '../messaging/email-outbox.js';
import { postgresAvailable } from '../test-support/services.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, logIn, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { isEmailAddress, normalizeEmail } from './email-address.js';

type Json = Record<string, unknown>;

/** The full-width form of the printable ASCII in `text` (U+FF01…U+FF5E), as an IME or a copy from a PDF gives it. */
function fullWidth(text: string): string {
  return [...text].map((c) => (c >= '!' && c <= '~' ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join('');
}

describe('normalizeEmail', () => {
  it('maps compatibility forms and case to one address, and is idempotent', () => {
    expect(normalizeEmail('ｕｓｅｒ@example.com')).toBe('user@example.com');
    expect(normalizeEmail(fullWidth('User@Example.COM'))).toBe('user@example.com');
    expect(normalizeEmail('  ﬁnance@EXAMPLE.com\u3000')).toBe('finance@example.com');
    expect(normalizeEmail('K\u212a@example.com')).toBe('kk@example.com'); // KELVIN SIGN
    expect(normalizeEmail('Straße@example.de')).toBe('straße@example.de'); // lower case, not case folding
    for (let code = 0; code < 0x30000; code += 7) {
      if (code >= 0xd800 && code < 0xe000) continue;
      const text = `a${String.fromCodePoint(code)}b@x.example`;
      expect(normalizeEmail(normalizeEmail(text)), code.toString(16)).toBe(normalizeEmail(text));
    }
  });

  it('checks the shape of an address', () => {
    expect(isEmailAddress('user@example.com')).toBe(true);
    for (const bad of ['user', 'user@', '@example.com', 'a b@example.com', 'user@example', `${'a'.repeat(320)}@example.com`]) expect(isEmailAddress(bad), bad).toBe(false);
  });
});

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('one account per normalised address (%s)', (dialect) => {
  let server: TestServer;
  let app: TestApp;
  const PASSWORD = 'Corr3ct-Horse!-gatehouse';

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await management(server, method, path, body);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  }
  async function post(path: string, body: Json, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : { text }) as Json };
  }
  /** A user made over the Management API with an ASCII address; returns it and its full-width spelling. */
  async function existing(): Promise<{ id: string; email: string; wide: string; upper: string }> {
    const email = `someone-${randomBytes(4).toString('hex')}@example.com`;
    const created = await call('POST', '/users', { connection: DATABASE_CONNECTION_NAME, email, password: PASSWORD });
    expect(created.status).toBe(201);
    return { id: created.body.user_id as string, email, wide: fullWidth(email), upper: email.toUpperCase() };
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    app = await createApp(server, {
      app_type: 'regular_web',
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'password', PASSWORD_REALM_GRANT, PASSWORDLESS_OTP_GRANT],
      cross_origin_authentication: true,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a second signup under another spelling, at /dbconnections/signup and on the hosted page', async () => {
    const user = await existing();
    for (const spelling of [user.wide, user.upper, `${fullWidth(user.email.split('@')[0]!)}@example.com`]) {
      const res = await post('/dbconnections/signup', { client_id: app.client_id, connection: DATABASE_CONNECTION_NAME, email: spelling, password: PASSWORD });
      expect(res, spelling).toMatchObject({ status: 400, body: { code: 'user_exists' } });
    }
    // A new address typed full width is stored in its plain form.
    const fresh = `fresh-${randomBytes(4).toString('hex')}@example.com`;
    const signedUp = await post('/dbconnections/signup', { client_id: app.client_id, connection: DATABASE_CONNECTION_NAME, email: fullWidth(fresh), password: PASSWORD });
    expect(signedUp).toMatchObject({ status: 200, body: { email: fresh } });

    const browser = new TestBrowser();
    const query = new URLSearchParams({ client_id: app.client_id, redirect_uri: 'https://app.example/callback', response_type: 'code', screen_hint: 'signup', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const page = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${query}`));
    if (page instanceof URL) throw new Error(`expected the signup page, went to ${page.href}`);
    const form = readForm(await page.text(), server.url);
    const answer = await browser.follow(server.url, await browser.post(form.action, { ...form.fields, email: user.wide, password: PASSWORD }));
    if (answer instanceof URL) throw new Error(`signed up a second account: ${answer.href}`);
    expect(await answer.text()).toContain('An account with this email or username already exists');
    const users = await call('GET', `/users-by-email?email=${encodeURIComponent(user.email)}`);
    expect((users.body as unknown as Json[]).map((u) => u.user_id)).toEqual([user.id]);
  });

  it('refuses the Management API a second user or an update onto a taken address, whatever its case', async () => {
    const user = await existing();
    expect((await call('POST', '/users', { connection: DATABASE_CONNECTION_NAME, email: user.upper, password: PASSWORD })).status).toBe(409);
    const other = await existing();
    expect((await call('PATCH', `/users/${encodeURIComponent(other.id)}`, { email: user.upper })).status).toBe(409);
    const renamed = await call('PATCH', `/users/${encodeURIComponent(other.id)}`, { email: `Renamed-${other.email.toUpperCase()}` });
    expect(renamed).toMatchObject({ status: 200, body: { email: `renamed-${other.email}` } });
  });

  it('finds the user under any spelling: search, users-by-email, user blocks', async () => {
    const user = await existing();
    for (const spelling of [user.wide, user.upper]) {
      const search = await call('GET', `/users?q=${encodeURIComponent(`email:"${spelling}"`)}&search_engine=v3`);
      expect((search.body as unknown as Json[]).map((u) => u.user_id), spelling).toEqual([user.id]);
      const byEmail = await call('GET', `/users-by-email?email=${encodeURIComponent(spelling)}`);
      expect((byEmail.body as unknown as Json[]).map((u) => u.user_id), spelling).toEqual([user.id]);
    }
    const prefix = fullWidth(user.email.slice(0, 12));
    const wildcard = await call('GET', `/users?q=${encodeURIComponent(`email:${prefix}*`)}&search_engine=v3`);
    expect((wildcard.body as unknown as Json[]).map((u) => u.user_id)).toEqual([user.id]);
    expect((await call('GET', `/user-blocks?identifier=${encodeURIComponent(user.wide)}`)).body).toEqual({ blocked_for: [] });
  });

  it('logs in with any spelling, through every login door', async () => {
    const user = await existing();
    const realm = await post('/oauth/token', { grant_type: PASSWORD_REALM_GRANT, client_id: app.client_id, client_secret: app.client_secret, realm: DATABASE_CONNECTION_NAME, username: user.wide, password: PASSWORD, scope: 'openid' });
    expect(realm.status).toBe(200);
    const grant = await post('/oauth/token', { grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: user.upper, password: PASSWORD });
    expect(grant.status).toBe(200);
    const embedded = await post(
      '/co/authenticate',
      { client_id: app.client_id, username: user.wide, password: PASSWORD, realm: DATABASE_CONNECTION_NAME, credential_type: PASSWORD_REALM_GRANT },
      { origin: 'https://app.example' },
    );
    expect(embedded.status).toBe(200);
    const back = await logIn(
      server,
      new TestBrowser(),
      { client_id: app.client_id, redirect_uri: 'https://app.example/callback', response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' },
      { username: user.wide, password: PASSWORD },
    );
    expect(back.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('passwordless: a code asked for under one spelling logs in under another, as one user', async () => {
    const connection = await createPasswordlessConnection(server, 'email', [app.client_id]);
    const address = `pwl-${randomBytes(4).toString('hex')}@example.com`;
    const otpLogin = async (spelling: string): Promise<string> => {
      const started = await post('/passwordless/start', { client_id: app.client_id, client_secret: app.client_secret, connection: connection.name, email: spelling, send: 'code' });
      expect(started).toMatchObject({ status: 200, body: { email: address } });
      const db = server.server.prepared.store.db;
      const { sealer } = server.server.prepared;
      const rows = await db.selectFrom('email_outbox').select(['id', 'body_sealed', 'recipient']).where('recipient', '=', address).orderBy('created_at', 'desc').execute();
      const code = /\b(\d{6})\b/.exec(openBody(sealer, rows[0]!)!.text)![1]!;
      const token = await post('/oauth/token', { grant_type: PASSWORDLESS_OTP_GRANT, client_id: app.client_id, client_secret: app.client_secret, realm: connection.name, username: address.toUpperCase(), otp: code, scope: 'openid' });
      expect(token.status).toBe(200);
      const idToken = token.body.id_token as string;
      return (JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
    };
    const first = await otpLogin(fullWidth(address));
    const second = await otpLogin(address.toUpperCase());
    expect(second).toBe(first);
  });

  it('password reset: a full-width address reaches the user', async () => {
    const user = await existing();
    const res = await post('/dbconnections/change_password', { client_id: app.client_id, connection: DATABASE_CONNECTION_NAME, email: user.wide });
    expect(res.status).toBe(200);
    const db = server.server.prepared.store.db;
    await expect
      .poll(async () => (await db.selectFrom('user_tickets').select('user_id').where('user_id', '=', user.id).where('purpose', '=', 'password_reset').execute()).length)
      .toBe(1);
  });
});
