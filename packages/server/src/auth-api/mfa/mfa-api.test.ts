/**
 * The MFA API over raw HTTP, on both dialects: mfa_required with an mfa_token from the password grants, then
 * /mfa/authenticators, /mfa/associate, /mfa/challenge and the mfa-otp, mfa-oob and mfa-recovery-code grants,
 * with codes computed by otplib from the secret the API gave; wrong and replayed codes, the token's binding to
 * its client, its single use and expiry, the lock after 10 wrong codes and the administrator's unblock; and the
 * database statements each step runs, recorded: one statement of MFA's own per step beyond the factor check.
 */
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../../test-support/services.js';
import { mailTo } from '../../test-support/operation-examples.js';
import { managementToken, startTestServer, type TestServer } from '../../test-support/server.js';
import { DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import type { User } from '../../store/users.js';
import { createApi, createClient, createUser, decodeJwt, PASSWORD, post, type TestClient } from '../user-tokens/testing.js';
import { MFA_OOB_GRANT, MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT } from './grant-types.js';
import { PASSWORD_REALM_GRANT } from '../token/password-realm.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
type Json = Record<string, unknown>;
/**
 * Statements a request does not wait for: the tenant log (with its rollups) written after the answer, cache
 * refills, and the background workers' raw SQL, which quotes no identifiers (as remember-browser.test.ts).
 */
const NOISE = /"logs"|"log_streams"|"log_daily_counts"|"log_user_logins"|"backchannel_logout_deliveries"|from "clients"|from "tenants"|^[^"]*$/;

describe.each(dialects)('the MFA API on %s', (dialect) => {
  let server: TestServer;
  let app: TestClient;
  let management: string;
  let recording: string[] | undefined;
  const token = (body: Json) => post(server, '/oauth/token', body);
  const codeAt = (secret: string, offsetSeconds = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

  const call = async (method: string, path: string, options: { bearer?: string; body?: unknown } = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(options.bearer !== undefined && { authorization: `Bearer ${options.bearer}` }), ...(options.body !== undefined && { 'content-type': 'application/json' }) },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Json & Json[] };
  };
  const manage = (method: string, path: string, body?: unknown) => call(method, `/api/v2${path}`, { bearer: management, body });

  /** The password step: mfa_required, and its mfa_token. */
  async function mfaToken(user: User, client: TestClient = app, extra: Json = {}): Promise<string> {
    const res = await token({ grant_type: 'password', ...client.auth, username: user.email, password: PASSWORD, scope: 'openid email offline_access', ...extra });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'mfa_required', error_description: 'Multifactor authentication required', mfa_token: expect.any(String) });
    return res.body.mfa_token as string;
  }

  /** A user with TOTP enrolled through the API: its secret and recovery code. */
  async function enrolledUser(): Promise<{ user: User; secret: string; recovery: string }> {
    const user = await createUser(server);
    const mfa = await mfaToken(user);
    const associated = await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['otp'] } });
    expect(associated.status).toBe(200);
    const secret = associated.body.secret as string;
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret) })).status).toBe(200);
    return { user, secret, recovery: (associated.body.recovery_codes as string[])[0]! };
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect, onQuery: ({ sql }) => void recording?.push(sql) });
    management = await managementToken(server);
    for (const factor of ['otp', 'email', 'recovery-code']) expect((await manage('PUT', `/guardian/factors/${factor}`, { enabled: true })).status).toBe(200);
    expect((await manage('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    app = await createClient(server, {
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['password', PASSWORD_REALM_GRANT, 'refresh_token', MFA_OTP_GRANT, MFA_OOB_GRANT, MFA_RECOVERY_CODE_GRANT],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers both password grants with mfa_required and an mfa_token, only once the password was right', async () => {
    const user = await createUser(server);
    await mfaToken(user);
    const realm = await token({ grant_type: PASSWORD_REALM_GRANT, ...app.auth, realm: DATABASE_CONNECTION_NAME, username: user.email, password: PASSWORD });
    expect(realm.status).toBe(403);
    expect(realm.body).toMatchObject({ error: 'mfa_required', mfa_token: expect.any(String) });
    const wrong = await token({ grant_type: 'password', ...app.auth, username: user.email, password: 'not the password' });
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'Wrong email or password.' } });
    // Discovery says where the MFA API is, and the grants it takes.
    const discovery = await call('GET', '/.well-known/openid-configuration');
    expect(discovery.body).toMatchObject({ mfa_challenge_endpoint: `${server.url}/mfa/challenge`, grant_types_supported: expect.arrayContaining([MFA_OTP_GRANT, MFA_OOB_GRANT, MFA_RECOVERY_CODE_GRANT]) });
  });

  it('associates TOTP with a recovery code, confirms it with the first code, and puts amr in the tokens', async () => {
    const user = await createUser(server);
    const mfa = await mfaToken(user);
    expect(await call('GET', '/mfa/authenticators', { bearer: mfa })).toMatchObject({ status: 200, body: [] });

    const associated = await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['otp'] } });
    expect(associated.status).toBe(200);
    expect(associated.body).toEqual({ authenticator_type: 'otp', secret: expect.stringMatching(/^[A-Z2-7]{32}$/), barcode_uri: expect.stringMatching(/^otpauth:\/\/totp\//), recovery_codes: [expect.stringMatching(/^[A-Z2-9]{24}$/)] });
    const secret = associated.body.secret as string;
    expect(new URL(associated.body.barcode_uri as string).searchParams.get('secret')).toBe(secret);
    // Pending until the first code.
    expect((await call('GET', '/mfa/authenticators', { bearer: mfa })).body).toEqual([{ id: expect.stringMatching(/^totp\|dev_/), authenticator_type: 'otp', active: false }]);
    // A retry shows the same secret (the pending enrollment is resumed).
    expect((await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['otp'] } })).body.secret).toBe(secret);

    const wrongCode = codeAt(secret) === '000000' ? '111111' : '000000';
    const wrong = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: wrongCode });
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'Invalid otp_code.' } });

    const code = codeAt(secret);
    const done = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: code });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), id_token: expect.any(String), refresh_token: expect.any(String), scope: 'openid email offline_access' });
    expect(decodeJwt(done.body.id_token as string).payload).toMatchObject({ sub: user.user_id, aud: app.client.client_id, email: user.email, amr: ['pwd', 'otp', 'mfa'] });

    // The mfa_token is used up; the code is not accepted again with a new one (a replay).
    const again = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret, 30) });
    expect({ status: again.status, body: again.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'mfa_token was already used' } });
    expect((await call('GET', '/mfa/authenticators', { bearer: mfa })).status).toBe(401);
    const next = await mfaToken(user);
    const replay = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: next, otp: code });
    expect({ status: replay.status, body: replay.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'Invalid otp_code.' } });

    // Enrolled: the list shows the factor, email and the recovery code; another factor cannot be added on the password alone.
    expect((await call('GET', '/mfa/authenticators', { bearer: next })).body).toEqual([
      { id: expect.stringMatching(/^totp\|dev_/), authenticator_type: 'otp', active: true },
      { id: expect.stringMatching(/^email\|dev_/), authenticator_type: 'oob', active: true, oob_channel: 'email', name: expect.stringMatching(/^.\u2022\u2022\u2022@example\.com$/) },
      { id: expect.stringMatching(/^recovery-code\|dev_/), authenticator_type: 'recovery-code', active: true },
    ]);
    expect(await call('POST', '/mfa/associate', { bearer: next, body: { authenticator_types: ['otp'] } })).toMatchObject({ status: 403, body: { error: 'access_denied', error_description: 'User is already enrolled.' } });
  });

  it('challenges otp, or emails a code for the mfa-oob grant (binding_code), single use', async () => {
    const { user, secret } = await enrolledUser();
    const mfa = await mfaToken(user);
    expect(await call('POST', '/mfa/challenge', { body: { ...app.auth, mfa_token: mfa, challenge_type: 'otp' } })).toMatchObject({ status: 200, body: { challenge_type: 'otp' } });
    const authenticators = (await call('GET', '/mfa/authenticators', { bearer: mfa })).body;
    const emailId = authenticators.find((a) => a.oob_channel === 'email')!.id as string;

    const challenged = await call('POST', '/mfa/challenge', { body: { ...app.auth, mfa_token: mfa, challenge_type: 'oob', authenticator_id: emailId } });
    expect(challenged).toMatchObject({ status: 200, body: { challenge_type: 'oob', oob_code: expect.any(String), binding_method: 'prompt' } });
    const mail = await mailTo(server, user.email!, (text) => text.includes('verification code'));
    const emailed = /\b(\d{6})\b/.exec(mail)![1]!;
    const oob = challenged.body.oob_code as string;

    const wrongOob = await token({ grant_type: MFA_OOB_GRANT, ...app.auth, mfa_token: mfa, oob_code: 'v1.forged', binding_code: emailed });
    expect(wrongOob.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid oob_code.' });
    const wrongBinding = await token({ grant_type: MFA_OOB_GRANT, ...app.auth, mfa_token: mfa, oob_code: oob, binding_code: emailed === '000000' ? '111111' : '000000' });
    expect({ status: wrongBinding.status, body: wrongBinding.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'Invalid binding_code.' } });
    const noBinding = await token({ grant_type: MFA_OOB_GRANT, ...app.auth, mfa_token: mfa, oob_code: oob });
    expect({ status: noBinding.status, error: noBinding.body.error }).toEqual({ status: 400, error: 'invalid_request' });

    const done = await token({ grant_type: MFA_OOB_GRANT, ...app.auth, mfa_token: mfa, oob_code: oob, binding_code: emailed });
    expect(done.status).toBe(200);
    expect(decodeJwt(done.body.id_token as string).payload).toMatchObject({ sub: user.user_id, amr: ['pwd', 'mfa'] });
    expect((await token({ grant_type: MFA_OOB_GRANT, ...app.auth, mfa_token: mfa, oob_code: oob, binding_code: emailed })).status).toBe(403);

    // Nothing to challenge of a kind the client cannot show; an id that is not the user's.
    const other = await mfaToken(user);
    expect(await call('POST', '/mfa/challenge', { body: { ...app.auth, mfa_token: other, authenticator_id: 'totp|dev_someoneelse00' } })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const fresh = await createUser(server);
    expect(await call('POST', '/mfa/challenge', { body: { ...app.auth, mfa_token: await mfaToken(fresh), challenge_type: 'otp oob' } })).toMatchObject({ status: 400, body: { error: 'unsupported_challenge_type' } });
    expect(secret).toBeTruthy();
  });

  it('takes the recovery code once and answers with the next one', async () => {
    const { user, recovery } = await enrolledUser();
    const done = await token({ grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: await mfaToken(user), recovery_code: recovery.toLowerCase() });
    expect(done.status).toBe(200);
    expect(done.body.recovery_code).toMatch(/^[A-Z2-9]{24}$/);
    expect(done.body.recovery_code).not.toBe(recovery);
    expect(decodeJwt(done.body.id_token as string).payload).toMatchObject({ amr: ['pwd', 'mfa'] });
    const reused = await token({ grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: await mfaToken(user), recovery_code: recovery });
    expect({ status: reused.status, body: reused.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'Invalid recovery_code.' } });
    const nextOne = await token({ grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: await mfaToken(user), recovery_code: done.body.recovery_code });
    expect(nextOne.status).toBe(200);
  });

  it('binds the mfa_token to its client, refuses forged and expired ones, and grants the client has not enabled', async () => {
    const { user, secret } = await enrolledUser();
    const mfa = await mfaToken(user);
    const other = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['password', MFA_OTP_GRANT] });
    const stolen = await token({ grant_type: MFA_OTP_GRANT, ...other.auth, mfa_token: mfa, otp: codeAt(secret) });
    expect({ status: stolen.status, body: stolen.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'The mfa_token was issued to another client' } });
    expect(await call('POST', '/mfa/challenge', { body: { ...other.auth, mfa_token: mfa } })).toMatchObject({ status: 403, body: { error: 'invalid_grant' } });

    const forged = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: `${mfa.slice(0, -4)}AAAA`, otp: codeAt(secret) });
    expect({ status: forged.status, body: forged.body }).toEqual({ status: 403, body: { error: 'invalid_grant', error_description: 'Malformed mfa_token' } });
    const { sealer } = server.server.services;
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const claims = JSON.parse(sealer.unseal(mfa, `mfa-token:${tenantId}`)) as Json;
    const expired = sealer.seal(JSON.stringify({ ...claims, expiresAt: Date.now() - 1 }), `mfa-token:${tenantId}`);
    const late = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: expired, otp: codeAt(secret) });
    expect({ status: late.status, body: late.body }).toEqual({ status: 403, body: { error: 'expired_token', error_description: 'mfa_token is expired' } });
    const lateList = await call('GET', '/mfa/authenticators', { bearer: expired });
    expect({ status: lateList.status, error: lateList.body.error }).toEqual({ status: 401, error: 'expired_token' });
    const none = await call('GET', '/mfa/authenticators');
    expect({ status: none.status, error: none.body.error, challenge: none.headers.get('www-authenticate') }).toEqual({ status: 401, error: 'invalid_token', challenge: expect.stringMatching(/^Bearer/) });

    const noGrant = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['password'] });
    const refused = await token({ grant_type: MFA_OTP_GRANT, ...noGrant.auth, mfa_token: await mfaToken(user, noGrant), otp: codeAt(secret) });
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 403, error: 'unauthorized_client' });
    const missing = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa });
    expect({ status: missing.status, error: missing.body.error }).toEqual({ status: 400, error: 'invalid_request' });
    expect(await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['oob'], oob_channels: ['email'] } })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    // Still usable after all that: nothing above was a wrong code of this token's user but the stolen one.
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret, 30) })).status).toBe(200);
  });

  it('locks the factor after 10 wrong codes, even for the right one, until an administrator unblocks the user', async () => {
    const { user, secret } = await enrolledUser();
    const mfa = await mfaToken(user);
    const right = () => codeAt(secret, 30);
    const wrong = () => (right() === '000000' ? '111111' : '000000');
    for (let i = 0; i < 10; i++) {
      const res = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: wrong() });
      expect({ i, status: res.status, error: res.body.error }).toEqual({ i, status: 403, error: 'invalid_grant' });
    }
    const locked = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: right() });
    expect({ status: locked.status, error: locked.body.error }).toEqual({ status: 429, error: 'too_many_attempts' });
    const recovery = await token({ grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: mfa, recovery_code: 'ABCDEFGHJKLMNPQRSTUVWXYZ' });
    expect(recovery.status).toBe(429);
    expect((await manage('DELETE', `/user-blocks/${encodeURIComponent(user.user_id)}`)).status).toBe(204);
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: right() })).status).toBe(200);
  });

  it("counts the statements: one of MFA's own per step beyond the factor check (the otp step uses the token up and reads the user in one)", async () => {
    const { user, secret } = await enrolledUser();
    const api = await createApi(server);
    const record = async (run: () => Promise<unknown>) => {
      recording = [];
      await run();
      const seen = recording.filter((sql) => !NOISE.test(sql));
      recording = undefined;
      return seen;
    };
    const mfa = await mfaToken(user, app, { audience: api.identifier });
    const passwordStep = await record(() => mfaToken(user, app, { audience: api.identifier }));
    const otpStep = await record(async () => expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret, 30) })).status).toBe(200));
    expect((await manage('PUT', '/guardian/policies', [])).status).toBe(200);
    let plain: string[];
    try {
      plain = await record(async () => expect((await token({ grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD, scope: 'openid email offline_access', audience: api.identifier })).status).toBe(200));
    } finally {
      expect((await manage('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    }
    // The factor check: the enrollments read and the time step's conditional write.
    const factorCheck = otpStep.filter((sql) => sql.includes('"mfa_enrollments"'));
    expect(factorCheck).toHaveLength(2);
    // Per step, one statement of MFA's own: the password step leaves the challenge behind the mfa_token (one
    // insert), the otp step uses it up and reads the user in one statement (on SQLite too: no second read).
    const own = (statements: string[]) => statements.filter((sql) => sql.includes('"mfa_challenges"'));
    expect(own(passwordStep)).toHaveLength(1);
    expect(own(otpStep)).toHaveLength(1);
    expect(own(otpStep)[0]).toMatch(/^delete from "mfa_challenges".*returning \(select .* from "users"/is);
    // The rest of the otp step is what the password grant does too (client authentication, issuing).
    const rest = otpStep.filter((sql) => !factorCheck.includes(sql) && !own(otpStep).includes(sql));
    const unmatched = [...plain];
    for (const sql of rest) {
      const at = unmatched.indexOf(sql);
      expect(at, `a statement the password grant does not run: ${sql}`).toBeGreaterThanOrEqual(0);
      unmatched.splice(at, 1);
    }
    const mfaLogin = passwordStep.length + otpStep.length;
    console.info(`[mfa-api ${dialect}] statements: password grant without MFA ${plain.length}; with MFA: password step ${passwordStep.length}, mfa-otp grant ${otpStep.length} (factor check 2)`);
    // Two steps, so at most two statements beyond the factor check and the login without MFA.
    expect(mfaLogin - factorCheck.length - plain.length).toBeLessThanOrEqual(2);
  });
});
