/**
 * The delivery worker: claims due deliveries, POSTs each once, and writes the outcome.
 *
 * Schedule (reference A.10): the first try, then retries 1 s, 2 s and 4 s after each failure (4 attempts), or
 * later when the receiver's Retry-After says so; a 4xx other than 408/429 fails at once. A delivery out of
 * attempts is stored as `failed` (listed, redeliverable). A stream is disabled after AUTO_DISABLE_CONSECUTIVE
 * failed deliveries in a row or AUTO_DISABLE_TOTAL failed deliveries stored.
 *
 * At-least-once: a claim is a lease (LEASE_MS, longer than an attempt can take); a process that dies holding
 * rows leaves them to be claimed again when the lease runs out, so a receiver may see an event id twice.
 * The worker polls, and wakes sooner when this process has just written delivery rows (outbox.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Sealer } from '../crypto/sealing.js';
import type { Store } from '../store/db.js';
import type { TenantSettings } from '../store/tenants.js';
import {
  appendAttempt,
  claimDue,
  countFailed,
  markDelivered,
  markFailed,
  purgeDelivered,
  releaseLeases,
  scheduleRetry,
  type ClaimedDelivery,
  type DeliveryKey,
} from './deliveries.js';
import { deliverOnce, DELIVERY_TIMEOUT_MS, unsealStreamSecrets, type StreamSecrets } from './delivery.js';
import type { AttemptOutcome } from './destination.js';
import { cloudEventOf, onDeliveriesQueued, onTenantChanged, type StoredEvent } from './outbox.js';
import { findStreamById, type EventStream } from './streams.js';
import { LogStreamDelivery, type LogStreamDeliveryOptions } from '../logs/stream-delivery.js';
import { observe } from '../metrics/registry.js';
import { BackchannelLogoutDelivery, type BackchannelDeliveryOptions } from '../auth-api/backchannel-logout/delivery.js';
import { KeyRing } from '../crypto/key-ring.js';

export const MAX_ATTEMPTS = 4;
export const RETRY_DELAYS_MS = [1000, 2000, 4000] as const;
/** Retry-After is honoured up to this far ahead. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
export const AUTO_DISABLE_CONSECUTIVE = 500;
export const AUTO_DISABLE_TOTAL = 5000;
/** Longer than one attempt can take, so a live claimer never loses its rows. */
export const LEASE_MS = DELIVERY_TIMEOUT_MS + 5000;

export interface WorkerOptions {
  /** Attempts in flight at once. */
  concurrency?: number;
  /** How often to look for due rows when nothing woke the worker. */
  pollMs?: number;
  /** On start, make every leased row due at once (safe only when this is the one claimer: SQLite, one process). */
  releaseLeasesOnStart?: boolean;
  /** Log streams are delivered by this worker too (logs/stream-delivery.ts). */
  logStreams?: LogStreamDeliveryOptions;
  /** Back-channel logout tokens are delivered by this worker too (auth-api/backchannel-logout/delivery.ts). */
  backchannelLogout?: BackchannelDeliveryOptions;
}

/** How long after a wake-up the worker keeps looking closely (the emitting transaction may not have committed). */
const WAKE_WINDOW_MS = 200;
const WAKE_POLL_MS = 10;
/** Wake-ups this close together make one claim, and successes this close together one write. */
const BATCH_DELAY_MS = 3;
const CACHE_MS = 1000;
const LOG_PASS_GAP_MS = 100;
const MAX_CACHED = 1000;
/** Delivered rows are kept as long as stats can look back (31 days), then dropped, checked hourly. */
const DELIVERED_RETENTION_MS = 31 * 86_400_000;
const PURGE_EVERY_MS = 3_600_000;
/** How long stop() waits for attempts in flight; the rest are claimed again after their lease. */
const STOP_GRACE_MS = 3000;

interface TenantInfo {
  name: string;
  baseUrl: string;
  allowInsecure: boolean;
}

