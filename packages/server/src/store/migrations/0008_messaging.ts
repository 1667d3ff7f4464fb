/**
 * Messaging: the email outbox (every email is a row first, so a slow or failing mail server never blocks a
 * request and a crash never loses a message; without SMTP the rows are the dev mailbox) and the single-use
 * tickets that emailed links carry (password reset, email verification), stored as SHA-256 hashes.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    /** Sealed JSON `{text, html}` (links in it carry live tickets); cleared once the message is sent or given up. */
    .addColumn('body_sealed', 'text')
    /** pending | sent | failed | kept (the dev mailbox: no SMTP configured). */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    /** Set while a worker holds the row; `next_attempt_at` is then the end of the lease. */
    .addColumn('lease_id', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('email_outbox_due').on('email_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('email_outbox_tenant_created').on('email_outbox').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('user_tickets')
    /** SHA-256 (hex) of the ticket in the emailed link; the ticket itself is never stored. */
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    /** password_reset | email_verification */
    .addColumn('purpose', 'text', (c) => c.notNull())
    /** The address the link was sent to: a verification counts only while the user still has it. */
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('user_tickets_user').on('user_tickets').columns(['user_id', 'purpose']).execute();
  await db.schema.createIndex('user_tickets_expires').on('user_tickets').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('user_tickets').execute();
  await db.schema.dropTable('email_outbox').execute();
}
