/**
 * The email outbox: every email is first a row, written by the change that causes it (in its transaction when it
 * has one), then delivered by the email worker. Bodies are sealed at rest, since their links carry live tickets,
 * and dropped once a message is sent or given up; without SMTP the rows are kept as the dev mailbox.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { sql, type Kysely } from 'kysely';
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Sealer } from '../crypto/sealing.js';
import type { Dialect } from '../store/db.js';
import type { Database, EmailOutboxTable } from '../store/schema.js';

export interface EmailBody {
  text: string;
  html: string;
  /** A From header of the tenant's template; without it, the provider's or the server's default. */
  from?: string;
}

export interface QueuedEmail {
  tenantId: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  from?: string | undefined;
}

const queued = new EventEmitter();

/** Wakes this process's email worker (the row may commit a moment later; the worker looks closely for a while). */
export function emailQueued(): void {
  queued.emit('queued');
}

export function onEmailQueued(listener: () => void): () => void {
  queued.on('queued', listener);
  return () => queued.off('queued', listener);
}

function sealContext(id: string): string {
  return `email:${id}`;
}

/** A recipient is one plain address: no display name, no list, no line breaks (header injection). */
export function isDeliverableAddress(value: string): boolean {
  return value.length <= 320 && /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+\.[^\s@<>,;:"()[\]\\]+$/.test(value);
}

/** Writes one email to the outbox with `db` (a transaction, when the email belongs to a change). */
export async function enqueueEmail(db: Kysely<Database>, sealer: Sealer, email: QueuedEmail, now = Date.now()): Promise<string> {
  if (!isDeliverableAddress(email.to)) throw new TypeError('not a single email address');
  // A subject is one header line.
  const subject = email.subject.replace(/[\r\n]+/g, ' ').slice(0, 500);
  const id = `eml_${randomAlphanumeric(22)}`;
  await db
    .insertInto('email_outbox')
    .values({
      id,
      tenant_id: email.tenantId,
      recipient: email.to,
      subject,
      body_sealed: sealer.seal(JSON.stringify({ text: email.text, html: email.html, ...(email.from && { from: email.from.replace(/[\r\n]+/g, ' ') }) } satisfies EmailBody), sealContext(id)),
      status: 'pending',
      attempt_count: 0,
      next_attempt_at: now,
      lease_id: null,
      last_error: null,
      created_at: now,
      completed_at: null,
    })
    .execute();
  emailQueued();
  return id;
}

export function openBody(sealer: Sealer, row: Pick<EmailOutboxTable, 'id' | 'body_sealed'>): EmailBody | undefined {
  if (!row.body_sealed) return undefined;
  return JSON.parse(sealer.unseal(row.body_sealed, sealContext(row.id))) as EmailBody;
}

export type ClaimedEmail = Pick<EmailOutboxTable, 'id' | 'tenant_id' | 'recipient' | 'subject' | 'body_sealed' | 'attempt_count' | 'lease_id'>;

/** Leases up to `limit` due rows: they are this claimer's until `now + leaseMs` (then due again, at least once). */
export async function claimDueEmails(db: Kysely<Database>, dialect: Dialect, limit: number, leaseMs: number, now = Date.now()): Promise<ClaimedEmail[]> {
  const leaseId = randomUUID();
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const result = await sql<ClaimedEmail>`
    update email_outbox set next_attempt_at = ${now + leaseMs}, lease_id = ${leaseId}
    where id in (
      select id from email_outbox
      where status = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at
      limit ${limit}
      ${lock}
    )
    returning id, tenant_id, recipient, subject, body_sealed, attempt_count, lease_id`.execute(db);
  return result.rows;
}

type Outcome = { status: 'sent' | 'kept' } | { status: 'failed'; error: string } | { status: 'retry'; error: string; at: number };

/** Records an attempt's outcome; a row whose lease went to another claimer is left alone. */
export async function settleEmail(db: Kysely<Database>, row: ClaimedEmail, outcome: Outcome, now = Date.now()): Promise<void> {
  const attempts = outcome.status === 'kept' ? row.attempt_count : row.attempt_count + 1;
  const base = db.updateTable('email_outbox').where('id', '=', row.id).where('lease_id', '=', row.lease_id);
  switch (outcome.status) {
    case 'kept':
      await base.set({ status: 'kept', lease_id: null, completed_at: now }).execute();
      return;
    case 'sent':
      await base.set({ status: 'sent', lease_id: null, completed_at: now, attempt_count: attempts, body_sealed: null, last_error: null }).execute();
      return;
    case 'failed':
      await base.set({ status: 'failed', lease_id: null, completed_at: now, attempt_count: attempts, body_sealed: null, last_error: outcome.error }).execute();
      return;
    case 'retry':
      await base.set({ lease_id: null, next_attempt_at: outcome.at, attempt_count: attempts, last_error: outcome.error }).execute();
      return;
  }
}

/** On start of the only claimer (SQLite, one process): rows leased by a process that died are due at once. */
export async function releaseEmailLeases(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const result = await db
    .updateTable('email_outbox')
    .set({ lease_id: null, next_attempt_at: now })
    .where('status', '=', 'pending')
    .where('lease_id', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export type MailboxEntry = Pick<EmailOutboxTable, 'id' | 'recipient' | 'subject' | 'body_sealed' | 'created_at'>;

/** The dev mailbox of a tenant, newest first. */
export async function listKeptEmails(db: Kysely<Database>, tenantId: string, limit: number): Promise<MailboxEntry[]> {
  return db
    .selectFrom('email_outbox')
    .select(['id', 'recipient', 'subject', 'body_sealed', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'kept')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function findKeptEmail(db: Kysely<Database>, tenantId: string, id: string): Promise<MailboxEntry | undefined> {
  return db
    .selectFrom('email_outbox')
    .select(['id', 'recipient', 'subject', 'body_sealed', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'kept')
    .where('id', '=', id)
    .executeTakeFirst();
}

/** How long finished rows stay: sent or failed ones for the record, kept ones (the dev mailbox) past their links' life. */
export const SETTLED_EMAIL_RETENTION_MS = 30 * 24 * 3_600_000;
export const KEPT_EMAIL_RETENTION_MS = 7 * 24 * 3_600_000;

export async function purgeOldEmails(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db
    .deleteFrom('email_outbox')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', ['sent', 'failed']), eb('completed_at', '<', now - SETTLED_EMAIL_RETENTION_MS)]),
        eb.and([eb('status', '=', 'kept'), eb('created_at', '<', now - KEPT_EMAIL_RETENTION_MS)]),
      ]),
    )
    .execute();
}
