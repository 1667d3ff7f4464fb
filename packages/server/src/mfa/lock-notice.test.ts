/**
 * The factor lock's notice, on both dialects, with a real SMTP server: the 10th wrong code emails the user the
 * blocked_account notice once (not again for the refused answers after it); its /u/unblock link lifts the lock
 * once; an administrator's unblock spends the links of earlier notices; and the tenant's blocked_account
 * template, when saved, words it. Codes through the MFA API over raw HTTP, computed by otplib.
 */
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MFA_OTP_GRANT } from '../auth-api/mfa/grant-types.js';
import { createClient, createUser, PASSWORD, post, type TestClient } from '../auth-api/user-tokens/testing.js';
import type { User } from '../store/users.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { linkIn, startTestSmtp, type ReceivedEmail, type TestSmtp } from '../test-support/smtp.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
type Json = Record<string, unknown>;

describe.each(dialects)('the factor lock notice (%s)', (dialect) => {
  let server: TestServer;
  let smtp: TestSmtp;
  let app: TestClient;
  let management: string;
  const codeAt = (secret: string, offsetSeconds = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });
  const token = (body: Json) => post(server, '/oauth/token', body);

  const call = async (method: string, path: string, options: { bearer?: string; body?: unknown } = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(options.bearer !== undefined && { authorization: `Bearer ${options.bearer}` }), ...(options.body !== undefined && { 'content-type': 'application/json' }) },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  };
  const manage = (method: string, path: string, body?: unknown) => call(method, `/api/v2${path}`, { bearer: management, body });

  async function mfaToken(user: User): Promise<string> {
    const res = await token({ grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD });
    expect(res.status).toBe(403);
    return res.body.mfa_token as string;
  }

  async function enrolledUser(): Promise<{ user: User; secret: string }> {
    const user = await createUser(server);
    const mfa = await mfaToken(user);
    const associated = await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['otp'] } });
    const secret = associated.body.secret as string;
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret) })).status).toBe(200);
    return { user, secret };
  }

  /** Ten wrong codes: the factor locks. */
  async function lock(mfa: string, secret: string): Promise<void> {
    const wrong = () => (codeAt(secret, 30) === '000000' ? '111111' : '000000');
    for (let i = 0; i < 10; i++) expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: wrong() })).status).toBe(403);
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret, 30) })).status).toBe(429);
  }

  const noticesTo = (user: User) => smtp.received.filter((m) => m.to.includes(user.email!) && /has been blocked/.test(m.subject));

  beforeAll(async () => {
    smtp = await startTestSmtp();
    server = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_EMAIL_FROM: 'Gatehouse <no-reply@gatehouse.test>' } });
    management = await managementToken(server);
    for (const factor of ['otp', 'recovery-code']) expect((await manage('PUT', `/guardian/factors/${factor}`, { enabled: true })).status).toBe(200);
    expect((await manage('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['password', MFA_OTP_GRANT] });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('emails the notice once per lock; its link lifts the lock once', async () => {
    const { user, secret } = await enrolledUser();
    const mfa = await mfaToken(user);
    await lock(mfa, secret);
    const notice = await smtp.waitFor((m) => m.to.includes(user.email!) && /has been blocked/.test(m.subject));
    expect(notice.text).toContain('10 wrong codes');
    const link = linkIn(notice, `${server.url}/u/unblock?ticket=`);
    // The refused answers after the lock send nothing more.
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret, 30) })).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(noticesTo(user)).toHaveLength(1);

    const unblocked = await fetch(link);
    expect(unblocked.status).toBe(200);
    expect(await unblocked.text()).toContain('Your account is unblocked');
    expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(secret, 30) })).status).toBe(200);
    const again = await fetch(link);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This link does not work');
  });

  it("an administrator's unblock spends the earlier notices' links; the saved blocked_account template words the notice", async () => {
    const { user, secret } = await enrolledUser();
    expect((await manage('PUT', '/email-templates/blocked_account', { body: '<p>Locked, {{ user.email }}: <a href="{{ url }}">unlock</a></p>', subject: 'Your account has been blocked ({{ friendly_name }})', enabled: true, syntax: 'liquid' })).status).toBe(200);
    try {
      await lock(await mfaToken(user), secret);
      const notice: ReceivedEmail = await smtp.waitFor((m) => m.to.includes(user.email!) && /has been blocked/.test(m.subject));
      expect(notice.html).toContain(`Locked, ${user.email}`);
      const link = /href="([^"]+\/u\/unblock\?ticket=[^"]+)"/.exec(notice.html)![1]!.replace(/&amp;/g, '&');
      expect((await manage('DELETE', `/user-blocks/${encodeURIComponent(user.user_id)}`)).status).toBe(204);
      expect((await fetch(link)).status).toBe(400);
      expect((await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: await mfaToken(user), otp: codeAt(secret, 30) })).status).toBe(200);
    } finally {
      await manage('PATCH', '/email-templates/blocked_account', { enabled: false });
    }
  });
});
