/**
 * MFA enrollment tickets, on both dialects, over real HTTP with a real SMTP server: POST
 * /api/v2/guardian/enrollments/ticket (scopes, unknown and other tenants' users, bad bodies, factors not offered,
 * the secret kept only hashed), then the emailed link's page driven as a browser does: the authenticator app
 * enrolled with a code computed by otplib from the secret the page shows, without a password and without a
 * session; the same user then logs in with the password and a TOTP code. Used, expired, forged links and a
 * second factor where none more is allowed are refused plainly; a form from elsewhere (no CSRF cookie) too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { newId } from '../crypto/ids.js';
import { insertConnection } from '../store/connections.js';
import { openEnrollmentTicket } from '../mfa/enrollment-ticket.js';
import { findTenantById, insertTenant } from '../store/tenants.js';
import { managementCaller } from '../test-support/management-api.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { linkIn, startTestSmtp, type TestSmtp } from '../test-support/smtp.js';
import { createApp, createUser, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const CALLBACK = 'http://127.0.0.1:9/callback';
const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
type Json = Record<string, unknown>;

describe.each(dialects)('MFA enrollment tickets (%s)', (dialect) => {
  let test: TestServer;
  let smtp: TestSmtp;
  let app: TestApp;
  let counter = 0;
  const other = { tenantId: newId.tenant(), userId: 'auth0|0ther0tenant0user000002' };
  const codeAt = (secret: string, offsetSeconds = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

  const call = managementCaller(() => test);
  const ticketFor = (body: Json) => call('POST', '/guardian/enrollments/ticket', body);
  const newUser = async () => {
    const email = `t${Date.now()}${counter++}@example.com`;
    return { email, userId: (await createUser(test, email, PASSWORD)).user_id };
  };

  /** The login page, the password, and wherever it leads (the MFA page, or the app's callback). */
  async function passwordLogin(http: TestBrowser, email: string): Promise<Response | URL> {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = { client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' };
    const start = await http.follow(test.url, await http.get(`${test.url}/authorize?${new URLSearchParams(query)}`));
    if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
    const login = readForm(await start.text(), test.url);
    return http.submit(login.action, { ...login.fields, username: email, password: PASSWORD });
  }

  beforeAll(async () => {
    smtp = await startTestSmtp();
    test = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_EMAIL_FROM: 'Gatehouse <no-reply@gatehouse.test>' } });
    for (const factor of ['otp', 'recovery-code']) expect((await call('PUT', `/guardian/factors/${factor}`, { enabled: true })).status).toBe(200);
    expect((await call('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    app = await createApp(test, { callbacks: [CALLBACK] });
    const db = test.server.services.store.db;
    await insertTenant(db, { id: other.tenantId, name: `other-${randomBytes(3).toString('hex')}`, friendlyName: 'Other', baseUrl: 'https://other.example', domains: ['other.example'] });
    const connection = newId.connection();
    await insertConnection(db, { id: connection, tenant_id: other.tenantId, name: 'Username-Password-Authentication', strategy: 'auth0', options: {} }, []);
    const now = Date.now();
    await db
      .insertInto('users')
      .values({
        user_id: other.userId, tenant_id: other.tenantId, connection_id: connection, email: 'other@example.com', email_verified: 0, username: null, phone_number: null, phone_verified: 0,
        password_hash: null, blocked: 0, profile: '{}', user_metadata: '{}', app_metadata: '{}', linked_to: null, logins_count: 0, last_login: null, last_ip: null, last_password_reset: null, created_at: now, updated_at: now,
      })
      .execute();
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
    await smtp?.close();
  });

  let browser: BrowserSession | undefined;
  it('enrolls in Chromium under the real CSP, from the emailed link, typing the code the key gives', async (context) => {
    const { email, userId } = await newUser();
    expect((await ticketFor({ user_id: userId })).status).toBe(200);
    const link = linkIn(await smtp.waitFor((m) => m.to.includes(email) && /multi-factor/i.test(m.subject)), `${test.url}/u/mfa-enrollment?ticket=`);
    browser = await launchBrowser();
    const page = await openPage(browser, context);
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(link);
    await expect.poll(() => page.getByRole('heading', { name: 'Secure your account' }).count()).toBe(1);
    expect(await page.locator('figure.qr svg path').count()).toBeGreaterThan(0);
    const secret = (await page.locator('#secret').getAttribute('data-secret'))!;
    mkdirSync('/tmp/screens', { recursive: true });
    await page.screenshot({ path: `/tmp/screens/mfa-ticket-${dialect}.png`, fullPage: true });
    await page.getByLabel('6-digit code').fill(await codeAt(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Your authenticator app is set up' }).count()).toBe(1);
    expect(await page.locator('#recovery-code').textContent()).toMatch(/^[A-Z0-9]{24}$/);
    await page.screenshot({ path: `/tmp/screens/mfa-ticket-done-${dialect}.png`, fullPage: true });
    expect((await page.context().cookies()).filter((c) => c.name.startsWith('gh_session'))).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('creates a ticket with its scope, for users of the tenant only, and refuses bad bodies and factors not offered', async () => {
    const { userId } = await newUser();
    const refused = await call('POST', '/guardian/enrollments/ticket', { user_id: userId }, { token: await managementToken(test, ['read:users', 'update:guardian_factors']) });
    expect({ status: refused.status, errorCode: refused.body.errorCode }).toEqual({ status: 403, errorCode: 'insufficient_scope' });
    for (const unknown of ['auth0|000000000000000000000000', other.userId]) {
      expect(await ticketFor({ user_id: unknown, send_mail: false })).toMatchObject({ status: 404, body: { statusCode: 404, errorCode: 'inexistent_user' } });
    }
    for (const bad of [{}, { user_id: 'no-pipe' }, { user_id: userId, factor: 'sms' }, { user_id: userId, send_mail: 'yes' }, { user_id: userId, unknown: 1 }, { user_id: userId, email: 'not an address' }, { user_id: userId, factor: 'email' }]) {
      const res = await ticketFor(bad);
      expect({ bad, status: res.status, statusCode: res.body.statusCode }).toEqual({ bad, status: 400, statusCode: 400 });
    }
    for (const factor of ['webauthn-roaming', 'webauthn-platform', 'push-notification', 'phone']) {
      expect(await ticketFor({ user_id: userId, factor, send_mail: false })).toMatchObject({ status: 501, body: { errorCode: 'not_offered' } });
    }

    const created = await ticketFor({ user_id: userId, send_mail: false, factor: 'otp', email_locale: 'fr' });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['ticket_id', 'ticket_url']);
    const url = new URL(created.body.ticket_url as string);
    expect(`${url.origin}${url.pathname}`).toBe(`${test.url}/u/mfa-enrollment`);
    const secret = url.searchParams.get('ticket')!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Kept hashed: the row has the SHA-256 of the secret, and the secret nowhere.
    const row = await test.server.services.store.db.selectFrom('mfa_enrollment_tickets').selectAll().where('id', '=', created.body.ticket_id as string).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(Number(row.expires_at) - Number(row.created_at)).toBe(5 * 24 * 3_600_000);
  });

  it('emails the link; its page enrolls the authenticator app without a password or a session, once; then the user logs in with password and code', async () => {
    const { email, userId } = await newUser();
    const created = await ticketFor({ user_id: userId });
    expect(created.status).toBe(200);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && /multi-factor/i.test(m.subject));
    const link = linkIn(mail, `${test.url}/u/mfa-enrollment?ticket=`);
    expect(link).toBe(created.body.ticket_url);

    const http = new TestBrowser();
    const page = await http.get(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<svg');
    const secret = /data-secret="([A-Z2-7]+)"/.exec(html)![1]!;
    const form = readForm(html, test.url);
    expect(form.fields._csrf).toBeTruthy();

    // A form from another page (no CSRF cookie) is refused and spends nothing.
    const elsewhere = await new TestBrowser().post(form.action, { ...form.fields, code: await codeAt(secret) });
    expect(elsewhere.status).toBe(400);
    const wrong = await http.submitExpectingPage(form.action, { ...form.fields, code: '000000' === (await codeAt(secret)) ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('That code is not right');

    const done = await http.post(form.action, { ...form.fields, code: await codeAt(secret) });
    expect(done.status).toBe(200);
    const donePage = await done.text();
    expect(donePage).toContain('Your authenticator app is set up');
    expect(/id="recovery-code">([A-Z0-9]+)</.exec(donePage)?.[1]).toMatch(/^[A-Z0-9]{24}$/);
    // Enrollment only: no session, no redirect anywhere.
    expect([...http.cookies.keys()].filter((name) => name.startsWith('gh_session'))).toEqual([]);
    expect(done.headers.get('location')).toBeNull();
    const methods = await call('GET', `/users/${encodeURIComponent(userId)}/authentication-methods`);
    expect((methods.body as unknown as Json[]).filter((m) => m.type === 'totp' && m.confirmed === true)).toHaveLength(1);

    // Single use.
    const again = await http.get(link);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This link was already used');
    expect((await http.post(form.action, { ...form.fields, code: await codeAt(secret, 30) })).status).toBe(400);

    // The user logs in as anyone does: password, then a code from the app (the next time step: one is used).
    const login = new TestBrowser();
    const challenge = await passwordLogin(login, email);
    if (challenge instanceof URL) throw new Error('expected the MFA page');
    const challengePage = await challenge.text();
    expect(challengePage).toContain('Verify your identity');
    expect(challengePage).not.toContain('data-secret');
    const codeForm = readForm(challengePage, test.url);
    const landed = await login.submit(codeForm.action, { ...codeForm.fields, code: await codeAt(secret, 30) });
    expect(landed).toBeInstanceOf(URL);
    expect((landed as URL).searchParams.get('code')).toBeTruthy();
  });

  it('spends a link once when 20 tabs submit the right code at the same moment: one enrollment, one recovery code', async () => {
    const { userId } = await newUser();
    const ticket = await ticketFor({ user_id: userId, send_mail: false });
    const tabs = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const http = new TestBrowser();
        const html = await (await http.get(ticket.body.ticket_url as string)).text();
        return { http, html, form: readForm(html, test.url) };
      }),
    );
    // Every tab shows the one pending secret (a reload does not mint another).
    const secrets = new Set(tabs.map((tab) => /data-secret="([A-Z2-7]+)"/.exec(tab.html)![1]!));
    expect(secrets.size).toBe(1);
    const code = await codeAt([...secrets][0]!);
    const answers = await Promise.all(tabs.map((tab) => tab.http.post(tab.form.action, { ...tab.form.fields, code })));
    // One enrolls; the others are told the link was used (400), or, past the factor's guesses in flight, sent back
    // to the form (303): never a second enrollment.
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200 && s !== 400 && s !== 303)).toEqual([]);
    expect(statuses.filter((s) => s === 400).length).toBeGreaterThan(0);
    const methods = (await call('GET', `/users/${encodeURIComponent(userId)}/authentication-methods`)).body as unknown as Json[];
    expect(methods.filter((m) => m.type === 'totp' && m.confirmed === true)).toHaveLength(1);
    expect(methods.filter((m) => m.type === 'recovery-code')).toHaveLength(1);
  });

  it('refuses expired and forged links, and a second factor unless allow_multiple_enrollments', async () => {
    const { userId } = await newUser();
    const db = test.server.services.store.db;
    const expired = await ticketFor({ user_id: userId, send_mail: false });
    await db.updateTable('mfa_enrollment_tickets').set({ expires_at: Date.now() - 1000 }).where('id', '=', expired.body.ticket_id as string).execute();
    const expiredPage = await fetch(expired.body.ticket_url as string);
    expect(expiredPage.status).toBe(400);
    expect(await expiredPage.text()).toContain('This link has expired');
    for (const forged of [randomBytes(32).toString('base64url'), 'short', '']) {
      const res = await fetch(`${test.url}/u/mfa-enrollment?ticket=${encodeURIComponent(forged)}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('This link does not work');
    }

    // Enrolled with one ticket, a second (allow_multiple_enrollments false, the default) is refused.
    const first = await ticketFor({ user_id: userId, send_mail: false });
    const http = new TestBrowser();
    const html = await (await http.get(first.body.ticket_url as string)).text();
    const secret = /data-secret="([A-Z2-7]+)"/.exec(html)![1]!;
    const form = readForm(html, test.url);
    expect((await http.post(form.action, { ...form.fields, code: await codeAt(secret) })).status).toBe(200);
    const second = await ticketFor({ user_id: userId, send_mail: false });
    const refused = await fetch(second.body.ticket_url as string);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('already has a second factor');
    // allow_multiple_enrollments lets a user with another factor add one; an authenticator app they have already.
    const multiple = await ticketFor({ user_id: userId, send_mail: false, allow_multiple_enrollments: true });
    expect((await fetch(multiple.body.ticket_url as string)).status).toBe(400);

    // A ticket is its tenant's: a usable one, opened on another tenant's domain, opens nothing there.
    const fresh = await ticketFor({ user_id: (await newUser()).userId, send_mail: false });
    expect((await fetch(fresh.body.ticket_url as string)).status).toBe(200);
    const secret2 = new URL(fresh.body.ticket_url as string).searchParams.get('ticket');
    const otherTenant = (await findTenantById(db, other.tenantId))!;
    expect(await openEnrollmentTicket(test.server.services, otherTenant, secret2)).toEqual({ problem: 'invalid' });
    expect(await openEnrollmentTicket(test.server.services, (await findTenantById(db, test.server.prepared.bootstrap!.tenant.id))!, secret2)).toMatchObject({ user: { user_id: expect.any(String) } });
  });
});
