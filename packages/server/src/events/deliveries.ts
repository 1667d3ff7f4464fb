/**
 * Delivery rows at rest: the worker's claim (with a lease), the outcome of each attempt, and what the
 * Management API lists, redelivers and counts. A row is `pending` until it is delivered or runs out of
 * attempts (`failed`); a claim pushes `next_attempt_at` one lease ahead, so rows held by a claimer that died
 * become due again when the lease runs out (at-least-once).
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../store/db.js';
import type { Database, EventDeliveriesTable } from '../store/schema.js';

export interface StoredAttempt {
  /** Epoch ms. */
  timestamp: number;
  error_message?: string;
  /** Milliseconds. */
  duration?: number;
}

export interface ClaimedDelivery {
  stream_id: string;
  event_id: string;
  tenant_id: string;
  attempt_count: number;
  attempts: string;
  redelivery: number;
  lease_id: string;
}

/** Kept per delivery; older attempts are dropped so a row stays small however often it is redelivered. */
const MAX_STORED_ATTEMPTS = 20;

export function appendAttempt(attemptsJson: string, attempt: StoredAttempt): string {
  const attempts = JSON.parse(attemptsJson) as StoredAttempt[];
  attempts.push(attempt);
  return JSON.stringify(attempts.slice(-MAX_STORED_ATTEMPTS));
}

/**
 * Claims up to `limit` due deliveries of enabled streams (or asked for by redelivery). PostgreSQL skips rows
 * other nodes hold (`FOR UPDATE SKIP LOCKED`); SQLite runs the one statement under its single writer lock.
 */
export async function claimDue(db: Kysely<Database>, dialect: Dialect, limit: number, leaseMs: number, now = Date.now()): Promise<ClaimedDelivery[]> {
  const leaseId = randomUUID();
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const result = await sql<ClaimedDelivery>`
    update event_deliveries set next_attempt_at = ${now + leaseMs}, lease_id = ${leaseId}
    where (stream_id, event_id) in (
      select d.stream_id, d.event_id from event_deliveries d
      where d.status = 'pending' and d.next_attempt_at <= ${now}
        and (d.redelivery = 1 or exists (select 1 from event_streams s where s.id = d.stream_id and s.status = 'enabled'))
      order by d.next_attempt_at
      limit ${limit}
      ${lock}
    )
    returning stream_id, event_id, tenant_id, attempt_count, attempts, redelivery, lease_id`.execute(db);
  return result.rows;
}

/**
 * On startup of the only claimer (SQLite, one process): rows still leased belong to a process that is gone,
 * so they are due at once rather than when their lease would have run out.
 */
