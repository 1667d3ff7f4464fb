/**
 * Cross-origin login tickets (/co/authenticate → /authorize?login_ticket). The ticket and its verifier are
 * stored as SHA-256 hashes only; a ticket is bound to its client and to the browser that authenticated (the hash
 * of a cookie set with it), and is deleted when used. Rows go with their tenant, client or user.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cross_origin_tickets')
    /** The public `co_id`: names the ticket in the verifier exchange. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    /** SHA-256 (hex) of the login ticket. */
    .addColumn('ticket_hash', 'text', (c) => c.notNull().unique())
    /** SHA-256 (hex) of the co_verifier the app keeps in its own storage (for the fallback exchange). */
    .addColumn('verifier_hash', 'text', (c) => c.notNull())
    /** SHA-256 (hex) of the browser-binding cookie set by /co/authenticate. */
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    /** The login transaction waiting for the verifier exchange, once the fallback page was shown. */
    .addColumn('transaction_id', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cross_origin_tickets_expiry').on('cross_origin_tickets').column('expires_at').execute();
  await db.schema.createIndex('cross_origin_tickets_transaction').on('cross_origin_tickets').column('transaction_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('cross_origin_tickets').execute();
}
