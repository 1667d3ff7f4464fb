/**
 * The transactional outbox. A change calls `emitEvent` inside its own transaction: the event row, and one
 * delivery row per enabled stream subscribed to its type, commit or roll back with the change. The delivery
 * worker (worker.ts) finds the delivery rows by polling, and sooner when this process signals it.
 *
 * Emitting costs two statements: the event's insert, and one insert-select of its deliveries from the streams
 * subscribed at that moment (see fan-out below).
 */
import { EventEmitter } from 'node:events';
import { sql, type Kysely } from 'kysely';
import { lockTenant } from '../store/tenants.js';
import { randomAlphanumeric } from '../crypto/ids.js';
import { pooledRandomBytes } from '../crypto/random-pool.js';
import { insertRows, type BulkTable } from '../store/bulk-insert.js';
import type { Database } from '../store/schema.js';
import type { EventType } from './catalogue.js';

export interface EventContext {
  tenant_id?: string;
  client_id?: string;
  connection_id?: string;
  request_id?: string;
  ip?: string;
  user_agent?: string;
  /** The Host the request came to; only tenant logs use it (not part of an event's `data.context`). */
  hostname?: string;
}

export interface RaisedEvent {
  tenantId: string;
  type: EventType;
  object: Record<string, unknown>;
  previousObject?: Record<string, unknown>;
  context?: EventContext;
}

/** `data` of a CloudEvent, as reference A.8 and A.9 shape it. */
export interface CloudEventData {
  object: Record<string, unknown>;
  previous_object?: Record<string, unknown>;
  context?: Record<string, unknown>;
}

export interface CloudEvent {
  specversion: '1.0';
  type: EventType;
  /** `urn:gatehouse:<tenant domain>`. */
  source: string;
  /** `evt_` + 22 characters. */
  id: string;
  time: string;
  data: CloudEventData;
  /** The tenant's name. */
  a0tenant: string;
  /** The stream it was delivered to. */
  a0stream?: string;
  /** Only on test events. */
  a0purpose?: 'test';
}

// Time-ordered ids: 8 base62 digits of the millisecond clock, then 14 random ones (26 characters with `evt_`).
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62]! + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

export function newEventId(now = Date.now()): string {
  // Pooled bytes: a bulk import makes an event per user (crypto/random-pool.ts).
  return `evt_${base62(now, 8)}${randomAlphanumeric(14, pooledRandomBytes)}`;
}

/** `urn:gatehouse:<host>` of the tenant's public URL. */
export function eventSource(baseUrl: string): string {
  let host: string;
  try {
    host = new URL(baseUrl).host;
  } catch {
    host = baseUrl;
  }
  return `urn:gatehouse:${host}`;
}

/** The reference's `data.context` ({ tenant, client?, connection?, request? }) from what the caller knew. */
export function contextData(tenantId: string, context: EventContext): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  if (context.request_id) request.id = context.request_id;
  if (context.ip) request.ip = context.ip;
  if (context.user_agent) request.user_agent = context.user_agent;
  return {
    tenant: { id: context.tenant_id ?? tenantId },
    ...(context.client_id && { client: { id: context.client_id } }),
    ...(context.connection_id && { connection: { id: context.connection_id } }),
    ...(Object.keys(request).length > 0 && { request }),
  };
}

// --- fan-out ----------------------------------------------------------------------------------------------

/**
 * Which streams an event goes to is decided in the change's own transaction, from the streams table itself,
 * never from a copy: a copy kept by one node misses a stream another node has just created (issue 18). And a
 * stream's creation, change or deletion locks its tenant's row (lockTenantStreams), while the event's insert
 * holds a key-share lock on that row through its foreign key, so on PostgreSQL the two are ordered: a stream
 * committed before the change commits is seen by the fan-out statement (which runs after the event's insert,
 * and so after the stream's commit), and one created while the change is open waits for it. On SQLite one
 * writer at a time orders them.
 */