export class DeliveryWorker {
  readonly #store: Store;
  readonly #sealer: Sealer;
  readonly #log: FastifyBaseLogger;
  readonly #concurrency: number;
  readonly #pollMs: number;
  readonly #releaseOnStart: boolean;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #inFlight = new Set<Promise<void>>();
  #wakeUntil = 0;
  #nudge: (() => void) | undefined;
  /** What the idle loop waits for: new rows (a wake-up or the poll), or a free slot (an attempt ending). */
  #waitingFor: 'work' | 'slot' | undefined;
  #wakeTimer: NodeJS.Timeout | undefined;
  #lastPurge = 0;
  #unsubscribe: (() => void)[] = [];
  #delivered: DeliveryKey[] = [];
  #deliveredStreams = new Set<string>();
  #flushing: Promise<void> | undefined;
  readonly #streams = new Map<string, { stream: EventStream | undefined; secrets: StreamSecrets | undefined; at: number }>();
  readonly #tenants = new Map<string, { tenant: TenantInfo | undefined; at: number }>();
  readonly #logStreams: LogStreamDelivery;
  /** The log streams' pass in progress, if any: one at a time, beside the event deliveries. */
  #logPass: Promise<void> | undefined;
  #lastLogPass = 0;
  readonly #backchannel: BackchannelLogoutDelivery;
  #backchannelPass: Promise<void> | undefined;
  #lastBackchannelPass = 0;

  constructor(store: Store, sealer: Sealer, log: FastifyBaseLogger, options: WorkerOptions = {}) {
    this.#store = store;
    this.#sealer = sealer;
    this.#log = log;
    this.#concurrency = options.concurrency ?? 64;
    this.#pollMs = options.pollMs ?? 500;
    this.#releaseOnStart = options.releaseLeasesOnStart ?? false;
    this.#logStreams = new LogStreamDelivery(store, sealer, log, options.logStreams);
    this.#backchannel = new BackchannelLogoutDelivery(store, log, options.backchannelLogout ?? { keyRing: new KeyRing(store.db, sealer) });
  }

