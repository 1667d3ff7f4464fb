/** Tenant log rows (migration 0021): every read goes through (tenant_id, …, log_id) indexes. */
import type { Kysely } from 'kysely';
import type { LogFilter } from '../logs/query.js';
import type { Database, LogsTable } from './schema.js';

export async function findLog(db: Kysely<Database>, tenantId: string, logId: string): Promise<LogsTable | undefined> {
  return db.selectFrom('logs').selectAll().where('tenant_id', '=', tenantId).where('log_id', '=', logId).executeTakeFirst();
}

export interface LogSearch {
  filter?: LogFilter | undefined;
  /** Newest first (the default) or oldest first; log ids are time-ordered, so this is date order. */
  descending: boolean;
  offset: number;
  limit: number;
}

export async function searchLogs(db: Kysely<Database>, tenantId: string, search: LogSearch): Promise<LogsTable[]> {
  let query = db.selectFrom('logs').selectAll().where('tenant_id', '=', tenantId);
  if (search.filter) query = query.where(search.filter);
  return query.orderBy('log_id', search.descending ? 'desc' : 'asc').offset(search.offset).limit(search.limit).execute();
}

/**
 * How many logs match, counted up to `cap`: offset paging cannot reach past the cap, and counting further would
 * read every matching row of the tenant.
 */
export async function countLogs(db: Kysely<Database>, tenantId: string, filter: LogFilter | undefined, cap: number): Promise<number> {
  let inner = db.selectFrom('logs').select('log_id').where('tenant_id', '=', tenantId);
  if (filter) inner = inner.where(filter);
  const row = await db
    .selectFrom(inner.limit(cap).as('matching'))
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Checkpoint reading: the logs after `from` (or from the oldest), in log id order. */
export async function logsAfter(db: Kysely<Database>, tenantId: string, from: string | undefined, limit: number): Promise<LogsTable[]> {
  let query = db.selectFrom('logs').selectAll().where('tenant_id', '=', tenantId);
  if (from !== undefined) query = query.where('log_id', '>', from);
  return query.orderBy('log_id', 'asc').limit(limit).execute();
}