function subscribesTo(type: string) {
  // Subscriptions are stored as a JSON array of catalogue types; match the quoted type, with LIKE's wildcards
  // escaped (the same on both dialects).
  const pattern = `%${JSON.stringify(type).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`subscriptions like ${pattern} escape '\\'`;
}

/** Taken by every write of a tenant's streams, in its transaction (see above); PostgreSQL only. */
export async function lockTenantStreams(db: Kysely<Database>, tenantId: string): Promise<void> {
  await lockTenant(db, tenantId);
}

// --- wake-ups ---------------------------------------------------------------------------------------------

const queued = new EventEmitter();
queued.setMaxListeners(0);

/** Tells the workers of this process that delivery rows were written (they may not be committed yet). */
export function signalDeliveriesQueued(): void {
  queued.emit('queued');
}

/**
 * Tells the workers of this process that a tenant's settings or streams changed (they cache them for a
 * second); undefined for every tenant.
 */
export function signalTenantChanged(tenantId: string | undefined): void {
  queued.emit('tenant', tenantId);
}

export function onTenantChanged(listener: (tenantId: string | undefined) => void): () => void {
  queued.on('tenant', listener);
  return () => queued.off('tenant', listener);
}

/** Subscribes a worker to `signalDeliveriesQueued`; returns the unsubscribe function. */
export function onDeliveriesQueued(listener: () => void): () => void {
  queued.on('queued', listener);
  return () => queued.off('queued', listener);
}

// --- emitting and reading ---------------------------------------------------------------------------------

/** Call inside the same transaction as the change (pass the Transaction; it is a Kysely<Database>). */
export async function emitEvent(db: Kysely<Database>, event: RaisedEvent): Promise<void> {
  const now = Date.now();
  const id = newEventId(now);
  const data: CloudEventData = {
    object: event.object,
    ...(event.previousObject && { previous_object: event.previousObject }),
    context: contextData(event.tenantId, event.context ?? {}),
  };
  await db
    .insertInto('events')
    .values({ id, tenant_id: event.tenantId, type: event.type, data: JSON.stringify(data), created_at: now })
    .execute();
  const queuedRows = await db
    .insertInto('event_deliveries')
    .columns(['stream_id', 'event_id', 'tenant_id', 'event_type', 'status', 'attempt_count', 'next_attempt_at', 'lease_id', 'redelivery', 'attempts', 'created_at', 'completed_at'])
    .expression((eb) =>
      eb
        .selectFrom('event_streams')
        .select([
          'id',
          sql<string>`cast(${id} as text)`.as('event_id'),
          'tenant_id',
          sql<string>`cast(${event.type} as text)`.as('event_type'),
          sql.lit('pending').as('status'),
          sql.lit(0).as('attempt_count'),
          sql.lit(now).as('next_attempt_at'),
          sql<null>`null`.as('lease_id'),
          sql.lit(0).as('redelivery'),
          sql.lit('[]').as('attempts'),
          sql.lit(now).as('created_at'),
          sql<null>`null`.as('completed_at'),
        ])
        .where('tenant_id', '=', event.tenantId)
        .where('status', '=', 'enabled')
        .where(subscribesTo(event.type)),
    )
    .executeTakeFirst();
  if (queuedRows.numInsertedOrUpdatedRows !== undefined && queuedRows.numInsertedOrUpdatedRows > 0n) signalDeliveriesQueued();
}

/**
 * Many events in one go, inside the transaction of the change that raises them (a batch of imported users):
 * the event rows in multi-row inserts, and the delivery rows for the streams enabled right now, read once in
 * this transaction rather than per event.
 */
export async function emitEvents(db: Kysely<Database>, events: readonly RaisedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const now = Date.now();
  const rows = events.map((event) => ({
    id: newEventId(now),
    tenant_id: event.tenantId,
    type: event.type,
    data: JSON.stringify({
      object: event.object,
      ...(event.previousObject && { previous_object: event.previousObject }),
      context: contextData(event.tenantId, event.context ?? {}),
    } satisfies CloudEventData),
    created_at: now,
  }));
  await insertRows(db, EVENTS_TABLE, rows);
  // The tenants' enabled streams, read once in this transaction after the events' inserts (see fan-out).
  const tenantIds = [...new Set(rows.map((row) => row.tenant_id))];
  const streams = await db
    .selectFrom('event_streams')
    .select(['id', 'tenant_id', 'subscriptions'])
    .where('tenant_id', 'in', tenantIds)
    .where('status', '=', 'enabled')
    .execute();
  if (streams.length === 0) return;
  const subscribed = new Map<string, string[]>();
  for (const stream of streams) {
    for (const type of JSON.parse(stream.subscriptions) as string[]) {
      const key = `${stream.tenant_id} ${type}`;
      subscribed.set(key, [...(subscribed.get(key) ?? []), stream.id]);
    }
  }
  const deliveries = rows.flatMap((row) =>
    (subscribed.get(`${row.tenant_id} ${row.type}`) ?? [])
      .map((streamId) => ({
        stream_id: streamId,
        event_id: row.id,
        tenant_id: row.tenant_id,
        event_type: row.type,
        status: 'pending' as const,
        attempt_count: 0,
        next_attempt_at: now,
        lease_id: null,
        redelivery: 0,
        attempts: '[]',
        created_at: now,
        completed_at: null,
      })),
  );
  await insertRows(db, DELIVERIES_TABLE, deliveries);
  if (deliveries.length > 0) signalDeliveriesQueued();
}

const EVENTS_TABLE: BulkTable<'events'> = { table: 'events', columns: { id: 'text', tenant_id: 'text', type: 'text', data: 'text', created_at: 'bigint' } };

const DELIVERIES_TABLE: BulkTable<'event_deliveries'> = {
  table: 'event_deliveries',
  columns: {
    stream_id: 'text',
    event_id: 'text',
    tenant_id: 'text',
    event_type: 'text',
    status: 'text',
    attempt_count: 'integer',
    next_attempt_at: 'bigint',
    lease_id: 'text',
    redelivery: 'integer',
    attempts: 'text',
    created_at: 'bigint',
    completed_at: 'bigint',
  },
};

export interface StoredEvent {
  id: string;
  type: string;
  data: string;
  created_at: number;
}

/** The CloudEvent of a stored event row, for a tenant of that name and public URL. */
export function cloudEventOf(row: StoredEvent, tenant: { name: string; baseUrl: string }, streamId?: string): CloudEvent {
  return {
    specversion: '1.0',
    type: row.type as EventType,
    source: eventSource(tenant.baseUrl),
    id: row.id,
    time: new Date(row.created_at).toISOString(),
    data: JSON.parse(row.data) as CloudEventData,
    a0tenant: tenant.name,
    ...(streamId && { a0stream: streamId }),
  };
}

/** Every CloudEvent raised for the tenant, oldest first (tests, and the source of replays). */
export async function listEvents(db: Kysely<Database>, tenantId: string, filter: { type?: EventType } = {}): Promise<CloudEvent[]> {
  const tenant = await db.selectFrom('tenants').select(['name', 'base_url']).where('id', '=', tenantId).executeTakeFirst();
  if (!tenant) return [];
  let query = db.selectFrom('events').select(['id', 'type', 'data', 'created_at']).where('tenant_id', '=', tenantId);
  if (filter.type) query = query.where('type', '=', filter.type);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => cloudEventOf(row, { name: tenant.name, baseUrl: tenant.base_url }));
}
