/**
 * POST /co/authenticate over real HTTP: CORS for the credentialed XHR (preflight and actual, allowed and not),
 * the success body and its browser-binding cookie, and every row of the contract's error table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../store/tenants.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser, management, type TestApp } from '../../test-support/sign-in.js';

const APP_ORIGIN = 'https://app.example';
const PASSWORD = 'correct horse battery staple 9';
const REALM = 'Username-Password-Authentication';
const PASSWORD_REALM = 'http://auth0.com/oauth/grant-type/password-realm';

type Json = Record<string, unknown>;

function coAuthenticate(test: TestServer, body: Json | string, headers: Record<string, string> = { origin: APP_ORIGIN }): Promise<Response> {
  return fetch(`${test.url}/co/authenticate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'auth0-client': 'eyJuYW1lIjoiYXV0aDAuanMifQ==', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function expectError(response: Response, status: number, error: string): Promise<Json> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as Json;
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  return body;
}

describe('POST /co/authenticate', () => {
  let test: TestServer;
  let app: TestApp;
  let login: (extra?: Json) => Json;

  beforeAll(async () => {
    test = await startTestServer();
    app = await createApp(test, { cross_origin_authentication: true, allowed_origins: ['https://other.example'] });
    await createUser(test, 'ada@example.com', PASSWORD);
    login = (extra = {}) => ({ client_id: app.client_id, username: 'ada@example.com', password: PASSWORD, realm: REALM, credential_type: PASSWORD_REALM, ...extra });
  });
  afterAll(() => test.close());

  describe('CORS', () => {
    function preflight(origin: string): Promise<Response> {
      return fetch(`${test.url}/co/authenticate`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'auth0-client,content-type' },
      });
    }

    it('answers the preflight of an allowed origin with that exact origin, credentials and the SDK headers', async () => {
      const response = await preflight(APP_ORIGIN);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(response.headers.get('access-control-allow-credentials')).toBe('true');
      expect(response.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      expect(allowed).toContain('content-type');
      expect(allowed).toContain('auth0-client');
    });

    it('gives a disallowed origin no CORS headers on the preflight', async () => {
      const response = await preflight('https://evil.example');
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('echoes the exact origin with credentials on the actual response, and on its errors', async () => {
      const ok = await coAuthenticate(test, login());
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
      const wrong = await coAuthenticate(test, login({ password: 'not the password' }));
      expect(wrong.status).toBe(403);
      expect(wrong.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(wrong.headers.get('access-control-allow-credentials')).toBe('true');
    });

    it('accepts an origin from allowed_origins as well as web_origins', async () => {
      const response = await coAuthenticate(test, login(), { origin: 'https://other.example' });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://other.example');
    });

    it('refuses a disallowed origin with the generic 403 text body and no CORS headers', async () => {
      for (const headers of [{ origin: 'https://evil.example' }, {} as Record<string, string>]) {
        const response = await coAuthenticate(test, login(), headers);
        expect(response.status).toBe(403);
        expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(await response.text()).toMatch(/^Origin .* is not allowed\.$/);
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
        expect(response.headers.getSetCookie()).toEqual([]);
      }
    });

    it('refuses an origin that another client of the tenant allows, but this one does not', async () => {
      await createApp(test, { web_origins: ['https://sibling.example'] });
      const response = await coAuthenticate(test, login(), { origin: 'https://sibling.example' });
      expect(response.status).toBe(403);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(await response.text()).toContain('https://sibling.example');
    });
  });

  it('returns login_ticket, co_verifier and co_id, and sets the cookie that binds the ticket to this browser', async () => {
    const response = await coAuthenticate(test, login());
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Json;
    expect(Object.keys(body).sort()).toEqual(['co_id', 'co_verifier', 'login_ticket']);
    expect(body.login_ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.co_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.co_id).toMatch(/^[A-Za-z0-9]{32}$/);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gh_co='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/HttpOnly/i);
    // Plain-HTTP localhost: Lax (browsers refuse None without Secure); over https it is None; Secure.
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toContain(PASSWORD);
  });

  it('accepts credential_type password without a realm (the default directory)', async () => {
    const response = await coAuthenticate(test, { client_id: app.client_id, username: 'ada@example.com', password: PASSWORD, credential_type: 'password' });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Json).login_ticket).toBeTruthy();
  });

  describe('the contract error table', () => {
    it('400 invalid_request: body not JSON, fields missing, of the wrong type or unknown', async () => {
      await expectError(await coAuthenticate(test, '{"client_id":'), 400, 'invalid_request');
      for (const field of ['client_id', 'username', 'credential_type']) {
        const body = login();
        delete body[field];
        const error = await expectError(await coAuthenticate(test, body), 400, 'invalid_request');
        expect(error.error_description).toContain(field);
      }
      await expectError(await coAuthenticate(test, login({ password: { value: 'x' } })), 400, 'invalid_request');
      await expectError(await coAuthenticate(test, login({ connection: REALM })), 400, 'invalid_request');
      await expectError(await coAuthenticate(test, login({ username: 'x'.repeat(5000) })), 400, 'invalid_request');
      // The credential type's own field: a password login without a password, an OTP login without the code.
      const noPassword = login();
      delete noPassword.password;
      expect((await expectError(await coAuthenticate(test, noPassword), 400, 'invalid_request')).error_description).toContain('password');
    });

    it('401 unauthorized_client: an unknown client, or one without cross-origin authentication', async () => {
      await expectError(await coAuthenticate(test, login({ client_id: 'unknownunknownunknownunknown1234' })), 401, 'unauthorized_client');
      const plain = await createApp(test, { cross_origin_authentication: false });
      const error = await expectError(await coAuthenticate(test, login({ client_id: plain.client_id })), 401, 'unauthorized_client');
      expect(error.error_description).toBe('Cross origin login not allowed.');
    });

    it('400 unsupported_credential_type: an unknown credential type', async () => {
      await expectError(await coAuthenticate(test, login({ credential_type: 'urn:example:magic' })), 400, 'unsupported_credential_type');
    });

    it('400 invalid_request: an unknown realm (no such connection, or not enabled for the client)', async () => {
      const error = await expectError(await coAuthenticate(test, login({ realm: 'No-Such-Connection' })), 400, 'invalid_request');
      expect(error.error_description).toContain('No-Such-Connection');
    });

    it('403 access_denied: wrong password and unknown user alike, with the password never echoed', async () => {
      const wrong = await expectError(await coAuthenticate(test, login({ password: 'Wrong-password-1' })), 403, 'access_denied');
      const unknown = await expectError(await coAuthenticate(test, login({ username: 'nobody@example.com' })), 403, 'access_denied');
      expect(wrong.error_description).toBe('Wrong email or password.');
      expect(unknown).toEqual(wrong);
      expect(JSON.stringify(wrong)).not.toContain('Wrong-password-1');
    });

    it('403 blocked_user: a user blocked by an administrator', async () => {
      const { user_id } = await createUser(test, 'blocked@example.com', PASSWORD);
      expect((await management(test, 'PATCH', `/users/${encodeURIComponent(user_id)}`, { blocked: true })).status).toBe(200);
      await expectError(await coAuthenticate(test, login({ username: 'blocked@example.com' })), 403, 'blocked_user');
    });

    it('401 password_leaked: a password from a breach, when breached-password detection blocks at login', async () => {
      const leaked = 'Trustno1';
      const { user_id } = await createUser(test, 'leaky@example.com', PASSWORD);
      // Set the breached password directly (an admin reset), then turn detection on with the block shield.
      expect((await management(test, 'PATCH', `/users/${encodeURIComponent(user_id)}`, { password: leaked, connection: REALM })).status).toBe(200);
      expect((await management(test, 'PATCH', '/attack-protection/breached-password-detection', { enabled: true, shields: ['block'] })).status).toBe(200);
      try {
        await expectError(await coAuthenticate(test, login({ username: 'leaky@example.com', password: leaked })), 401, 'password_leaked');
      } finally {
        await management(test, 'PATCH', '/attack-protection/breached-password-detection', { enabled: false });
      }
    });

    it('passwordless/otp: realm and otp required, the realm a passwordless connection of the client, a wrong code denied', async () => {
      const otpType = 'http://auth0.com/oauth/grant-type/passwordless/otp';
      // The passwordless 'email' connection made at first start, enabled for this client too.
      const [email] = (await (await management(test, 'GET', '/connections?name=email')).json()) as { id: string }[];
      const enabled = await management(test, 'PATCH', `/connections/${email!.id}/clients`, [{ client_id: app.client_id, status: true }]);
      expect(enabled.status).toBe(204);
      const otpLogin = (extra: Json) => ({ client_id: app.client_id, username: 'ada@example.com', credential_type: otpType, ...extra });
      expect((await expectError(await coAuthenticate(test, otpLogin({ otp: '123456' })), 400, 'invalid_request')).error_description).toContain('realm');
      expect((await expectError(await coAuthenticate(test, otpLogin({ realm: 'email' })), 400, 'invalid_request')).error_description).toContain('otp');
      // A database connection is not a passwordless realm.
      await expectError(await coAuthenticate(test, otpLogin({ realm: REALM, otp: '123456' })), 400, 'invalid_request');
      const denied = await expectError(await coAuthenticate(test, otpLogin({ realm: 'email', otp: '000000' })), 403, 'access_denied');
      expect(denied.error_description).toBe('Wrong email or verification code.');
    });

    it('429 too_many_attempts: the identifier locked after consecutive failures from this IP, even with the right password', async () => {
      await createUser(test, 'forceful@example.com', PASSWORD);
      expect((await management(test, 'PATCH', '/attack-protection/brute-force-protection', { enabled: true, max_attempts: 3, shields: ['block'] })).status).toBe(200);
      for (let i = 0; i < 3; i++) await expectError(await coAuthenticate(test, login({ username: 'forceful@example.com', password: `wrong ${i}` })), 403, 'access_denied');
      const error = await expectError(await coAuthenticate(test, login({ username: 'forceful@example.com' })), 429, 'too_many_attempts');
      expect(error.error_description).toMatch(/blocked after multiple consecutive login attempts/);
      // Another identifier from the same IP still logs in.
      expect((await coAuthenticate(test, login())).status).toBe(200);
    });
  });
});

describe('POST /co/authenticate from a suspicious IP', () => {
  let test: TestServer;

  beforeAll(async () => {
    test = await startTestServer();
  });
  afterAll(() => test.close());

  it('429 too_many_attempts once the IP has used up its login attempts', async () => {
    const app = await createApp(test, { cross_origin_authentication: true });
    await createUser(test, 'grace@example.com', PASSWORD);
    const throttle = { enabled: true, shields: ['block'], stage: { 'pre-login': { max_attempts: 2, rate: 86_400_000 } } };
    expect((await management(test, 'PATCH', '/attack-protection/suspicious-ip-throttling', throttle)).status).toBe(200);
    const body = { client_id: app.client_id, username: 'grace@example.com', password: 'wrong', realm: REALM, credential_type: PASSWORD_REALM };
    const answers: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await coAuthenticate(test, { ...body, username: `user${i}@example.com` });
      answers.push(last.status);
    }
    expect(answers.slice(0, 2)).toEqual([403, 403]);
    const error = await expectError(last!, 429, 'too_many_attempts');
    expect(error.error_description).toMatch(/suspicious login behavior/);
  });
});

describe('POST /co/authenticate behind an https public URL', () => {
  let test: TestServer;

  beforeAll(async () => {
    test = await startTestServer();
  });
  afterAll(() => test.close());

  it('sets the ticket cookie SameSite=None; Secure, so that it survives the cross-site XHR', async () => {
    const app = await createApp(test, { cross_origin_authentication: true });
    await createUser(test, 'hopper@example.com', PASSWORD);
    // As behind a TLS-terminating proxy: the tenant's public URL is https while the test talks plain HTTP.
    const { tenant } = test.server.prepared.bootstrap!;
    await updateTenant(test.server.prepared.store.db, tenant.id, { baseUrl: 'https://login.example' });
    test.server.services.tenants.invalidate();
    const response = await coAuthenticate(test, { client_id: app.client_id, username: 'hopper@example.com', password: PASSWORD, realm: REALM, credential_type: PASSWORD_REALM });
    expect(response.status).toBe(200);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gh_co='))!;
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(cookie).toMatch(/SameSite=None/i);
    expect(cookie).toMatch(/HttpOnly/i);
  });
});
