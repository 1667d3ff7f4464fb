/**
 * Tenant logs (the reference's /api/v2/logs): one row per authentication or management outcome. `log_id` is
 * time-ordered (logs/log-id.ts), so "newest first", date ranges and checkpoints all read the (tenant_id, log_id)
 * index, and each searchable field has its own (tenant_id, field, log_id) index: a search walks only the rows
 * that match, newest first, and stops at the page's end, however many rows the tenant has.
 */
import type { Kysely } from 'kysely';

/** The fields `q` may name besides `date` and `log_id` (logs/query.ts keeps the same list): each has an index. */
const INDEXED_LOG_FIELDS = ['type', 'user_id', 'client_id', 'connection', 'ip', 'user_name'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('logs')
    .addColumn('log_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** Epoch milliseconds. */
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('client_id', 'text')
    .addColumn('client_name', 'text')
    .addColumn('connection', 'text')
    .addColumn('connection_id', 'text')
    .addColumn('strategy', 'text')
    .addColumn('strategy_type', 'text')
    .addColumn('user_id', 'text')
    .addColumn('user_name', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('hostname', 'text')
    .addColumn('audience', 'text')
    .addColumn('scope', 'text')
    .addColumn('is_mobile', 'integer', (c) => c.notNull().defaultTo(0))
    /** JSON: the event's `details`, or null. Never a password, code, token or secret. */
    .addColumn('details', 'text')
    .execute();
  await db.schema.createIndex('logs_tenant_log_id').on('logs').columns(['tenant_id', 'log_id']).execute();
  for (const field of INDEXED_LOG_FIELDS) {
    await db.schema.createIndex(`logs_tenant_${field}`).on('logs').columns(['tenant_id', field, 'log_id']).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('logs').execute();
}
