/**
 * Writing tenant log events, two ways:
 *
 *  - `writeLogEvents(trx, rows)`: inside the transaction of the change the event reports (a signup), so the log
 *    row commits or rolls back with it, exactly like the events outbox.
 *  - `TenantLogWriter.record(...)`: for outcomes that change nothing or have already committed (a failed login,
 *    a token exchange, a Management API operation). Rows wait in memory for at most FLUSH_AFTER_MS and are written
 *    in multi-row inserts: a login or token request never waits for a log insert of its own, which is what keeps
 *    logging within the 10% throughput budget. The price is that a process that dies loses the rows of
 *    its last FLUSH_AFTER_MS; `close()` flushes on every orderly stop.
 *
 * Both go through the writer, which knows GATEHOUSE_TENANT_LOGS: off, neither writes nor counts anything (for
 * deployments that keep their audit trail elsewhere, and for the bench's with-and-without measurement).
 * `writeLogEvents` itself always writes: tests and the bench seed logs with it.
 *
 * The writer also enforces retention: the tenant setting `log_retention_days` (default 30), pruned in small
 * batches on a timer, oldest first along the (tenant_id, log_id) index, so pruning never holds a lock that a
 * login would wait on for long.
 */
import type { Kysely } from 'kysely';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Store } from '../store/db.js';
import { insertRows, type BulkTable } from '../store/bulk-insert.js';
import type { Database, LogsTable } from '../store/schema.js';
import type { TenantSettings } from '../store/tenants.js';
import { observe } from '../metrics/registry.js';
import { logIdAt, logRow, requestOrigin, type LogFacts, type RequestOrigin } from './log-event.js';
import { forgetLoginsBefore, rollUp, unroll } from './rollups.js';

/** How long a recorded event may wait in memory before it is written. */
const FLUSH_AFTER_MS = 50;
/** A buffer this full is written at once. */
const FLUSH_AT_ROWS = 500;
/** Rows kept across failed writes (the database down): beyond this the oldest are dropped, with an error logged. */
const MAX_PENDING_ROWS = 50_000;

export const DEFAULT_LOG_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;
/** Rows deleted per pruning statement. */
const PRUNE_BATCH = 1000;
const PRUNE_EVERY_MS = 60_000;

/**
 * Inside the caller's transaction: the rows commit or roll back with its change. Unconditional: the flows go
 * through `TenantLogWriter.writeWith`, which honours the setting.
 */
export async function writeLogEvents(db: Kysely<Database>, rows: readonly LogsTable[]): Promise<void> {
  for (const row of rows) observe.logEvent(row.type, row.connection);
  await insertLogRows(db, rows);
}

/** Inserts `rows` and adds them to the stats rollups; `db` is a transaction, so both commit together. */
async function insertLogRows(db: Kysely<Database>, rows: readonly LogsTable[]): Promise<void> {
  // Statements built once (store/bulk-insert.ts): h-logcost's profile put Kysely's building of the multi-row insert
  // at about a seventh of what logging cost a client_credentials token.
  await insertRows(db, LOGS_TABLE, rows);
  await rollUp(db, rows);
}

const LOGS_TABLE: BulkTable<'logs'> = {
  table: 'logs',
  columns: {
    log_id: 'text',
    tenant_id: 'text',
    date: 'bigint',
    type: 'text',
    description: 'text',
    client_id: 'text',
    client_name: 'text',
    connection: 'text',
    connection_id: 'text',
    strategy: 'text',
    strategy_type: 'text',
    user_id: 'text',
    user_name: 'text',
    ip: 'text',
    user_agent: 'text',
    hostname: 'text',
    audience: 'text',
    scope: 'text',
    is_mobile: 'integer',
    details: 'text',
  },
};

/** The retention of a tenant's logs, in days. */
export function logRetentionDays(settings: TenantSettings): number {
  return settings.log_retention_days ?? DEFAULT_LOG_RETENTION_DAYS;
}

/**
 * Deletes one tenant's logs older than its retention, PRUNE_BATCH rows per transaction (which also takes exactly
 * the deleted rows off the stats rollups), yielding between batches. Returns how many rows went.
 */