export async function releaseLeases(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const result = await db
    .updateTable('event_deliveries')
    .set({ lease_id: null, next_attempt_at: now })
    .where('status', '=', 'pending')
    .where('lease_id', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export type DeliveryKey = Pick<ClaimedDelivery, 'stream_id' | 'event_id' | 'lease_id'>;

/** Marks claimed rows delivered, in one statement; rows whose lease was lost to another claimer are left alone. */
export async function markDelivered(db: Kysely<Database>, keys: readonly DeliveryKey[], now = Date.now()): Promise<void> {
  if (keys.length === 0) return;
  await db
    .updateTable('event_deliveries')
    .set((eb) => ({ status: 'delivered', completed_at: now, lease_id: null, attempt_count: eb('attempt_count', '+', 1) }))
    .where((eb) =>
      eb.or(keys.map((k) => eb.and([eb('stream_id', '=', k.stream_id), eb('event_id', '=', k.event_id), eb('lease_id', '=', k.lease_id)]))),
    )
    .execute();
}

/** A failed attempt with attempts left: due again at `nextAttemptAt`. */
export async function scheduleRetry(db: Kysely<Database>, key: DeliveryKey, attempts: string, attemptCount: number, nextAttemptAt: number): Promise<void> {
  await db
    .updateTable('event_deliveries')
    .set({ attempts, attempt_count: attemptCount, next_attempt_at: nextAttemptAt, lease_id: null })
    .where('stream_id', '=', key.stream_id)
    .where('event_id', '=', key.event_id)
    .where('lease_id', '=', key.lease_id)
    .execute();
}

/** Out of attempts: stored as a failed delivery record, listed and redeliverable. Returns false if the lease was lost. */
export async function markFailed(db: Kysely<Database>, key: DeliveryKey, attempts: string, attemptCount: number, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('event_deliveries')
    .set({ status: 'failed', attempts, attempt_count: attemptCount, completed_at: now, lease_id: null, redelivery: 0 })
    .where('stream_id', '=', key.stream_id)
    .where('event_id', '=', key.event_id)
    .where('lease_id', '=', key.lease_id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Drops delivered rows finished before `before` (failed ones stay until redelivered or their stream goes). */
export async function purgeDelivered(db: Kysely<Database>, before: number): Promise<number> {
  const result = await db.deleteFrom('event_deliveries').where('status', '=', 'delivered').where('completed_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function countFailed(db: Kysely<Database>, streamId: string): Promise<number> {
  const row = await db
    .selectFrom('event_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('stream_id', '=', streamId)
    .where('status', '=', 'failed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// --- what the Management API reads ------------------------------------------------------------------------

export interface DeliveryFilter {
  eventTypes?: readonly string[];
  /** Event time, inclusive. */
  from?: number;
  /** Event time, exclusive. */
  to?: number;
}

export interface FailedDeliveryRow extends EventDeliveriesTable {
  data: string;
}

/** Failed deliveries of a stream, oldest first, after the cursor position (created_at, event_id). */
export async function listFailed(
  db: Kysely<Database>,
  streamId: string,
  filter: DeliveryFilter,
  page: { after?: { createdAt: number; eventId: string }; limit: number },
): Promise<FailedDeliveryRow[]> {
  let query = db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.data')
    .where('d.stream_id', '=', streamId)
    .where('d.status', '=', 'failed');
  if (filter.eventTypes && filter.eventTypes.length > 0) query = query.where('d.event_type', 'in', [...filter.eventTypes]);
  if (filter.from !== undefined) query = query.where('d.created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('d.created_at', '<', filter.to);
  const after = page.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('d.created_at', '>', after.createdAt), eb.and([eb('d.created_at', '=', after.createdAt), eb('d.event_id', '>', after.eventId)])]),
    );
  }
  return query.orderBy('d.created_at').orderBy('d.event_id').limit(page.limit).execute();
}

export async function findDelivery(db: Kysely<Database>, streamId: string, eventId: string): Promise<FailedDeliveryRow | undefined> {
  return db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.data')
    .where('d.stream_id', '=', streamId)
    .where('d.event_id', '=', eventId)
    .executeTakeFirst();
}

/** Failed deliveries matching the filter become due now, even on a disabled stream. Returns how many. */
export async function redeliver(db: Kysely<Database>, streamId: string, filter: DeliveryFilter & { eventId?: string }, now = Date.now()): Promise<number> {
  let query = db
    .updateTable('event_deliveries')
    .set({ status: 'pending', attempt_count: 0, next_attempt_at: now, lease_id: null, redelivery: 1, completed_at: null })
    .where('stream_id', '=', streamId)
    .where('status', '=', 'failed');
  if (filter.eventId) query = query.where('event_id', '=', filter.eventId);
  if (filter.eventTypes && filter.eventTypes.length > 0) query = query.where('event_type', 'in', [...filter.eventTypes]);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface OutcomeCount {
  bucket: number;
  status: 'delivered' | 'failed';
  n: number;
}

/** Deliveries finished in [from, to), counted per bucket of `bucketMs` (bucket 0 starts at `from`) and outcome. */
export async function countOutcomes(db: Kysely<Database>, streamId: string, from: number, to: number, bucketMs: number): Promise<OutcomeCount[]> {
  // Integer division on both dialects (bigint / bigint, integer / integer). Literals, not parameters, so the
  // selected expression and the GROUP BY one are the same text, as PostgreSQL requires.
  const bucket = sql<number>`(completed_at - ${sql.lit(Math.trunc(from))}) / ${sql.lit(Math.trunc(bucketMs))}`;
  const rows = await db
    .selectFrom('event_deliveries')
    .select([bucket.as('bucket'), 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('stream_id', '=', streamId)
    .where('status', 'in', ['delivered', 'failed'])
    .where('completed_at', '>=', from)
    .where('completed_at', '<', to)
    .groupBy([bucket, 'status'])
    .execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), status: r.status as 'delivered' | 'failed', n: Number(r.n) }));
}