  start(): void {
    if (this.#loop) return;
    // A tenant changed (its settings or its streams, on any node): what is cached of it goes.
    this.#unsubscribe = [onDeliveriesQueued(() => this.wake()), onTenantChanged((id) => this.#forget(id))];
    this.#loop = this.#run();
  }

  #forget(tenantId: string | undefined): void {
    if (tenantId === undefined) this.#tenants.clear();
    else this.#tenants.delete(tenantId);
    for (const [id, entry] of this.#streams) if (tenantId === undefined || !entry.stream || entry.stream.tenantId === tenantId) this.#streams.delete(id);
  }

  /** Look for due rows now, and closely for a moment (the rows may be committed a little later). */
  wake(): void {
    this.#wakeUntil = Date.now() + WAKE_WINDOW_MS;
    if (this.#waitingFor !== 'work' || this.#wakeTimer) return;
    this.#wakeTimer = setTimeout(() => {
      this.#wakeTimer = undefined;
      if (this.#waitingFor === 'work') this.#nudge?.();
    }, BATCH_DELAY_MS);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    clearTimeout(this.#wakeTimer);
    this.#nudge?.();
    await this.#loop;
    await Promise.race([Promise.allSettled([...this.#inFlight, ...(this.#logPass ? [this.#logPass] : []), ...(this.#backchannelPass ? [this.#backchannelPass] : []), this.#backchannel.settle()]), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
    await this.#flushing;
    await this.#flush();
  }

  async #run(): Promise<void> {
    if (this.#releaseOnStart) {
      try {
        const released = await releaseLeases(this.#store.db);
        if (released > 0) this.#log.info({ released }, 'event deliveries left by a previous process are due again');
      } catch (err) {
        this.#log.error({ err }, 'could not release event delivery leases');
      }
    }
    while (!this.#stopped) {
      const room = this.#concurrency - this.#inFlight.size;
      if (room === 0) {
        await this.#idle('slot');
        continue;
      }
      const limit = Math.min(room, 100);
      let claimed: ClaimedDelivery[] = [];
      try {
        claimed = await claimDue(this.#store.db, this.#store.dialect, limit, LEASE_MS);
      } catch (err) {
        if (this.#stopped) break;
        this.#log.error({ err }, 'claiming event deliveries failed');
      }
      if (claimed.length > 0) await this.#dispatch(claimed);
      this.#passLogStreams();
      this.#passBackchannelLogouts();
      if (Date.now() - this.#lastPurge > PURGE_EVERY_MS) await this.#purge();
      // A full claim means more may be due at once; otherwise wait for a wake-up or the poll.
      if (claimed.length < limit) await this.#idle('work');
    }
  }

  #passLogStreams(): void {
    // At most one pass at a time, and not more often than LOG_PASS_GAP_MS while event deliveries keep the loop busy.
    if (this.#logPass || this.#stopped || Date.now() - this.#lastLogPass < LOG_PASS_GAP_MS) return;
    this.#lastLogPass = Date.now();
    this.#logPass = this.#logStreams
      .pass()
      .catch((err: unknown) => {
        if (!this.#stopped) this.#log.error({ err }, 'claiming log streams failed');
      })
      .finally(() => {
        this.#logPass = undefined;
      });
  }

  #passBackchannelLogouts(): void {
    // As the log streams: one pass at a time, beside the event deliveries.
    if (this.#backchannelPass || this.#stopped || Date.now() - this.#lastBackchannelPass < WAKE_POLL_MS) return;
    this.#lastBackchannelPass = Date.now();
    this.#backchannelPass = this.#backchannel
      .pass()
      .catch((err: unknown) => {
        if (!this.#stopped) this.#log.error({ err }, 'claiming back-channel logouts failed');
      })
      .finally(() => {
        this.#backchannelPass = undefined;
      });
  }

  async #purge(): Promise<void> {
    this.#lastPurge = Date.now();
    try {
      const purged = await purgeDelivered(this.#store.db, this.#lastPurge - DELIVERED_RETENTION_MS);
      if (purged > 0) this.#log.info({ purged }, 'old delivered event deliveries dropped');
    } catch (err) {
      this.#log.error({ err }, 'dropping old delivered event deliveries failed');
    }
  }

  /** Waits for a wake-up (work) or a free slot (slot), or the poll interval. */
  #idle(waitFor: 'work' | 'slot'): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    const wait = waitFor === 'work' && Date.now() < this.#wakeUntil ? WAKE_POLL_MS : this.#pollMs;
    this.#waitingFor = waitFor;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#nudge = undefined;
        this.#waitingFor = undefined;
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.#nudge = done;
    });
  }

  async #dispatch(claimed: ClaimedDelivery[]): Promise<void> {
    let events: Map<string, StoredEvent>;
    try {
      const ids = [...new Set(claimed.map((c) => c.event_id))];
      const rows = await this.#store.db.selectFrom('events').select(['id', 'type', 'data', 'created_at']).where('id', 'in', ids).execute();
      events = new Map(rows.map((r) => [r.id, r]));
    } catch (err) {
      // The rows stay leased and come back when the lease runs out.
      this.#log.error({ err }, 'loading events for delivery failed');
      return;
    }
    for (const delivery of claimed) {
      const task = this.#attempt(delivery, events.get(delivery.event_id)).catch((err: unknown) => {
        this.#log.error({ err, stream: delivery.stream_id, event: delivery.event_id }, 'event delivery failed unexpectedly');
      });
      this.#inFlight.add(task);
      void task.finally(() => {
        this.#inFlight.delete(task);
        if (this.#waitingFor === 'slot') this.#nudge?.();
      });
    }
  }

  /** The stream and its unsealed secrets, cached for CACHE_MS so that an attempt does not unseal each time. */
  async #stream(id: string): Promise<{ stream: EventStream | undefined; secrets: StreamSecrets | undefined }> {
    const hit = this.#streams.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit;
    const stream = await findStreamById(this.#store.db, id);
    const entry = { stream, secrets: stream && unsealStreamSecrets(this.#sealer, stream), at: Date.now() };
    if (this.#streams.size >= MAX_CACHED) this.#streams.clear();
    this.#streams.set(id, entry);
    return entry;
  }

  async #tenant(id: string): Promise<TenantInfo | undefined> {
    const hit = this.#tenants.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.tenant;
    const row = await this.#store.db.selectFrom('tenants').select(['name', 'base_url', 'settings']).where('id', '=', id).executeTakeFirst();
    const tenant = row
      ? { name: row.name, baseUrl: row.base_url, allowInsecure: (JSON.parse(row.settings) as TenantSettings).allow_insecure_webhooks === true }
      : undefined;
    if (this.#tenants.size >= MAX_CACHED) this.#tenants.clear();
    this.#tenants.set(id, { tenant, at: Date.now() });
    return tenant;
  }

  async #attempt(delivery: ClaimedDelivery, event: StoredEvent | undefined): Promise<void> {
    const [{ stream, secrets }, tenant] = await Promise.all([this.#stream(delivery.stream_id), this.#tenant(delivery.tenant_id)]);
    // Gone with its stream or tenant (the row itself is deleted by cascade).
    if (!stream || !tenant || !event) return;
    const attemptNumber = delivery.attempt_count + 1;
    const started = Date.now();
    const outcome = await deliverOnce(secrets, stream, cloudEventOf(event, tenant, stream.id), { allowInsecure: tenant.allowInsecure });
    this.#logAttempt(delivery, stream, attemptNumber, outcome);
    if (outcome.ok) {
      observe.eventDelivered();
      this.#delivered.push(delivery);
      if (stream.consecutiveFailures > 0) this.#deliveredStreams.add(stream.id);
      this.#flushing ??= new Promise((resolve) => setTimeout(resolve, BATCH_DELAY_MS)).then(() => this.#flush());
      return;
    }
    observe.eventDeliveryFailed();
    const attempts = appendAttempt(delivery.attempts, {
      timestamp: started,
      ...(outcome.errorMessage && { error_message: outcome.errorMessage }),
      duration: outcome.durationMs,
    });
    if (outcome.retryable && attemptNumber < MAX_ATTEMPTS) {
      const delay = Math.max(RETRY_DELAYS_MS[attemptNumber - 1] ?? 0, Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
      await scheduleRetry(this.#store.db, delivery, attempts, attemptNumber, Date.now() + delay);
      return;
    }
    if (await markFailed(this.#store.db, delivery, attempts, attemptNumber)) await this.#countFailure(stream);
  }

  #logAttempt(delivery: ClaimedDelivery, stream: EventStream, attempt: number, outcome: AttemptOutcome): void {
    // The endpoint's host only: a path or query string may carry something the owner considers secret.
    let host = '';
    try {
      host = new URL(stream.configuration.webhook_endpoint).host;
    } catch {
      // Unparseable endpoints fail in postWebhook and are logged without a host.
    }
    this.#log.info(
      {
        stream: stream.id,
        event: delivery.event_id,
        attempt,
        host,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        outcome: outcome.ok ? 'delivered' : outcome.errorMessage,
      },
      'event delivery attempt',
    );
  }

  /** Writes the successes gathered so far in one statement; one flush at a time. */
  async #flush(): Promise<void> {
    try {
      while (this.#delivered.length > 0) {
        const keys = this.#delivered;
        const streams = [...this.#deliveredStreams];
        this.#delivered = [];
        this.#deliveredStreams = new Set();
        try {
          await markDelivered(this.#store.db, keys);
          if (streams.length > 0) {
            await this.#store.db
              .updateTable('event_streams')
              .set({ consecutive_failures: 0 })
              .where('id', 'in', streams)
              .where('consecutive_failures', '>', 0)
              .execute();
            for (const id of streams) this.#streams.delete(id);
          }
        } catch (err) {
          // Left leased: delivered again after the lease, which at-least-once allows.
          this.#log.error({ err }, 'recording delivered events failed');
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  async #countFailure(stream: EventStream): Promise<void> {
    const db = this.#store.db;
    const row = await db
      .updateTable('event_streams')
      .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
      .where('id', '=', stream.id)
      .returning(['consecutive_failures', 'status'])
      .executeTakeFirst();
    this.#streams.delete(stream.id);
    if (!row || row.status !== 'enabled') return;
    const consecutive = Number(row.consecutive_failures);
    const total = consecutive >= AUTO_DISABLE_CONSECUTIVE ? 0 : await countFailed(db, stream.id);
    if (consecutive < AUTO_DISABLE_CONSECUTIVE && total < AUTO_DISABLE_TOTAL) return;
    await db.updateTable('event_streams').set({ status: 'disabled', updated_at: Date.now() }).where('id', '=', stream.id).execute();
    this.#log.warn({ stream: stream.id, consecutive_failures: consecutive, failed_deliveries: total }, 'event stream disabled after repeated delivery failures');
  }
}
