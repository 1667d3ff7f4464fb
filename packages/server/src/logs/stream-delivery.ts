/**
 * Delivering log streams, run by the event delivery worker (events/worker.ts) in the same loop, with the same
 * destination rules (events/destination.ts: SSRF checks, timeouts, no redirects) and Standard Webhooks
 * signatures (events/signing.ts).
 *
 * Each pass leases the streams that are due (PostgreSQL skips those another node holds), reads the logs after a
 * stream's cursor, POSTs the ones its filters pass as one batch, and moves the cursor only on a 2xx: a stream's
 * logs arrive in log id order, at least once. A failed batch is pinned (batch_end) and sent again, unchanged and
 * with the same webhook-id, after a backoff that doubles up to MAX_BACKOFF_MS; a stream that keeps failing for
 * SUSPEND_AFTER_FAILURES attempts in a row (about an hour) is suspended, keeping its cursor, and resumes where
 * it stopped when set active again (within the logs' retention).
 *
 * Only logs older than SETTLE_MS are read: a log id is taken when the outcome happens, and the row commits a
 * little later (the writer's batch, the change's transaction), so a cursor that ran right up to now could pass
 * a row that commits after it.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Sealer } from '../crypto/sealing.js';
import { postWebhook, type AttemptOutcome } from '../events/destination.js';
import { DELIVERY_TIMEOUT_MS } from '../events/delivery.js';
import { signWebhook } from '../events/signing.js';
import { observe } from '../metrics/registry.js';
import type { Store } from '../store/db.js';
import type { LogsTable, LogStreamsTable } from '../store/schema.js';
import type { TenantSettings } from '../store/tenants.js';
import { matchesCategories } from './categories.js';
import { logEventOf, logIdAt } from './log-event.js';
import { logStreamFromRow, unsealLogStreamSecrets, type LogStream } from './streams.js';

export interface LogStreamDeliveryOptions {
  /** Logs younger than this are left for a later pass (see above). */
  settleMs?: number;
  /** Consecutive failed attempts after which a stream is suspended. */
  suspendAfterFailures?: number;
  /** How long a stream with nothing to send waits before it is read again. */
  idleMs?: number;
}

const SETTLE_MS = 2000;
const SUSPEND_AFTER_FAILURES = 20;
const IDLE_MS = 1000;
/** Logs read per batch (the filters may pass fewer). */
export const LOG_BATCH = 100;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 5 * 60_000;
const LEASE_MS = DELIVERY_TIMEOUT_MS + 5000;
/** Streams leased per pass. */
const STREAMS_PER_PASS = 20;

/** A stored log as a log stream sends it: the reference's `{ log_id, data }`. */
export function streamedLog(row: LogsTable): { log_id: string; data: ReturnType<typeof logEventOf> } {
  return { log_id: row.log_id, data: logEventOf(row) };
}

/** The request body of a batch in the stream's format. */
export function batchBody(format: LogStream['sink']['httpContentFormat'], rows: readonly LogsTable[]): string {
  const logs = rows.map(streamedLog);
  if (format === 'JSONARRAY') return JSON.stringify(logs);
  if (format === 'JSONOBJECT') return JSON.stringify(logs[0]);
  return logs.map((log) => JSON.stringify(log)).join('\n');
}

export function backoffMs(consecutiveFailures: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, consecutiveFailures - 1), MAX_BACKOFF_MS);
}

export class LogStreamDelivery {
  readonly #store: Store;
  readonly #sealer: Sealer;
  readonly #log: FastifyBaseLogger;
  readonly #settleMs: number;
  readonly #suspendAfter: number;
  readonly #idleMs: number;