export async function pruneTenantLogs(db: Kysely<Database>, tenantId: string, retentionDays: number, now = Date.now()): Promise<number> {
  const beforeDate = now - retentionDays * DAY_MS;
  const before = logIdAt(beforeDate);
  let deleted = 0;
  for (;;) {
    const count = await db.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('logs')
        .where('log_id', 'in', (eb) =>
          eb.selectFrom('logs').select('log_id').where('tenant_id', '=', tenantId).where('log_id', '<', before).orderBy('log_id').limit(PRUNE_BATCH),
        )
        .returning(['type', 'date'])
        .execute();
      await unroll(trx, tenantId, gone);
      return gone.length;
    });
    deleted += count;
    if (count < PRUNE_BATCH) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await forgetLoginsBefore(db, tenantId, beforeDate);
  return deleted;
}

export class TenantLogWriter {
  #pending: LogsTable[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;
  #pruning: Promise<void> | undefined;
  #log: FastifyBaseLogger | undefined;

  readonly #enabled: boolean;

  /**
   * @param options.enabled GATEHOUSE_TENANT_LOGS: false makes `record` and `writeWith` return at once, before a
   *   row is even built, so that "off" is a server doing no logging work at all.
   */
  constructor(
    private readonly store: Store,
    options: { enabled: boolean },
  ) {
    this.#enabled = options.enabled;
  }

  /**
   * Starts the retention timer; `log` receives write and pruning failures. Also with logs off: rows written
   * while they were on still age out.
   */
  start(log: FastifyBaseLogger): void {
    this.#log = log;
    this.#pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.#pruneTimer.unref();
  }

  /** Records an outcome of `request` for its tenant (nothing when the request has no tenant). */
  recordFor(request: FastifyRequest, facts: LogFacts): void {
    if (!this.#enabled) return;
    const tenant = (request as Partial<Pick<FastifyRequest, 'tenant'>>).tenant;
    if (!tenant) return;
    this.record(tenant.id, facts, requestOrigin(request));
  }

  record(tenantId: string, facts: LogFacts, origin: RequestOrigin): void {
    if (!this.#enabled) return;
    const row = logRow(tenantId, facts, origin);
    observe.logEvent(row.type, row.connection);
    this.#pending.push(row);
    if (this.#pending.length >= FLUSH_AT_ROWS) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /**
   * Writes rows inside the caller's transaction (`trx`), so they commit or roll back with its change (a signup,
   * a deletion, a password change). Takes a function of the rows, not the rows: off, they are not even built.
   */
  async writeWith(trx: Kysely<Database>, rows: () => readonly LogsTable[]): Promise<void> {
    if (!this.#enabled) return;
    await writeLogEvents(trx, rows());
  }

  /** Writes everything recorded so far; resolves when it is stored (tests read logs after it). */
  async flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    // One flush at a time, so rows are inserted in the order they were recorded.
    while (this.#flushing) await this.#flushing;
    if (this.#pending.length === 0) return;
    const rows = this.#pending;
    this.#pending = [];
    this.#flushing = (async () => {
      try {
        await this.store.db.transaction().execute((trx) => insertLogRows(trx, rows));
      } catch (err) {
        // Kept for the next flush (a database restarting); bounded so that memory is not the next failure.
        this.#pending = [...rows, ...this.#pending];
        const dropped = this.#pending.length - MAX_PENDING_ROWS;
        if (dropped > 0) this.#pending.splice(0, dropped);
        this.#log?.error({ err, rows: rows.length, dropped: Math.max(0, dropped) }, 'tenant log write failed');
        this.#timer ??= setTimeout(() => void this.flush(), 1000);
      } finally {
        this.#flushing = undefined;
      }
    })();
    await this.#flushing;
  }

  /** One pruning pass over every tenant (also run by tests). */
  prune(now = Date.now()): Promise<void> {
    this.#pruning ??= (async () => {
      try {
        const tenants = await this.store.db.selectFrom('tenants').select(['id', 'settings']).execute();
        for (const tenant of tenants) {
          await pruneTenantLogs(this.store.db, tenant.id, logRetentionDays(JSON.parse(tenant.settings) as TenantSettings), now);
        }
      } catch (err) {
        this.#log?.error({ err }, 'tenant log pruning failed');
      } finally {
        this.#pruning = undefined;
      }
    })();
    return this.#pruning;
  }

  async close(): Promise<void> {
    if (this.#pruneTimer) clearInterval(this.#pruneTimer);
    await this.#pruning;
    await this.flush();
  }
}
