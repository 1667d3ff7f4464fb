/**
 * Log streams (/api/v2/log-streams) and what tenant stats read.
 *
 * A log stream delivers the tenant's log events in log id order. The `logs` table is already durable (rows
 * commit with their change, or in the writer's batches), so a stream is a cursor over it rather than one
 * delivery row per (stream, log): the worker leases a due stream, reads the logs after `cursor`, POSTs them as
 * one batch, and moves the cursor only when the receiver accepted it. `batch_end` pins the batch a failed
 * attempt sent, so that its retries send the same logs again (same webhook-id), in order.
 *
 * The (tenant_id, type, date, user_id) index serves /stats/daily (counts of a few types per day) and
 * /stats/active-users (distinct users of successful logins in 30 days) from the index alone.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_streams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    /** active, paused or suspended. */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_priority', 'integer', (c) => c.notNull().defaultTo(0))
    /** JSON array of `{ type: 'category', name }`. */
    .addColumn('filters', 'text', (c) => c.notNull())
    /** JSON: the sink without its secrets (endpoint, content type and format, custom header names). */
    .addColumn('sink', 'text', (c) => c.notNull())
    /** The Authorization header value, sealed; null when none. */
    .addColumn('authorization_sealed', 'text')
    /** JSON array of custom headers `{header, value}`, sealed (values may be credentials); null when none. */
    .addColumn('custom_headers_sealed', 'text')
    .addColumn('signing_secret_sealed', 'text', (c) => c.notNull())
    /** The last log id delivered (or skipped by the filters); the next batch starts after it. */
    .addColumn('cursor', 'text', (c) => c.notNull())
    /** The last log id of a batch that failed and is being retried; null when no batch is outstanding. */
    .addColumn('batch_end', 'text')
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_id', 'text')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('log_streams_tenant_name', ['tenant_id', 'name'])
    .execute();
  // The worker's claim: active streams whose next look is due.
  await db.schema.createIndex('log_streams_due').on('log_streams').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('logs_tenant_type_date').on('logs').columns(['tenant_id', 'type', 'date', 'user_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('logs_tenant_type_date').execute();
  await db.schema.dropTable('log_streams').execute();
}
