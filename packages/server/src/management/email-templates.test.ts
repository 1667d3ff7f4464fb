/**
 * /api/v2/emails/provider and /api/v2/email-templates over real HTTP, with real SMTP servers (smtp-server in
 * this process): the tenant's provider overrides GATEHOUSE_SMTP_URL; its password is write-only and sealed; a
 * template edit changes the next verification email received; a template cannot read the server's environment
 * or files; a disabled template sends nothing; emails the server does not send are not offered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { linkIn, startTestSmtp, type ReceivedEmail, type TestSmtp } from '../test-support/smtp.js';
import { finishedJob } from '../test-support/operation-examples.js';
import { readForm, TestBrowser } from '../test-support/sign-in.js';

type Json = Record<string, unknown>;
const PROBE = 'env-probe-value-7f3a9c';
const TENANT_SMTP = { user: 'tenant-mailer', pass: 'tenant-smtp-password-42' };

describe('email provider and email templates', () => {
  let globalSmtp: TestSmtp;
  let tenantSmtp: TestSmtp;
  let server: TestServer;
  let token: string;

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json, text };
  }

  let n = 0;
  /** A new unverified user and a verification email sent to them; resolves to the address. */
  async function sendVerification(): Promise<string> {
    const email = `person${n++}@example.com`;
    const user = await call('POST', '/users', { connection: 'Username-Password-Authentication', email, password: 'correct horse battery staple 1', verify_email: false });
    expect(user.status).toBe(201);
    const job = await call('POST', '/jobs/verification-email', { user_id: user.body.user_id });
    expect(job.status, job.text).toBe(201);
    expect((await finishedJob({ test: server, token }, job.body.id as string)).status).toBe('completed');
    return email;
  }
  const received = (smtp: TestSmtp, to: string): Promise<ReceivedEmail> => smtp.waitFor((e) => e.to.includes(to));

  beforeAll(async () => {
    process.env.GATEHOUSE_TEMPLATE_PROBE = PROBE;
    globalSmtp = await startTestSmtp();
    tenantSmtp = await startTestSmtp(TENANT_SMTP);
    server = await startTestServer({ env: { GATEHOUSE_SMTP_URL: globalSmtp.url, GATEHOUSE_EMAIL_FROM: 'Server <server@gatehouse.test>' } });
    token = await managementToken(server);
  });
  afterAll(async () => {
    delete process.env.GATEHOUSE_TEMPLATE_PROBE;
    await server?.close();
    await globalSmtp?.close();
    await tenantSmtp?.close();
  });

  it('configures the tenant SMTP provider, with a write-only password sealed at rest', async () => {
    expect((await call('GET', '/emails/provider')).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_email_provider' });
    const port = Number(new URL(tenantSmtp.url).port);
    const credentials = { smtp_host: '127.0.0.1', smtp_port: port, smtp_user: TENANT_SMTP.user, smtp_pass: TENANT_SMTP.pass };
    expect((await call('POST', '/emails/provider', { name: 'sendgrid', credentials })).status).toBe(400);
    const created = await call('POST', '/emails/provider', { name: 'smtp', default_from_address: 'Acme <no-reply@acme.test>', credentials });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      name: 'smtp',
      enabled: true,
      default_from_address: 'Acme <no-reply@acme.test>',
      credentials: { smtp_host: '127.0.0.1', smtp_port: port, smtp_user: TENANT_SMTP.user },
      settings: {},
    });
    expect((await call('POST', '/emails/provider', { name: 'smtp', credentials })).status).toBe(409);
    const read = await call('GET', '/emails/provider');
    expect(read.text).not.toContain(TENANT_SMTP.pass);
    const row = await server.server.prepared.store.db.selectFrom('email_providers').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(TENANT_SMTP.pass);
    expect(JSON.stringify(row)).not.toContain(TENANT_SMTP.user);
    // A PATCH without the password keeps it (same host and user): mail still goes through below.
    const patched = await call('PATCH', '/emails/provider', { credentials: { smtp_host: '127.0.0.1', smtp_port: port, smtp_user: TENANT_SMTP.user } });
    expect(patched.status).toBe(200);
  });

  it('sends through the tenant provider; a template edit changes the next verification email', async () => {
    const first = await sendVerification();
    const builtIn = await received(tenantSmtp, first);
    expect(builtIn.headers.get('from')).toBe('Acme <no-reply@acme.test>');
    expect(builtIn.subject).toMatch(/^Verify your email address/);
    expect(globalSmtp.received.some((e) => e.to.includes(first))).toBe(false);

    const saved = await call('PUT', '/email-templates/verify_email', {
      syntax: 'liquid',
      enabled: true,
      from: '{{ friendly_name }} Accounts <accounts@acme.test>',
      subject: 'Confirm {{ user.email }} for {{ friendly_name }}',
      body: '<p>Hello {{ user.email }}!</p><p><a href="{{ url }}">Confirm</a></p>',
      urlLifetimeInSeconds: 3600,
    });
    expect(saved).toMatchObject({ status: 200, body: { template: 'verify_email', urlLifetimeInSeconds: 3600, enabled: true, resultUrl: null } });
    const second = await sendVerification();
    const edited = await received(tenantSmtp, second);
    expect(edited.subject).toBe(`Confirm ${second} for ${server.server.prepared.bootstrap!.tenant.friendlyName || server.server.prepared.bootstrap!.tenant.name}`);
    expect(edited.headers.get('from')).toMatch(/Accounts <accounts@acme\.test>$/);
    expect(edited.html).toContain(`<p>Hello ${second}!</p>`);
    // The link works, and lives as long as the template says.
    const link = linkIn(edited, `${server.url}/u/email-verification`);
    expect(edited.html).toContain(link.replace(/&/g, '&amp;'));
    expect((await fetch(link)).status).toBe(200);
    const ticket = await server.server.prepared.store.db.selectFrom('user_tickets').select(['created_at', 'expires_at']).where('email', '=', second).executeTakeFirstOrThrow();
    expect(Number(ticket.expires_at) - Number(ticket.created_at)).toBe(3_600_000);

    const patched = await call('PATCH', '/email-templates/verify_email', { body: '<h1>Second edition for {{ user.email | upcase }}</h1><a href="{{ url }}">go</a>' });
    expect(patched.status).toBe(200);
    const third = await sendVerification();
    expect((await received(tenantSmtp, third)).html).toContain(`<h1>Second edition for ${third.toUpperCase()}</h1>`);
  });

  it('renders nothing of the server environment or files', async () => {
    const sandboxed = await call('PATCH', '/email-templates/verify_email', {
      body: 'A[{{ process.env.GATEHOUSE_TEMPLATE_PROBE }}][{{ env.GATEHOUSE_TEMPLATE_PROBE }}][{{ user.constructor.constructor }}][{{ global.process }}]B {{ url }}',
    });
    expect(sandboxed.status).toBe(200);
    for (const body of ["{% include '/etc/hosts' %}", "{% render '../../../../../etc/hosts' %}", "{% layout '/etc/passwd' %}", '{{ url '])
      expect((await call('PATCH', '/email-templates/verify_email', { body })).status).toBe(400);
    const to = await sendVerification();
    const email = await received(tenantSmtp, to);
    expect(email.html).toMatch(/^A\[\]\[\]\[\]\[\]B http/);
    expect(email.raw).not.toContain(PROBE);
    expect(email.raw).not.toContain('127.0.0.1 localhost');
  });

  it('sends nothing while the template is disabled', async () => {
    expect((await call('PATCH', '/email-templates/verify_email', { enabled: false })).body).toMatchObject({ enabled: false });
    const to = await sendVerification();
    const queued = await server.server.prepared.store.db.selectFrom('email_outbox').select('id').where('recipient', '=', to).execute();
    expect(queued).toEqual([]);
    await call('PATCH', '/email-templates/verify_email', { enabled: true });
  });

  it('offers only the emails this server sends, and what it honours', async () => {
    expect((await call('GET', '/email-templates/welcome_email')).status).toBe(404);
    const welcome = await call('PUT', '/email-templates/welcome_email', { body: '<p>hi</p>' });
    expect(welcome).toMatchObject({ status: 501, body: { statusCode: 501 } });
    expect(welcome.body.message).toMatch(/not offered/);
    expect((await call('POST', '/email-templates', { template: 'verify_email', body: '<p>x</p>' })).status).toBe(409);
    expect((await call('POST', '/email-templates', { template: 'reset_email', body: '<p>{{ url }}</p>' })).status).toBe(201);
    expect((await call('PATCH', '/email-templates/reset_email', { resultUrl: 'javascript:alert(1)' })).status).toBe(400);
    expect((await call('GET', '/email-templates/not_a_template')).status).toBe(400);
  });

  it('falls back to GATEHOUSE_SMTP_URL once the provider is removed', async () => {
    expect((await call('DELETE', '/emails/provider')).status).toBe(204);
    expect((await call('DELETE', '/emails/provider')).status).toBe(404);
    const to = await sendVerification();
    const email = await received(globalSmtp, to);
    expect(email.headers.get('from')).toMatch(/Accounts <accounts@acme\.test>$/);
  });

  it('sends the browser to the template’s resultUrl once a link has done its work, with the outcome (and the address when asked)', async () => {
    const saved = await call('PATCH', '/email-templates/verify_email', { resultUrl: 'https://app.example/verified?from=email', includeEmailInRedirect: true });
    expect(saved.body).toMatchObject({ resultUrl: 'https://app.example/verified?from=email', includeEmailInRedirect: true });
    const to = await sendVerification();
    const link = linkIn(await received(globalSmtp, to), `${server.url}/u/email-verification?ticket=`);
    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(302);
    const done = new URL(first.headers.get('location')!);
    expect(`${done.origin}${done.pathname}`).toBe('https://app.example/verified');
    expect(Object.fromEntries(done.searchParams)).toEqual({ from: 'email', email: to, success: 'true', message: 'Your email was verified. You can continue using the application.' });
    const again = new URL((await fetch(link, { redirect: 'manual' })).headers.get('location')!);
    expect(Object.fromEntries(again.searchParams)).toMatchObject({ success: 'false', message: 'This account is already verified.' });
    const unknown = new URL((await fetch(`${server.url}/u/email-verification?ticket=${'x'.repeat(43)}`, { redirect: 'manual' })).headers.get('location')!);
    expect(Object.fromEntries(unknown.searchParams)).toEqual({ from: 'email', success: 'false', message: 'User account does not exist or verification code is invalid.' });

    // The reset email's: after the new password is set, without the address (includeEmailInRedirect is off).
    expect((await call('PATCH', '/email-templates/reset_email', { resultUrl: 'https://app.example/reset-done' })).status).toBe(200);
    const reset = await fetch(`${server.url}/dbconnections/change_password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: server.server.prepared.bootstrap!.defaultAppClientId, connection: 'Username-Password-Authentication', email: to }),
    });
    expect(reset.status).toBe(200);
    const resetEmail = await globalSmtp.waitFor((e) => e.to.includes(to) && e.text.includes('/u/reset-password/ticket'));
    const browser = new TestBrowser();
    const form = readForm(await (await browser.get(linkIn(resetEmail, `${server.url}/u/reset-password/ticket?ticket=`))).text(), server.url);
    const posted = await browser.post(form.action, { ...form.fields, password: 'New-Password-456', password_confirmation: 'New-Password-456' });
    expect(posted.status).toBe(303);
    const changed = await browser.get(new URL(posted.headers.get('location')!, server.url).href);
    expect(changed.status).toBe(302);
    const back = new URL(changed.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe('https://app.example/reset-done');
    expect(Object.fromEntries(back.searchParams)).toEqual({ success: 'true', message: 'You can now login to the application with the new password.' });
  });
});
