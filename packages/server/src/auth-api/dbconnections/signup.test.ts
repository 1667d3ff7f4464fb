/**
 * POST /dbconnections/signup over real HTTP on both dialects, with a real SMTP server receiving the
 * verification email: the success shape, every error code in the /dbconnections shape, the verification link,
 * CORS for the client's origins, and bad input that must never reach a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../store/tenants.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { postgresAvailable } from '../../test-support/services.js';
import { createApp, management, type TestApp } from '../../test-support/sign-in.js';
import { linkIn, startTestSmtp, type TestSmtp } from '../../test-support/smtp.js';

const DB = 'Username-Password-Authentication';
const PASSWORD = 'Correct-Horse-42';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`POST /dbconnections/signup (${dialect})`, () => {
    let smtp: TestSmtp;
    let test: TestServer;
    let app: TestApp;

    async function signup(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
      const response = await fetch(`${test.url}/dbconnections/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
    }

    /** A database connection with these options, enabled for the app. */
    async function connection(name: string, options: Record<string, unknown>, clients = [app.client_id]): Promise<void> {
      const response = await management(test, 'POST', '/connections', { name, strategy: 'auth0', options, enabled_clients: clients });
      expect(response.status).toBe(201);
    }

    beforeAll(async () => {
      smtp = await startTestSmtp();
      test = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url } });
      // Many signups from one IP in a row: lift this file's rate limits.
      const { tenant } = test.server.prepared.bootstrap!;
      const unlimited = { capacity: 100_000, per_second: 100_000 };
      await updateTenant(test.server.prepared.store.db, tenant.id, { settings: { ...tenant.settings, rate_limits: { dbconnections: unlimited, management: unlimited } } });
      test.server.services.tenants.invalidate();
      app = await createApp(test, { allowed_origins: ['https://shop.example'] });
      await connection('with-usernames', { requires_username: true, validation: { username: { min: 3, max: 20 } } });
      await connection('strict', { passwordPolicy: 'excellent', password_dictionary: { enable: true, dictionary: ['gatehouse-rocks-99'] }, password_no_personal_info: { enable: true } });
      await connection('closed', { disable_signup: true });
      await connection('quiet', { send_verification_email: false });
      await connection('not-for-this-app', {}, []);
    });
    afterAll(async () => {
      await test.close();
      await smtp.close();
    });

    it('creates the user and answers {_id, email, email_verified, profile fields, user_metadata}', async () => {
      const { status, body, headers } = await signup({
        client_id: app.client_id,
        connection: DB,
        email: 'Ada@Example.com',
        password: PASSWORD,
        given_name: 'Ada',
        family_name: 'Lovelace',
        name: 'Ada Lovelace',
        nickname: 'ada',
        picture: 'https://img.example/ada.png',
        user_metadata: { plan: 'pro', team: 'engines' },
        state: 'ignored-extra-field',
      });
      expect(status).toBe(200);
      expect(headers.get('cache-control')).toBe('no-store');
      expect(body).toEqual({
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        email: 'ada@example.com',
        email_verified: false,
        given_name: 'Ada',
        family_name: 'Lovelace',
        name: 'Ada Lovelace',
        nickname: 'ada',
        picture: 'https://img.example/ada.png',
        user_metadata: { plan: 'pro', team: 'engines' },
      });
      const stored = (await (await management(test, 'GET', `/users/${encodeURIComponent(`auth0|${body._id as string}`)}`)).json()) as Record<string, unknown>;
      expect(stored).toMatchObject({ email: 'ada@example.com', given_name: 'Ada', nickname: 'ada', user_metadata: { plan: 'pro', team: 'engines' } });
    });

    it('sends a verification email whose link marks the address verified, once', async () => {
      const { body } = await signup({ client_id: app.client_id, connection: DB, email: 'verify.me@example.com', password: PASSWORD });
      const userId = `auth0|${body._id as string}`;
      const email = await smtp.waitFor((e) => e.to.includes('verify.me@example.com'));
      expect(email.subject).toMatch(/^Verify your email address for /);
      expect(email.html).toContain('Verify email address');
      const link = linkIn(email, `${test.url}/u/email-verification?ticket=`);
      expect(email.html).toContain(link.replace(/&/g, '&amp;'));

      const page = await fetch(link);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Email address verified');
      const user = (await (await management(test, 'GET', `/users/${encodeURIComponent(userId)}`)).json()) as Record<string, unknown>;
      expect(user.email_verified).toBe(true);
      // A second click reads as done; a made-up or truncated ticket is refused with a page, not a 500.
      expect((await fetch(link)).status).toBe(200);
      const forged = await fetch(`${test.url}/u/email-verification?ticket=${'A'.repeat(43)}`);
      expect(forged.status).toBe(400);
      expect(await forged.text()).toContain('This link can no longer be used');
      expect((await fetch(`${test.url}/u/email-verification?ticket=%00`)).status).toBe(400);
      expect((await fetch(`${test.url}/u/email-verification`)).status).toBe(400);
    });

    it('sends no verification email where the connection says send_verification_email: false', async () => {
      expect((await signup({ client_id: app.client_id, connection: 'quiet', email: 'quiet@example.com', password: PASSWORD })).status).toBe(200);
      await signup({ client_id: app.client_id, connection: DB, email: 'after.quiet@example.com', password: PASSWORD });
      await smtp.waitFor((e) => e.to.includes('after.quiet@example.com'));
      expect(smtp.received.some((e) => e.to.includes('quiet@example.com'))).toBe(false);
    });

    it('sends the verification email for users made through the Management API unless verify_email is false or the email is verified', async () => {
      const create = (email: string, extra: Record<string, unknown> = {}) => management(test, 'POST', '/users', { connection: DB, email, password: PASSWORD, ...extra });
      expect((await create('mgmt.default@example.com')).status).toBe(201);
      expect((await create('mgmt.off@example.com', { verify_email: false })).status).toBe(201);
      expect((await create('mgmt.verified@example.com', { email_verified: true })).status).toBe(201);
      const email = await smtp.waitFor((e) => e.to.includes('mgmt.default@example.com'));
      expect(linkIn(email, `${test.url}/u/email-verification?ticket=`)).toBeTruthy();
      // Made after the two that must not get one: once its email is in, theirs would have been too.
      expect((await create('mgmt.last@example.com')).status).toBe(201);
      await smtp.waitFor((e) => e.to.includes('mgmt.last@example.com'));
      expect(smtp.received.some((e) => e.to.includes('mgmt.off@example.com') || e.to.includes('mgmt.verified@example.com'))).toBe(false);
    });

    it('answers user_exists and username_exists in the /dbconnections shape', async () => {
      expect(await signup({ client_id: app.client_id, connection: DB, email: 'ADA@example.com', password: PASSWORD })).toMatchObject({
        status: 400,
        body: { name: 'BadRequestError', code: 'user_exists', description: 'The user already exists.', statusCode: 400 },
      });
      const first = await signup({ client_id: app.client_id, connection: 'with-usernames', email: 'grace@example.com', username: 'grace', password: PASSWORD });
      expect(first.status).toBe(200);
      expect(first.body.username).toBe('grace');
      expect(await signup({ client_id: app.client_id, connection: 'with-usernames', email: 'other@example.com', username: 'Grace', password: PASSWORD })).toMatchObject({
        status: 400,
        body: { name: 'BadRequestError', code: 'username_exists', description: 'The username already exists.', statusCode: 400 },
      });
    });

    it('answers password errors with their name, code, policy and (for strength) the rule list', async () => {
      const weak = await signup({ client_id: app.client_id, connection: 'strict', email: 'weak@example.com', password: 'zq7' });
      expect(weak.status).toBe(400);
      expect(weak.body).toMatchObject({ name: 'PasswordStrengthError', code: 'invalid_password', statusCode: 400, description: { verified: false } });
      expect(weak.body.policy).toContain('* At least 10 characters in length');
      const rules = (weak.body.description as { rules: { code: string; verified: boolean }[] }).rules;
      expect(rules.find((r) => r.code === 'lengthAtLeast')).toMatchObject({ verified: false });

      expect(await signup({ client_id: app.client_id, connection: 'strict', email: 'dict@example.com', password: 'Gatehouse-Rocks-99' })).toMatchObject({
        status: 400,
        body: { name: 'PasswordDictionaryError', code: 'password_dictionary_error', description: 'Password is too common', statusCode: 400 },
      });
      expect(await signup({ client_id: app.client_id, connection: 'strict', email: 'personal@example.com', password: 'Personal-1x2y3z', given_name: 'Zed' })).toMatchObject({
        status: 400,
        body: { name: 'PasswordNoUserInfoError', code: 'password_no_user_info_error', statusCode: 400 },
      });
      // Names given at signup count as personal information too.
      expect(
        (await signup({ client_id: app.client_id, connection: 'strict', email: 'x1@example.com', password: 'Lovelace-7q8w9e', family_name: 'Lovelace' })).body.code,
      ).toBe('password_no_user_info_error');
    });

    it('refuses a password known from a breach (attack protection, pre-user-registration) in the family shape', async () => {
      const leaked = await signup({ client_id: app.client_id, connection: DB, email: 'leaky@example.com', password: 'Trustno1' });
      expect(leaked).toMatchObject({ status: 401, body: { code: 'password_leaked', statusCode: 401, name: 'UnauthorizedError' } });
      const users = (await (await management(test, 'GET', '/users-by-email?email=leaky@example.com')).json()) as unknown[];
      expect(users).toEqual([]);
    });

    it('answers unauthorized when signup is disabled, and refuses unknown clients and connections not enabled for the client', async () => {
      expect(await signup({ client_id: app.client_id, connection: 'closed', email: 'closed@example.com', password: PASSWORD })).toMatchObject({
        status: 403,
        body: { name: 'ForbiddenError', code: 'unauthorized', statusCode: 403 },
      });
      const unknownClient = await signup({ client_id: 'x'.repeat(32), connection: DB, email: 'a1@example.com', password: PASSWORD });
      expect(unknownClient).toMatchObject({ status: 400, body: { name: 'BadRequestError', code: 'invalid_request', statusCode: 400 } });
      for (const name of ['not-for-this-app', 'no-such-connection']) {
        const refused = await signup({ client_id: app.client_id, connection: name, email: 'a2@example.com', password: PASSWORD });
        expect(refused).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        // The same words whether the connection exists or not.
        expect(refused.body.description).toBe(`connection ${name} is not a database connection enabled for this client`);
      }
    });

    it.each([
      ['a missing password', { email: 'm@example.com' }],
      ['a bad email', { email: 'not-an-email', password: PASSWORD }],
      ['an object as password', { email: 'o@example.com', password: { a: 1 } }],
      ['a username that breaks the connection rules', { email: 'u@example.com', password: PASSWORD, username: 'a b', connection: 'with-usernames' }],
      ['a missing username where one is required', { email: 'u2@example.com', password: PASSWORD, connection: 'with-usernames' }],
      ['11 metadata properties', { email: 'md@example.com', password: PASSWORD, user_metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) }],
      ['a metadata value over 500 characters', { email: 'md2@example.com', password: PASSWORD, user_metadata: { k: 'v'.repeat(501) } }],
      ['a non-string metadata value', { email: 'md3@example.com', password: PASSWORD, user_metadata: { k: { nested: true } } }],
      ['a metadata name over 100 characters', { email: 'md4@example.com', password: PASSWORD, user_metadata: { ['k'.repeat(101)]: 'v' } }],
      ['a given_name over 150 characters', { email: 'gn@example.com', password: PASSWORD, given_name: 'g'.repeat(151) }],
      ['a picture that is not an http(s) URL', { email: 'pic@example.com', password: PASSWORD, picture: 'javascript:alert(1)' }],
    ])('answers invalid_signup for %s', async (_, fields) => {
      const { status, body } = await signup({ client_id: app.client_id, connection: DB, ...fields });
      expect(status).toBe(400);
      expect(body).toMatchObject({ name: 'BadRequestError', code: 'invalid_signup', statusCode: 400 });
      expect(typeof body.description).toBe('string');
    });

    it('answers malformed bodies in the family shape, never a 500', async () => {
      for (const raw of ['{"client_id":', '[]', '"text"', 'null']) {
        const { status, body } = await signup(raw);
        expect(status).toBe(400);
        expect(body).toMatchObject({ name: 'BadRequestError', statusCode: 400 });
        expect(typeof body.code).toBe('string');
      }
      const nul = await signup({ client_id: app.client_id, connection: DB, email: 'nul\u0000@example.com', password: PASSWORD });
      expect(nul.status).toBe(400);
      const form = await fetch(`${test.url}/dbconnections/signup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=x' });
      expect(form.status).toBe(400);
    });

    it('answers CORS preflights for the client origins only, and refuses an origin the named client does not allow', async () => {
      const preflight = (origin: string) =>
        fetch(`${test.url}/dbconnections/signup`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'auth0-client,content-type' },
        });
      const allowed = await preflight('https://app.example');
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(allowed.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
      expect(allowed.headers.get('access-control-allow-headers')).toMatch(/Auth0-Client/);
      expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
      const denied = await preflight('https://evil.example');
      expect(denied.headers.get('access-control-allow-origin')).toBeNull();

      const fromApp = await signup({ client_id: app.client_id, connection: DB, email: 'cors@example.com', password: PASSWORD }, { origin: 'https://shop.example' });
      expect(fromApp.status).toBe(200);
      expect(fromApp.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      // Another client's origin is allowed by CORS, but not for this client.
      const other = await createApp(test, { web_origins: ['https://other.example'] });
      expect(other.client_id).not.toBe(app.client_id);
      const crossed = await signup({ client_id: app.client_id, connection: DB, email: 'cors2@example.com', password: PASSWORD }, { origin: 'https://other.example' });
      expect(crossed).toMatchObject({ status: 403, body: { code: 'unauthorized' } });
    });
  });
}
