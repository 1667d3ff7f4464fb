/**
 * Delivering logout tokens (§2.5): run by the event delivery worker (events/worker.ts) in the same loop as
 * event and log stream deliveries, with the same destination rules (events/destination.ts: https to public
 * addresses unless the tenant allows insecure webhooks, checked again at each connection; no redirects;
 * timeouts) and the same retry schedule (the first try, then 1 s, 2 s and 4 s later; a 4xx other than 408/429
 * fails at once, as the RP has said it will not take the token).
 *
 * Each attempt signs a fresh token (`iat`/`exp` of now, the row's `jti`), so a retry never carries an expired
 * one and an RP that saw the first can tell the retry by its `jti`. A claim is a lease, so a process that dies
 * mid-attempt leaves the row to another (at least once).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyRing } from '../../crypto/key-ring.js';
import { postWebhook } from '../../events/destination.js';
import type { Store } from '../../store/db.js';
import type { BackchannelLogoutDeliveriesTable } from '../../store/schema.js';
import type { TenantSettings } from '../../store/tenants.js';
import { signLogoutToken } from './logout-token.js';

export const BACKCHANNEL_TIMEOUT_MS = 10_000;
const LEASE_MS = BACKCHANNEL_TIMEOUT_MS + 5000;
export const BACKCHANNEL_MAX_ATTEMPTS = 4;
export const BACKCHANNEL_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;
const PER_PASS = 50;
/** Attempts in flight at once; a row waits for a free one. */
const MAX_IN_FLIGHT = 64;
/** Delivered and failed rows are kept this long (for support), then dropped by a later pass. */
const KEEP_MS = 7 * 86_400_000;

export interface BackchannelDeliveryOptions {
  keyRing: KeyRing;
  retryDelaysMs?: readonly number[];
}

export class BackchannelLogoutDelivery {
  readonly #store: Store;
  readonly #keyRing: KeyRing;
  readonly #log: FastifyBaseLogger;
  readonly #delays: readonly number[];
  #lastPurge = 0;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(store: Store, log: FastifyBaseLogger, options: BackchannelDeliveryOptions) {
    this.#store = store;
    this.#keyRing = options.keyRing;
    this.#log = log;
    this.#delays = options.retryDelaysMs ?? BACKCHANNEL_RETRY_DELAYS_MS;
  }

  /**
   * Leases the due rows (as many as there is room for in flight) and starts one attempt each; resolves once
   * they are started, so a receiver that hangs holds one slot, never the others' deliveries.
   */
  async pass(now = Date.now()): Promise<void> {
    const db = this.#store.db;
    const room = MAX_IN_FLIGHT - this.#inFlight.size;
    if (room <= 0) return;
    // A read first: most passes find nothing due, and a read takes no write lock (SQLite's is the whole file).
    const due = await db
      .selectFrom('backchannel_logout_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .limit(1)
      .executeTakeFirst();
    if (!due) return this.#purge(now);
    const leaseId = randomUUID();
    const lock = this.#store.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const claimed = await sql<BackchannelLogoutDeliveriesTable>`
      update backchannel_logout_deliveries set lease_id = ${leaseId}, next_attempt_at = ${now + LEASE_MS}
      where id in (
        select id from backchannel_logout_deliveries where status = 'pending' and next_attempt_at <= ${now}
        order by next_attempt_at limit ${Math.min(room, PER_PASS)} ${lock}
      )
      returning *`.execute(db);
    const tenantIds = [...new Set(claimed.rows.map((r) => r.tenant_id))];
    const tenants = tenantIds.length
      ? await db.selectFrom('tenants').select(['id', 'settings']).where('id', 'in', tenantIds).execute()
      : [];
    const insecure = new Map(tenants.map((t) => [t.id, (JSON.parse(t.settings) as TenantSettings).allow_insecure_webhooks === true]));
    for (const row of claimed.rows) {
      const task = this.#attempt(row, leaseId, insecure.get(row.tenant_id) ?? false).catch((err: unknown) => {
        // The lease runs out and the row is tried again.
        this.#log.error({ err, delivery: row.id }, 'back-channel logout delivery failed unexpectedly');
      });
      this.#inFlight.add(task);
      void task.finally(() => this.#inFlight.delete(task));
    }
  }

  /** Resolves when the attempts in flight have ended (the worker's stop). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }

  async #attempt(row: BackchannelLogoutDeliveriesTable, leaseId: string, allowInsecure: boolean): Promise<void> {
    const token = await signLogoutToken(this.#keyRing, {
      tenantId: row.tenant_id,
      issuer: row.issuer,
      clientId: row.client_id,
      userId: row.user_id,
      sessionId: row.session_id,
      jti: row.id,
    });
    const outcome = await postWebhook({
      endpoint: row.endpoint,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Gatehouse-Backchannel-Logout/1' },
      body: new URLSearchParams({ logout_token: token }).toString(),
      allowInsecure,
      timeoutMs: BACKCHANNEL_TIMEOUT_MS,
    });
    const attempt = Number(row.attempt_count) + 1;
    let host = '';
    try {
      host = new URL(row.endpoint).host;
    } catch {
      // Logged without a host.
    }
    // The URL's host only, never the token (a bearer credential for the RP's logout).
    this.#log.info(
      { delivery: row.id, client_id: row.client_id, attempt, host, status_code: outcome.statusCode, outcome: outcome.ok ? 'delivered' : outcome.errorMessage },
      'back-channel logout attempt',
    );
    const now = Date.now();
    const mine = (q: ReturnType<typeof this.update>) => q.where('id', '=', row.id).where('lease_id', '=', leaseId);
    if (outcome.ok) {
      await mine(this.update().set({ status: 'delivered', attempt_count: attempt, lease_id: null, last_error: null, completed_at: now })).execute();
      return;
    }
    const error = (outcome.errorMessage ?? 'Failed').slice(0, 500);
    if (outcome.retryable && attempt < BACKCHANNEL_MAX_ATTEMPTS) {
      const delay = Math.max(this.#delays[attempt - 1] ?? 0, Math.min(outcome.retryAfterMs ?? 0, 600_000));
      await mine(this.update().set({ attempt_count: attempt, lease_id: null, last_error: error, next_attempt_at: now + delay })).execute();
      return;
    }
    await mine(this.update().set({ status: 'failed', attempt_count: attempt, lease_id: null, last_error: error, completed_at: now })).execute();
  }

  private update() {
    return this.#store.db.updateTable('backchannel_logout_deliveries');
  }

  async #purge(now: number): Promise<void> {
    if (now - this.#lastPurge < 3_600_000) return;
    this.#lastPurge = now;
    await this.#store.db.deleteFrom('backchannel_logout_deliveries').where('status', '!=', 'pending').where('completed_at', '<', now - KEEP_MS).execute();
  }
}
