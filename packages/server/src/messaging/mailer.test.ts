/**
 * The mailer over a real SMTP exchange (smtp-server in this process): authentication, headers and both parts,
 * retries after a temporary refusal, giving up on a permanent one; the dev mailbox without SMTP; the config keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import type { Tenant } from '../store/tenants.js';
import { enqueueEmail, KEPT_EMAIL_RETENTION_MS, purgeOldEmails, SETTLED_EMAIL_RETENTION_MS } from './email-outbox.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { startTestSmtp, type TestSmtp } from '../test-support/smtp.js';

const FROM = 'Gatehouse Tests <no-reply@gatehouse.test>';

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !(await postgresAvailable()))(`email over SMTP (${dialect})`, () => {
    let smtp: TestSmtp;
    let test: TestServer;
    let tenant: Tenant;

    beforeAll(async () => {
      smtp = await startTestSmtp();
      test = await startTestServer({ dialect, env: { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_EMAIL_FROM: FROM } });
      tenant = test.server.prepared.bootstrap!.tenant;
    });
    afterAll(async () => {
      await test.close();
      await smtp.close();
    });

    const row = (to: string) =>
      test.server.prepared.store.db.selectFrom('email_outbox').selectAll().where('recipient', '=', to).executeTakeFirst();

    it('sends a queued email through the SMTP server with its credentials, From header, text and HTML parts', async () => {
      await test.server.services.mailer.send({ tenant, to: 'ada@example.com', subject: 'Hello Ada', text: 'Hi Ada: https://example.com/x?y=1', html: '<p>Hi <b>Ada</b></p>' });
      const email = await smtp.waitFor((e) => e.to.includes('ada@example.com'));
      expect(email.headers.get('from')).toBe(FROM);
      expect(email.from).toBe('no-reply@gatehouse.test');
      expect(email.subject).toBe('Hello Ada');
      expect(email.text.trim()).toBe('Hi Ada: https://example.com/x?y=1');
      expect(email.html).toContain('<p>Hi <b>Ada</b></p>');
      // Sent: the sealed body (live links) is gone from the outbox.
      const stored = await until(async () => {
        const r = await row('ada@example.com');
        return r?.status === 'sent' ? r : undefined;
      });
      expect(stored.body_sealed).toBeNull();
      expect(stored.attempt_count).toBe(1);
    });

    it('tries again after a temporary refusal (451) and delivers', { timeout: 20_000 }, async () => {
      smtp.refuseNext(1, 451);
      await test.server.services.mailer.send({ tenant, to: 'retry@example.com', subject: 'Retry me', text: 'retry', html: '<p>retry</p>' });
      const email = await smtp.waitFor((e) => e.to.includes('retry@example.com'), 15_000);
      expect(email.subject).toBe('Retry me');
      const stored = await until(async () => {
        const r = await row('retry@example.com');
        return r?.status === 'sent' ? r : undefined;
      });
      expect(stored.attempt_count).toBe(2);
    });

    it('gives up at once on a permanent refusal (550), keeps the reason, never the SMTP password', async () => {
      smtp.refuseNext(1, 550);
      await test.server.services.mailer.send({ tenant, to: 'never@example.com', subject: 'Never', text: 'never', html: '<p>never</p>' });
      const stored = await until(async () => {
        const r = await row('never@example.com');
        return r?.status === 'failed' ? r : undefined;
      });
      expect(stored.attempt_count).toBe(1);
      expect(stored.body_sealed).toBeNull();
      expect(stored.last_error).toContain('550');
      expect(stored.last_error).not.toContain('s3cret-smtp-pass');
      expect(smtp.received.some((e) => e.to.includes('never@example.com'))).toBe(false);
    });

    it('purges settled rows after 30 days and dev-mailbox rows after 7, and leaves pending ones', async () => {
      const db = test.server.prepared.store.db;
      const now = Date.now();
      const old = now - SETTLED_EMAIL_RETENTION_MS - 1000;
      const ids: Record<string, string> = {};
      for (const status of ['sent', 'failed', 'kept', 'pending', 'recent'] as const) {
        // Queued as due in an hour, so the running worker leaves them alone; then aged by hand.
        const id = await enqueueEmail(db, test.server.services.sealer, { tenantId: tenant.id, to: `${status}@purge.example`, subject: status, text: 't', html: 'h' }, now + 3_600_000);
        ids[status] = id;
        const fields =
          status === 'pending'
            ? { created_at: old }
            : status === 'recent'
              ? { status: 'sent' as const, completed_at: now }
              : { status, completed_at: old, created_at: now - KEPT_EMAIL_RETENTION_MS - 1000 };
        await db.updateTable('email_outbox').set(fields).where('id', '=', id).execute();
      }
      await purgeOldEmails(db, now);
      const left = (await db.selectFrom('email_outbox').select('id').where('recipient', 'like', '%@purge.example').execute()).map((r) => r.id);
      expect(left.sort()).toEqual([ids.pending, ids.recent].sort());
    });

    it('refuses a recipient that is not one plain address (no header injection), and hides the dev mailbox', async () => {
      await expect(test.server.services.mailer.send({ tenant, to: 'a@example.com, b@example.com', subject: 's', text: 't', html: 'h' })).rejects.toThrow(TypeError);
      await expect(test.server.services.mailer.send({ tenant, to: 'a@example.com\r\nBcc: b@example.com', subject: 's', text: 't', html: 'h' })).rejects.toThrow(TypeError);
      expect((await fetch(`${test.url}/dev/mailbox`)).status).toBe(404);
    });
  });
}

describe('dev mailbox (no SMTP configured)', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer();
  });
  afterAll(() => test.close());

  it('keeps the email and lists it at /dev/mailbox with its links clickable, and its HTML part at /dev/mailbox/:id', async () => {
    const tenant = test.server.prepared.bootstrap!.tenant;
    await test.server.services.mailer.send({ tenant, to: 'dev@example.com', subject: 'Your link', text: `Open ${test.url}/u/some-page?x=1&y=2 now`, html: '<p>Open <a href="#">it</a></p>' });
    const page = await until(async () => {
      const response = await fetch(`${test.url}/dev/mailbox`);
      const text = await response.text();
      return response.status === 200 && text.includes('Your link') ? text : undefined;
    });
    expect(page).toContain('To dev@example.com');
    expect(page).toContain(`<a href="${test.url}/u/some-page?x=1&amp;y=2">`);
    const id = /href="\/dev\/mailbox\/(eml_[A-Za-z0-9]{22})"/.exec(page)?.[1];
    expect(id).toBeDefined();
    const htmlPart = await fetch(`${test.url}/dev/mailbox/${id}`);
    expect(htmlPart.status).toBe(200);
    expect(htmlPart.headers.get('content-security-policy')).toContain('sandbox');
    expect(await htmlPart.text()).toContain('<p>Open <a href="#">it</a></p>');
    const unknown = await fetch(`${test.url}/dev/mailbox/eml_${'x'.repeat(22)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    expect((await fetch(`${test.url}/dev/mailbox/not-an-id`)).status).toBe(400);
  });

  it('is off when GATEHOUSE_DEV_MAILBOX=0', async () => {
    const off = await startTestServer({ env: { GATEHOUSE_DEV_MAILBOX: '0' } });
    try {
      expect((await fetch(`${off.url}/dev/mailbox`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('mail configuration', () => {
  it('reads GATEHOUSE_SMTP_URL, GATEHOUSE_EMAIL_FROM and GATEHOUSE_DEV_MAILBOX with safe defaults', () => {
    expect(loadConfig({})).toMatchObject({ smtpUrl: undefined, emailFrom: 'Gatehouse <no-reply@localhost>', devMailbox: true });
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://id.example.com' })).toMatchObject({ devMailbox: false, emailFrom: 'Gatehouse <no-reply@id.example.com>' });
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://id.example.com', GATEHOUSE_DEV_MAILBOX: '1' }).devMailbox).toBe(true);
    expect(loadConfig({ GATEHOUSE_SMTP_URL: 'smtps://u:p@mail.example.com:465' })).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example.com:465', devMailbox: false });
    expect(loadConfig({ GATEHOUSE_EMAIL_FROM: 'no-reply@example.com' }).emailFrom).toBe('no-reply@example.com');
  });

  it.each([
    [{ GATEHOUSE_SMTP_URL: 'http://u:hunter2@mail.example.com' }, /GATEHOUSE_SMTP_URL: the scheme must be smtp/],
    [{ GATEHOUSE_SMTP_URL: 'not a url hunter2' }, /GATEHOUSE_SMTP_URL: expected smtp:/],
    [{ GATEHOUSE_EMAIL_FROM: 'Evil\r\nBcc: x@example.com <a@example.com>' }, /GATEHOUSE_EMAIL_FROM/],
    [{ GATEHOUSE_EMAIL_FROM: 'nobody' }, /GATEHOUSE_EMAIL_FROM=nobody/],
    [{ GATEHOUSE_DEV_MAILBOX: 'yes' }, /GATEHOUSE_DEV_MAILBOX=yes: expected 1 or 0/],
    [{ GATEHOUSE_DEV_MAILBOX: '1', GATEHOUSE_SMTP_URL: 'smtp://mail.example.com' }, /cannot be combined/],
  ])('refuses %o with a message that names the key and never echoes the SMTP password', (env, message) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('hunter2');
  });
});