  constructor(store: Store, sealer: Sealer, log: FastifyBaseLogger, options: LogStreamDeliveryOptions = {}) {
    this.#store = store;
    this.#sealer = sealer;
    this.#log = log;
    this.#settleMs = options.settleMs ?? SETTLE_MS;
    this.#suspendAfter = options.suspendAfterFailures ?? SUSPEND_AFTER_FAILURES;
    this.#idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Leases the due streams and sends one batch to each; resolves when every attempt has ended. */
  async pass(now = Date.now()): Promise<void> {
    const leaseId = randomUUID();
    const lock = this.#store.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const claimed = await sql<LogStreamsTable>`
      update log_streams set lease_id = ${leaseId}, next_attempt_at = ${now + LEASE_MS}
      where id in (
        select id from log_streams where status = 'active' and next_attempt_at <= ${now}
        order by next_attempt_at limit ${STREAMS_PER_PASS} ${lock}
      )
      returning *`.execute(this.#store.db);
    await Promise.all(
      claimed.rows.map((row) =>
        this.#deliver(logStreamFromRow(row), leaseId).catch((err: unknown) => {
          // The lease runs out and the stream is tried again.
          this.#log.error({ err, log_stream: row.id }, 'log stream delivery failed unexpectedly');
        }),
      ),
    );
  }

  async #deliver(stream: LogStream, leaseId: string): Promise<void> {
    const db = this.#store.db;
    const settled = logIdAt(Date.now() - this.#settleMs);
    let query = db.selectFrom('logs').selectAll().where('tenant_id', '=', stream.tenantId).where('log_id', '>', stream.cursor);
    query = stream.batchEnd !== null ? query.where('log_id', '<=', stream.batchEnd) : query.where('log_id', '<', settled);
    const rows = await query.orderBy('log_id').limit(LOG_BATCH).execute();
    const release = (changes: Partial<LogStreamsTable>) =>
      db.updateTable('log_streams').set({ lease_id: null, ...changes }).where('id', '=', stream.id).where('lease_id', '=', leaseId).execute();
    const passed = rows.filter((row) => matchesCategories(row.type, stream.filters));
    if (passed.length === 0) {
      // Nothing to send: skip past what the filters refuse, and look again later.
      await release({ ...(rows.length > 0 && { cursor: rows.at(-1)!.log_id, batch_end: null }), next_attempt_at: Date.now() + (rows.length === LOG_BATCH ? 0 : this.#idleMs) });
      return;
    }
    // One log per request in the JSONOBJECT format: the batch ends at the first log passed.
    const batch = stream.sink.httpContentFormat === 'JSONOBJECT' ? passed.slice(0, 1) : passed;
    const end = stream.sink.httpContentFormat === 'JSONOBJECT' ? batch[0]!.log_id : rows.at(-1)!.log_id;
    const outcome = await this.#post(stream, batch, end);
    if (outcome.ok) {
      observe.logStreamDelivered(batch.length);
      await release({ cursor: end, batch_end: null, attempt_count: 0, consecutive_failures: 0, last_error: null, next_attempt_at: Date.now() });
      return;
    }
    observe.logStreamDeliveryFailed();
    const failures = stream.consecutiveFailures + 1;
    const error = (outcome.errorMessage ?? `HTTP ${outcome.statusCode ?? 'error'}`).slice(0, 500);
    this.#log.info(
      { log_stream: stream.id, host: hostOf(stream.sink.httpEndpoint), status_code: outcome.statusCode, attempt: failures, outcome: error },
      'log stream delivery attempt failed',
    );
    if (failures >= this.#suspendAfter) {
      await release({ status: 'suspended', batch_end: end, consecutive_failures: failures, attempt_count: failures, last_error: error, updated_at: Date.now() });
      this.#log.warn({ log_stream: stream.id, consecutive_failures: failures }, 'log stream suspended after repeated delivery failures');
      return;
    }
    const delay = Math.max(backoffMs(failures), Math.min(outcome.retryAfterMs ?? 0, MAX_BACKOFF_MS));
    await release({ batch_end: end, consecutive_failures: failures, attempt_count: failures, last_error: error, next_attempt_at: Date.now() + delay });
  }

  async #post(stream: LogStream, batch: readonly LogsTable[], end: string): Promise<AttemptOutcome> {
    const secrets = unsealLogStreamSecrets(this.#sealer, stream);
    if (!secrets) return { ok: false, errorMessage: 'The stream credentials cannot be read with the current master key', retryable: false, durationMs: 0 };
    const tenant = await this.#store.db.selectFrom('tenants').select('settings').where('id', '=', stream.tenantId).executeTakeFirst();
    const allowInsecure = tenant ? (JSON.parse(tenant.settings) as TenantSettings).allow_insecure_webhooks === true : false;
    const body = batchBody(stream.sink.httpContentFormat, batch);
    // Retries of a batch send the same logs under the same id, so a receiver can drop what it already has.
    const id = `msg_${stream.id}_${end}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {};
    for (const { header, value } of secrets.customHeaders) headers[header.toLowerCase()] = value;
    if (secrets.authorization !== undefined) headers.authorization = secrets.authorization;
    Object.assign(headers, {
      'content-type': stream.sink.httpContentType,
      'user-agent': 'Gatehouse-LogStreams/1',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secrets.signingSecret, id, timestamp, body),
    });
    return postWebhook({ endpoint: stream.sink.httpEndpoint, headers, body, allowInsecure, timeoutMs: DELIVERY_TIMEOUT_MS });
  }
}

/** The endpoint's host only: a path or query string may carry something the owner considers secret. */
function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return '';
  }
}
