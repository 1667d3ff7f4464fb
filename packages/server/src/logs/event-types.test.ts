/**
 * Every event type the issue lists, produced by its real action over HTTP (no log row written by the test),
 * then found through GET /api/v2/logs by `q=type:<code>` with its key fields, on SQLite and PostgreSQL. One row
 * of the table per action; an action may produce several codes (a refused MFA answer is `gd_auth_failed` and
 * `feotpft`). At the end: every listed code was found, and no password, secret, code or token is in any event.
 */
import { generateKeyPairSync } from 'node:crypto';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import type { User } from '../store/users.js';
import { postgresAvailable } from '../test-support/services.js';
import { mailTo } from '../test-support/operation-examples.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { logIn, readForm, TestBrowser } from '../test-support/sign-in.js';
import { createClient, createUser, PASSWORD, pkcePair, post, REDIRECT_URI, type TestClient } from '../auth-api/user-tokens/testing.js';
import { createPasswordlessConnection } from '../auth-api/passwordless/testing.js';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { LEGACY_DELEGATION_GRANTS } from '../auth-api/delegation.js';
import { MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT } from '../auth-api/mfa/grant-types.js';

type Json = Record<string, unknown>;
type Log = { log_id: string; type: string; [key: string]: unknown };

/** The codes the issue names (the `gd_*` family as the reference's MFA events). */
const LISTED = [
  's', 'f', 'fp', 'fu', 'ss', 'fs', 'slo', 'flo', 'seacft', 'feacft', 'sepft', 'fepft', 'seccft', 'feccft', 'sertft', 'fertft', 'srrt',
  'sapi', 'fapi', 'limit_wc', 'limit_mu', 'pwd_leak', 'signup_pwd_leak', 'scp', 'fcp', 'scpr', 'sv', 'fv', 'du', 'sd', 'fd', 'cls', 'cs',
  'gd_start_enroll', 'gd_enrollment_complete', 'gd_auth_succeed', 'gd_auth_failed', 'gd_recovery_succeed', 'gd_recovery_failed',
  'gd_otp_rate_limit_exceed', 'gd_recovery_rate_limit_exceed', 'gd_unenroll',
];

