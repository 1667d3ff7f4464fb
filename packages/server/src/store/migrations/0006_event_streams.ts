/**
 * Event streams: the streams (webhook destinations and their subscriptions), the outbox of events raised by
 * changes, and one delivery row per (stream, event) that the delivery worker claims, retries and finishes.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_streams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('subscriptions', 'text', (c) => c.notNull())
    .addColumn('destination_type', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('credential_sealed', 'text')
    .addColumn('signing_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('event_streams_tenant_name', ['tenant_id', 'name'])
    .execute();

  // The outbox: written in the transaction of the change, whether or not any stream subscribes.
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_tenant_created').on('events').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('event_deliveries')
    .addColumn('stream_id', 'text', (c) => c.notNull().references('event_streams.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_id', 'text')
    .addColumn('redelivery', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addPrimaryKeyConstraint('event_deliveries_pk', ['stream_id', 'event_id'])
    .execute();
  // The worker's claim: due pending rows, oldest due first.
  await db.schema.createIndex('event_deliveries_due').on('event_deliveries').columns(['status', 'next_attempt_at']).execute();
  // The deliveries listing (failed rows of one stream, by time) and the failure count for auto-disable.
  await db.schema
    .createIndex('event_deliveries_stream_status')
    .on('event_deliveries')
    .columns(['stream_id', 'status', 'created_at', 'event_id'])
    .execute();
  // Stats: outcomes of one stream by completion time.
  await db.schema.createIndex('event_deliveries_stream_completed').on('event_deliveries').columns(['stream_id', 'completed_at']).execute();
  await db.schema.createIndex('event_deliveries_event').on('event_deliveries').column('event_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('event_deliveries').execute();
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('event_streams').execute();
}