/** What one action should have left: an event of `type` (narrowed by `where`, a q clause) with these fields. */
interface Expected {
  type: string;
  where?: string;
  fields: Json;
}

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('each listed log event type from its real action, found by q, on %s', (dialect) => {
  let server: TestServer;
  let token: string;
  /** A confidential client allowed the password grants, refresh tokens and the MFA API's grants. */
  let app: TestClient;
  /** A public client for the hosted login (authorization code with PKCE). */
  let spa: TestClient;
  const found = new Set<string>();
  /** Everything secret the actions handle: none may appear in a log event. */
  const secrets: string[] = [PASSWORD];
  /** Six-digit codes: looked for as whole words, since log ids are long runs of digits. */
  const codes: string[] = [];

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json & Json[] }> => {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json & Json[] };
  };
  const q = async (query: string): Promise<Log[]> => {
    await server.server.services.tenantLogs.flush();
    const res = await api('GET', `/logs?q=${encodeURIComponent(query)}&per_page=100`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as unknown as Log[];
  };
  const realm = (body: Json, client: TestClient = app) => post(server, '/oauth/token', { grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME, ...client.auth, ...body });
  const database = { connection: DATABASE_CONNECTION_NAME, strategy: 'auth0', strategy_type: 'database' };
  const totpAt = (secret: string, offsetSeconds = 0) => {
    const code = generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });
    codes.push(code);
    return code;
  };
  const wrongCode = (secret: string) => {
    const now = generateSync({ secret, epoch: Math.floor(Date.now() / 1000) });
    return now === '000000' ? '111111' : '000000';
  };
  const asUser = (user: Pick<User, 'user_id'>) => `user_id:"${user.user_id}"`;

  /** The hosted login up to the MFA page: the page and its form. */
  async function toMfaPage(browser: TestBrowser, email: string) {
    const pkce = pkcePair();
    const query = { client_id: spa.client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid', code_challenge: pkce.challenge, code_challenge_method: 'S256' };
    const start = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${new URLSearchParams(query)}`));
    if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
    const login = readForm(await start.text(), server.url);
    const page = await browser.submitExpectingPage(login.action, { ...login.fields, username: email, password: PASSWORD });
    const html = await page.text();
    return { status: page.status, html, form: readForm(html, server.url) };
  }

  /** State the rows below hand on (a refresh token, an enrolled user). */
  const state: { refreshToken?: string; apiUser?: User; apiSecret?: string; apiRecovery?: string; hostedUser?: User; hostedSecret?: string; hostedRecovery?: string } = {};

  const table: { action: string; run: () => Promise<Expected[]> }[] = [
    {
      action: 'signup through /dbconnections/signup, then the same address again',
      run: async () => {
        const email = `signup-${dialect}@example.com`;
        const signup = () => post(server, '/dbconnections/signup', { client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, email, password: 'Signup-Passw0rd!' }, { json: true });
        expect((await signup()).status).toBe(200);
        expect((await signup()).status).toBe(400);
        secrets.push('Signup-Passw0rd!');
        return [
          { type: 'ss', where: `user_name:"${email}"`, fields: { client_id: app.client.client_id, ...database, user_id: expect.stringMatching(/^auth0\|/) } },
          { type: 'fs', where: `user_name:"${email}"`, fields: { client_id: app.client.client_id, ...database, details: { error: 'exists' } } },
        ];
      },
    },
    {
      action: 'the hosted login page, then the code exchanged, then a bad code',
      run: async () => {
        const user = await createUser(server);
        const pkce = pkcePair();
        const browser = new TestBrowser();
        const back = await logIn(server, browser, { client_id: spa.client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid', code_challenge: pkce.challenge, code_challenge_method: 'S256' }, { username: user.email!, password: PASSWORD });
        const code = back.searchParams.get('code')!;
        expect(code, back.href).toBeTruthy();
        secrets.push(code, ...browser.cookies.values());
        const exchange = (withCode: string) => post(server, '/oauth/token', { grant_type: 'authorization_code', client_id: spa.client.client_id, code: withCode, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier });
        const tokens = await exchange(code);
        expect(tokens.status).toBe(200);
        secrets.push(pkce.verifier, String(tokens.body.access_token), String(tokens.body.id_token));
        expect((await exchange(code)).status).toBe(400);
        return [
          { type: 's', where: asUser(user), fields: { client_id: spa.client.client_id, ...database, user_name: user.email } },
          { type: 'seacft', where: asUser(user), fields: { client_id: spa.client.client_id, scope: 'openid' } },
          { type: 'feacft', where: `client_id:"${spa.client.client_id}"`, fields: { client_id: spa.client.client_id, details: { error: 'invalid_grant' } } },
        ];
      },
    },
    {
      action: 'the password-realm grant: right, wrong password, unknown user, unknown realm, blocked user',
      run: async () => {
        const user = await createUser(server);
        const blocked = await createUser(server, { blocked: true });
        const ok = await realm({ username: user.email, password: PASSWORD, scope: 'openid offline_access' });
        expect(ok.status).toBe(200);
        state.refreshToken = String(ok.body.refresh_token);
        secrets.push(String(ok.body.access_token), String(ok.body.id_token), state.refreshToken);
        expect((await realm({ username: user.email, password: 'Not-the-passw0rd' })).status).toBe(403);
        expect((await realm({ username: `nobody-${dialect}@example.com`, password: 'Not-the-passw0rd' })).status).toBe(403);
        expect((await realm({ username: user.email, password: PASSWORD, realm: 'no-such-realm' })).status).toBeGreaterThanOrEqual(400);
        expect((await realm({ username: blocked.email, password: PASSWORD })).status).toBeGreaterThanOrEqual(400);
        secrets.push('Not-the-passw0rd');
        return [
          { type: 'sepft', where: asUser(user), fields: { client_id: app.client.client_id, client_name: app.client.name, ...database, user_name: user.email, scope: 'openid offline_access' } },
          { type: 'fp', where: asUser(user), fields: { client_id: app.client.client_id, ...database, user_name: user.email } },
          { type: 'fu', where: `user_name:"nobody-${dialect}@example.com"`, fields: { client_id: app.client.client_id, ...database } },
          { type: 'fepft', where: `client_id:"${app.client.client_id}"`, fields: { client_id: app.client.client_id, details: { error: expect.any(String) } } },
          { type: 'f', where: asUser(blocked), fields: { client_id: app.client.client_id, ...database, description: 'user is blocked' } },
        ];
      },
    },
    {
      action: 'the refresh token exchanged, a bad one refused, then the good one revoked',
      run: async () => {
        const exchanged = await post(server, '/oauth/token', { grant_type: 'refresh_token', ...app.auth, refresh_token: state.refreshToken! });
        expect(exchanged.status).toBe(200);
        secrets.push(String(exchanged.body.access_token));
        expect((await post(server, '/oauth/token', { grant_type: 'refresh_token', ...app.auth, refresh_token: 'not-a-refresh-token-at-all' })).status).toBe(400);
        expect((await post(server, '/oauth/revoke', { ...app.auth, token: state.refreshToken! })).status).toBe(200);
        return [
          { type: 'sertft', fields: { client_id: app.client.client_id, user_id: expect.stringMatching(/^auth0\|/) } },
          { type: 'fertft', fields: { client_id: app.client.client_id, details: { error: 'invalid_grant' } } },
          { type: 'srrt', fields: { client_id: app.client.client_id, user_id: expect.stringMatching(/^auth0\|/) } },
        ];
      },
    },
    {
      action: 'client credentials right and wrong, then Management API writes that pass and fail',
      run: async () => {
        const audience = `${server.url}/api/v2/`;
        const ok = await post(server, '/oauth/token', { grant_type: 'client_credentials', ...server.admin, audience });
        expect(ok.status).toBe(200);
        secrets.push(String(ok.body.access_token));
        expect((await post(server, '/oauth/token', { grant_type: 'client_credentials', client_id: server.admin.client_id, client_secret: 'wrong-secret-value', audience })).status).toBe(401);
        expect((await api('PATCH', '/tenants/settings', { friendly_name: 'Logs test' })).status).toBe(200);
        expect((await api('POST', '/users', { connection: 'no-such-connection', email: 'x@example.com', password: 'Fapi-Passw0rd!x' })).status).toBe(400);
        secrets.push('wrong-secret-value', 'Fapi-Passw0rd!x');
        return [
          { type: 'seccft', fields: { client_id: server.admin.client_id, audience } },
          { type: 'feccft', fields: { client_id: server.admin.client_id, details: { error: 'invalid_client' } } },
          { type: 'sapi', fields: { client_id: server.admin.client_id, description: 'PATCH /api/v2/tenants/settings' } },
          { type: 'fapi', fields: { client_id: server.admin.client_id, description: 'POST /api/v2/users' } },
        ];
      },
    },
    {
      action: 'logout, and a logout for an unknown client',
      run: async () => {
        expect((await fetch(`${server.url}/v2/logout?client_id=${spa.client.client_id}`, { redirect: 'manual' })).status).toBeLessThan(400);
        expect((await fetch(`${server.url}/v2/logout?client_id=nope`, { redirect: 'manual' })).status).toBe(400);
        return [
          { type: 'slo', fields: { client_id: spa.client.client_id } },
          { type: 'flo', fields: { description: expect.stringContaining('Unknown client') } },
        ];
      },
    },
    {
      action: 'a password change requested, then the emailed link used with mismatched and then good passwords',
      run: async () => {
        const user = await createUser(server);
        expect((await post(server, '/dbconnections/change_password', { client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, email: user.email! }, { json: true })).status).toBe(200);
        const mail = await mailTo(server, user.email!);
        const link = /https?:\/\/[^\s"<]*\/u\/reset-password\/ticket[^\s"<]*/.exec(mail)![0];
        secrets.push(new URL(link).searchParams.get('ticket')!);
        const browser = new TestBrowser();
        const page = await browser.get(link);
        expect(page.status).toBe(200);
        const form = readForm(await page.text(), server.url);
        const mismatch = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'New-Passw0rd-one!', password_confirmation: 'New-Passw0rd-two!' });
        expect(mismatch.status).toBe(400);
        const done = await browser.submitExpectingPage(form.action, { ...form.fields, password: 'New-Passw0rd-one!', password_confirmation: 'New-Passw0rd-one!' });
        expect(done.status).toBe(200);
        secrets.push('New-Passw0rd-one!', 'New-Passw0rd-two!');
        return [
          // Logged before (and without revealing whether) a user is found: by the address asked for.
          { type: 'scpr', where: `user_name:"${user.email}"`, fields: { client_id: app.client.client_id, ...database, user_name: user.email } },
          { type: 'fcp', where: asUser(user), fields: { ...database, user_name: user.email, description: expect.stringContaining('do not match') } },
          { type: 'scp', where: asUser(user), fields: { ...database, user_name: user.email } },
        ];
      },
    },
    {
      action: 'the verification email’s link used, and a made-up link',
      run: async () => {
        const user = await createUser(server, { email_verified: false });
        const job = await api('POST', '/jobs/verification-email', { user_id: user.user_id, client_id: app.client.client_id });
        expect(job.status, JSON.stringify(job.body)).toBe(201);
        const mail = await mailTo(server, user.email!);
        const link = /https?:\/\/[^\s"<]*\/u\/email-verification\?ticket=[^\s"<]*/.exec(mail)![0];
        secrets.push(new URL(link).searchParams.get('ticket')!);
        expect((await fetch(link)).status).toBe(200);
        expect((await fetch(`${server.url}/u/email-verification?ticket=${'x'.repeat(43)}`, { redirect: 'manual' })).status).toBe(400);
        return [
          { type: 'sv', where: asUser(user), fields: { user_name: user.email } },
          { type: 'fv', fields: { description: expect.stringContaining('invalid') } },
        ];
      },
    },
    {
      action: 'a user deleted through the Management API',
      run: async () => {
        const user = await createUser(server);
        expect((await api('DELETE', `/users/${encodeURIComponent(user.user_id)}`)).status).toBe(204);
        return [{ type: 'du', where: asUser(user), fields: { user_name: user.email, client_id: server.admin.client_id } }];
      },
    },
    {
      action: 'passwordless codes and links sent by email',
      run: async () => {
        const connection = await createPasswordlessConnection(server, 'email', [spa.client.client_id]);
        const [codeTo, linkTo] = [`code-${dialect}@example.com`, `link-${dialect}@example.com`];
        const start = (body: Json) => post(server, '/passwordless/start', { client_id: spa.client.client_id, connection: connection.name, ...body }, { json: true });
        expect((await start({ email: codeTo, send: 'code' })).status).toBe(200);
        expect((await start({ email: linkTo, send: 'link', authParams: { response_type: 'token id_token', redirect_uri: REDIRECT_URI, scope: 'openid', nonce: 'log-nonce' } })).status).toBe(200);
        const code = /\b(\d{6})\b/.exec(await mailTo(server, codeTo))![1]!;
        codes.push(code);
        const passwordless = { connection: connection.name, strategy: 'email', strategy_type: 'passwordless', client_id: spa.client.client_id };
        return [
          { type: 'cs', where: `user_name:"${codeTo}"`, fields: passwordless },
          { type: 'cls', where: `user_name:"${linkTo}"`, fields: passwordless },
        ];
      },
    },
    {
      action: 'the legacy /delegation endpoint: a Firebase custom token for a signed-in user, then api_type app (not offered)',
      run: async () => {
        // A legacy application (not OIDC conformant, with the legacy delegation grant) and a Firebase project's
        // add-on, written through the Management API with a real service-account key.
        const legacy = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT, LEGACY_DELEGATION_GRANTS.id_token] });
        const serviceAccountKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
        const firebase = await api('POST', '/clients', { name: `Firebase ${dialect}`, addons: { firebase: { client_email: 'adminsdk@logs-test.iam.gserviceaccount.com', private_key: serviceAccountKey } } });
        expect(firebase.status).toBe(201);
        const user = await createUser(server);
        const signedIn = await realm({ username: user.email, password: PASSWORD, scope: 'openid' }, legacy);
        expect(signedIn.status).toBe(200);
        const idToken = String(signedIn.body.id_token);
        const delegation = { client_id: legacy.client.client_id, grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', id_token: idToken, target: String(firebase.body.client_id), scope: 'openid email' };
        const res = await post(server, '/delegation', { ...delegation, api_type: 'firebase' });
        expect({ status: res.status, token_type: res.body.token_type }).toEqual({ status: 200, token_type: 'Bearer' });
        const refused = await post(server, '/delegation', { ...delegation, api_type: 'app' });
        expect({ status: refused.status, body: refused.body }).toEqual({ status: 501, body: { error: 'not_offered', error_description: expect.stringContaining('api_type app') } });
        secrets.push(idToken, String(signedIn.body.access_token), String(res.body.id_token), serviceAccountKey.split('\n')[1]!);
        const named = { client_id: legacy.client.client_id, client_name: legacy.client.name, user_id: user.user_id, user_name: user.email };
        return [
          { type: 'sd', where: asUser(user), fields: { ...named, scope: 'openid email', details: { target: firebase.body.client_id, api_type: 'firebase' } } },
          { type: 'fd', where: `client_id:"${legacy.client.client_id}"`, fields: { client_id: legacy.client.client_id, client_name: legacy.client.name, details: { error: 'not_offered', target: firebase.body.client_id, api_type: 'app' } } },
        ];
      },
    },
    {
      action: 'a breached password at login and at signup, with breached-password detection blocking',
      run: async () => {
        const leaked = 'Trustno1';
        const user = await createUser(server);
        expect((await api('PATCH', `/users/${encodeURIComponent(user.user_id)}`, { password: leaked, connection: DATABASE_CONNECTION_NAME })).status).toBe(200);
        expect((await api('PATCH', '/attack-protection/breached-password-detection', { enabled: true, shields: ['block'] })).status).toBe(200);
        try {
          expect((await realm({ username: user.email, password: leaked })).status).toBeGreaterThanOrEqual(400);
          const signup = await post(server, '/dbconnections/signup', { client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, email: `leaky-${dialect}@example.com`, password: leaked }, { json: true });
          expect(signup.body).toMatchObject({ code: 'password_leaked' });
        } finally {
          expect((await api('PATCH', '/attack-protection/breached-password-detection', { enabled: false })).status).toBe(200);
        }
        secrets.push(leaked);
        return [
          { type: 'pwd_leak', where: `user_name:"${user.email}"`, fields: { client_id: app.client.client_id, ...database } },
          { type: 'signup_pwd_leak', where: `user_name:"leaky-${dialect}@example.com"`, fields: { client_id: app.client.client_id, ...database } },
        ];
      },
    },
    {
      action: 'MFA on the hosted login: enrollment (start, complete), a wrong then a right code, a wrong then a right recovery code',
      run: async () => {
        const user = await createUser(server);
        state.hostedUser = user;
        const first = await toMfaPage(new TestBrowser(), user.email!);
        expect(first.status).toBe(200);
        const secret = /data-secret="([A-Z2-7]+)"/.exec(first.html)![1]!;
        secrets.push(secret);
        const enrolling = new TestBrowser();
        const page = await toMfaPage(enrolling, user.email!);
        const shown = await enrolling.submitExpectingPage(page.form.action, { ...page.form.fields, code: totpAt(secret) });
        const recovery = /id="recovery-code">([^<]+)</.exec(await shown.text())![1]!;
        secrets.push(recovery);
        const saved = readForm(await (await enrolling.get(shown.url)).text(), server.url);
        expect(await enrolling.submit(saved.action, { ...saved.fields, saved: 'yes' })).toBeInstanceOf(URL);

        const challenged = new TestBrowser();
        const challenge = await toMfaPage(challenged, user.email!);
        expect((await challenged.submitExpectingPage(challenge.form.action, { ...challenge.form.fields, code: wrongCode(secret) })).status).toBe(400);
        expect(await challenged.submit(challenge.form.action, { ...challenge.form.fields, code: totpAt(secret, 30) })).toBeInstanceOf(URL);

        const recovering = new TestBrowser();
        const step = await toMfaPage(recovering, user.email!);
        expect((await recovering.submitExpectingPage(step.form.action, { ...step.form.fields, recovery_code: 'WRONGRECOVERYCODE2345678' })).status).toBe(400);
        const next = await recovering.submitExpectingPage(step.form.action, { ...step.form.fields, recovery_code: recovery });
        secrets.push(/id="recovery-code">([^<]+)</.exec(await next.text())![1]!);
        const hosted = { client_id: spa.client.client_id, user_name: user.email };
        return [
          { type: 'gd_start_enroll', where: asUser(user), fields: { ...hosted, details: { authenticator: 'totp' } } },
          { type: 'gd_enrollment_complete', where: asUser(user), fields: { ...hosted, details: { authenticator: 'totp' } } },
          { type: 'gd_auth_failed', where: asUser(user), fields: { ...hosted, details: { authenticator: 'totp' } } },
          { type: 'gd_auth_succeed', where: asUser(user), fields: { ...hosted, details: { authenticator: 'totp' } } },
          { type: 'gd_recovery_failed', where: asUser(user), fields: { ...hosted, details: { authenticator: 'recovery-code' } } },
          { type: 'gd_recovery_succeed', where: asUser(user), fields: { ...hosted, details: { authenticator: 'recovery-code' } } },
        ];
      },
    },
    {
      action: 'MFA enrollment through a Guardian enrollment ticket: the link opened, a wrong then the right first code',
      run: async () => {
        const user = await createUser(server);
        const created = await api('POST', '/guardian/enrollments/ticket', { user_id: user.user_id, send_mail: false });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const link = created.body.ticket_url as string;
        secrets.push(new URL(link).searchParams.get('ticket')!);
        const browser = new TestBrowser();
        const html = await (await browser.get(link)).text();
        const secret = /data-secret="([A-Z2-7]+)"/.exec(html)![1]!;
        secrets.push(secret, ...browser.cookies.values());
        const form = readForm(html, server.url);
        expect((await browser.submitExpectingPage(form.action, { ...form.fields, code: wrongCode(secret) })).status).toBe(400);
        const done = await browser.post(form.action, { ...form.fields, code: totpAt(secret) });
        expect(done.status).toBe(200);
        const recovery = /id="recovery-code">([^<]+)</.exec(await done.text())?.[1];
        if (recovery) secrets.push(recovery);
        const ticket = { user_name: user.email, details: { authenticator: 'totp' } };
        return [
          { type: 'gd_start_enroll', where: asUser(user), fields: ticket },
          { type: 'gd_auth_failed', where: asUser(user), fields: ticket },
          { type: 'gd_enrollment_complete', where: asUser(user), fields: ticket },
        ];
      },
    },
    {
      action: 'the MFA API: associate, confirm with the first code, a wrong and a right code, the recovery-code grant',
      run: async () => {
        const user = await createUser(server);
        state.apiUser = user;
        const mfaToken = async () => {
          const res = await post(server, '/oauth/token', { grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD, scope: 'openid' });
          expect(res.body).toMatchObject({ error: 'mfa_required' });
          secrets.push(String(res.body.mfa_token));
          return String(res.body.mfa_token);
        };
        const first = await mfaToken();
        const associated = await fetch(`${server.url}/mfa/associate`, { method: 'POST', headers: { authorization: `Bearer ${first}`, 'content-type': 'application/json' }, body: JSON.stringify({ authenticator_types: ['otp'] }) });
        expect(associated.status).toBe(200);
        const { secret, recovery_codes } = (await associated.json()) as { secret: string; recovery_codes: string[] };
        secrets.push(secret, recovery_codes[0]!);
        state.apiSecret = secret;
        const otp = (mfa: string, code: string) => post(server, '/oauth/token', { grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: code });
        const confirmed = await otp(first, totpAt(secret));
        expect(confirmed.status).toBe(200);
        secrets.push(String(confirmed.body.access_token), String(confirmed.body.id_token));
        const second = await mfaToken();
        expect((await otp(second, wrongCode(secret))).status).toBe(403);
        expect((await otp(second, totpAt(secret, 30))).status).toBe(200);
        const third = await mfaToken();
        const recovered = await post(server, '/oauth/token', { grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: third, recovery_code: recovery_codes[0]! });
        expect(recovered.status).toBe(200);
        secrets.push(String(recovered.body.recovery_code), String(recovered.body.access_token));
        const viaApi = { client_id: app.client.client_id };
        return [
          { type: 'gd_start_enroll', where: asUser(user), fields: { ...viaApi, user_name: user.email, details: { authenticator: 'totp' } } },
          { type: 'gd_enrollment_complete', where: asUser(user), fields: { ...viaApi, details: { authenticator: 'totp' } } },
          { type: 'gd_auth_failed', where: asUser(user), fields: { ...viaApi, details: { authenticator: 'totp' } } },
          { type: 'gd_auth_succeed', where: asUser(user), fields: { ...viaApi, details: { authenticator: 'totp' } } },
          { type: 'gd_recovery_succeed', where: asUser(user), fields: { ...viaApi, details: { authenticator: 'recovery-code' } } },
          { type: 'seotpft', where: asUser(user), fields: { ...viaApi, scope: 'openid' } },
          { type: 'feotpft', where: asUser(user), fields: { ...viaApi, details: { error: 'invalid_grant' } } },
          { type: 'sercft', where: asUser(user), fields: viaApi },
        ];
      },
    },
    {
      action: 'ten wrong codes lock MFA (a recovery code is then refused too); then an administrator removes the user’s factors',
      run: async () => {
        const user = state.apiUser!;
        const secret = state.apiSecret!;
        const res = await post(server, '/oauth/token', { grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD });
        const mfa = String(res.body.mfa_token);
        secrets.push(mfa);
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++) statuses.push((await post(server, '/oauth/token', { grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: wrongCode(secret) })).status);
        // The 10th wrong code locks (and is logged as the lock); the 11th is refused unchecked.
        expect(statuses).toEqual([...Array<number>(10).fill(403), 429]);
        const recovery = await post(server, '/oauth/token', { grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: mfa, recovery_code: 'WRONGRECOVERYCODE2345678' });
        expect(recovery.status).toBe(429);
        expect((await api('DELETE', `/user-blocks/${encodeURIComponent(user.user_id)}`)).status).toBe(204);
        expect((await api('DELETE', `/users/${encodeURIComponent(user.user_id)}/authentication-methods`)).status).toBe(204);
        return [
          { type: 'gd_otp_rate_limit_exceed', where: asUser(user), fields: { client_id: app.client.client_id, details: { authenticator: 'totp' } } },
          { type: 'gd_auth_failed', where: asUser(user), fields: { client_id: app.client.client_id } },
          { type: 'gd_recovery_rate_limit_exceed', where: asUser(user), fields: { client_id: app.client.client_id, details: { authenticator: 'recovery-code' } } },
          { type: 'gd_unenroll', where: asUser(user), fields: { client_id: server.admin.client_id, user_name: user.email } },
        ];
      },
    },
    {
      action: 'brute force on one account, then a throttled IP',
      run: async () => {
        // MFA is off again for the password grants below.
        expect((await api('PUT', '/guardian/policies', [])).status).toBe(200);
        const user = await createUser(server);
        expect((await api('PATCH', '/attack-protection/brute-force-protection', { enabled: true, shields: ['block'], max_attempts: 2 })).status).toBe(200);
        for (let i = 0; i < 3; i++) await realm({ username: user.email, password: `Wrong-guess-${i}` });
        secrets.push('Wrong-guess-0', 'Wrong-guess-1', 'Wrong-guess-2');
        const throttle = { enabled: true, shields: ['block'], stage: { 'pre-login': { max_attempts: 2, rate: 86_400_000 } } };
        expect((await api('PATCH', '/attack-protection/suspicious-ip-throttling', throttle)).status).toBe(200);
        try {
          const answers: number[] = [];
          for (let i = 0; i < 4 && !answers.includes(429); i++) answers.push((await realm({ username: `throttled-${i}@example.com`, password: 'Throttled-guess' })).status);
          expect(answers).toContain(429);
        } finally {
          expect((await api('PATCH', '/attack-protection/suspicious-ip-throttling', { enabled: false })).status).toBe(200);
        }
        return [
          { type: 'limit_wc', where: `user_name:"${user.email}"`, fields: { client_id: app.client.client_id, ...database } },
          { type: 'limit_mu', fields: { client_id: app.client.client_id, ...database, ip: '127.0.0.1' } },
        ];
      },
    },
  ];

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['password', PASSWORD_REALM_GRANT, 'refresh_token', MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT] });
    spa = await createClient(server, { grant_types: ['authorization_code', 'implicit', 'refresh_token'] });
    secrets.push(app.secret!, server.admin.client_secret, token);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(table.map((row) => [row.action, row] as const))('%s', async (_action, row) => {
    // MFA rows need the policy on; the others a password alone.
    const mfa = row.action.includes('MFA');
    if (mfa) {
      for (const factor of ['otp', 'recovery-code']) expect((await api('PUT', `/guardian/factors/${factor}`, { enabled: true })).status).toBe(200);
      expect((await api('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    }
    for (const expected of await row.run()) {
      const events = await q(`type:${expected.type}${expected.where ? ` AND ${expected.where}` : ''}`);
      expect(events, `${expected.type} ${expected.where ?? ''}`).toContainEqual(expect.objectContaining({ type: expected.type, ip: '127.0.0.1', ...expected.fields }));
      found.add(expected.type);
    }
  });

  it('found every listed type', () => {
    expect(LISTED.filter((type) => !found.has(type))).toEqual([]);
  });

  it('never stores a password, secret, code or token in any event', async () => {
    await server.server.services.tenantLogs.flush();
    const rows = await server.server.prepared.store.db.selectFrom('logs').selectAll().execute();
    expect(rows.length).toBeGreaterThan(50);
    // Log ids and dates are long runs of digits: a six-digit code is looked for as a whole word elsewhere.
    const text = JSON.stringify(rows.map(({ log_id: _id, date: _date, ...rest }) => rest));
    for (const secret of secrets) expect(text.includes(secret), `a log event holds ${secret.slice(0, 12)}…`).toBe(false);
    for (const code of codes) expect(new RegExp(`\\b${code}\\b`).test(text), `a log event holds the code ${code}`).toBe(false);
  });
});
