/**
 * Jobs at rest (migration 0016): the job rows, the claim with a lease that lets any process work on a job, an
 * import's batches, the users it refused, and an export's parts. What a job does lives in jobs/.
 *
 * Correctness never rests on the lease: an import batch is deleted in the transaction that writes its users
 * (a second worker on the same batch finds nothing to delete and rolls back), and an export part is written
 * only while the job's cursor is where the writer read it. The lease only keeps two processes from doing the
 * same work twice.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Dialect } from './db.js';
import type { Database, JobStatus, JobsTable, JobType } from './schema.js';

export type Job = JobsTable;

export function newJobId(): string {
  return `job_${randomAlphanumeric(16)}`;
}

export async function insertJob(db: Kysely<Database>, job: Pick<Job, 'id' | 'tenant_id' | 'type' | 'status' | 'options' | 'created_at'> & Partial<Job>): Promise<void> {
  await db
    .insertInto('jobs')
    .values({
      connection_id: null,
      external_id: null,
      source_digest: null,
      total: 0,
      processed: 0,
      inserted: 0,
      updated: 0,
      failed: 0,
      cursor: null,
      status_details: null,
      download_key_sealed: null,
      lease_id: null,
      lease_until: null,
      started_at: null,
      completed_at: null,
      cli_report_pending: 0,
      ...job,
    })
    .execute();
}

export async function findJob(db: Kysely<Database>, tenantId: string, id: string): Promise<Job | undefined> {
  return db.selectFrom('jobs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findJobById(db: Kysely<Database>, id: string): Promise<Job | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateJob(db: Kysely<Database>, id: string, fields: Partial<Omit<Job, 'id' | 'tenant_id' | 'type'>>): Promise<void> {
  await db.updateTable('jobs').set(fields).where('id', '=', id).execute();
}

export async function deleteJob(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('jobs').where('id', '=', id).execute();
}

/** Jobs of `type` in the tenant that are not finished (uploading, pending, processing). */
export async function countActiveJobs(db: Kysely<Database>, tenantId: string, type: JobType): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('type', '=', type)
    .where('status', 'in', ['uploading', 'pending', 'processing'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What the CLI looks for: the job an earlier run of the same command made. */
export interface CliJobMatch {
  type: JobType;
  connectionId?: string | null;
  sourceDigest?: string;
  options?: string;
}

function jobsMatching(db: Kysely<Database>, tenantId: string, match: CliJobMatch) {
  let query = db.selectFrom('jobs').selectAll().where('tenant_id', '=', tenantId).where('type', '=', match.type);
  if (match.connectionId !== undefined) query = match.connectionId === null ? query.where('connection_id', 'is', null) : query.where('connection_id', '=', match.connectionId);
  if (match.sourceDigest !== undefined) query = query.where('source_digest', '=', match.sourceDigest);
  if (match.options !== undefined) query = query.where('options', '=', match.options);
  return query;
}

/** The newest unfinished job of the tenant matching `match` (the CLI resumes it). */
export async function findUnfinishedJob(db: Kysely<Database>, tenantId: string, match: CliJobMatch): Promise<Job | undefined> {
  return jobsMatching(db, tenantId, match).where('status', 'in', ['pending', 'processing']).orderBy('created_at', 'desc').executeTakeFirst();
}

/**
 * The newest finished job matching `match` that a CLI run took on and left before reporting it (Ctrl-C, a crash):
 * a server finished it meanwhile, and the same command run again reports it instead of starting anew.
 */
export async function findJobLeftByCli(db: Kysely<Database>, tenantId: string, match: CliJobMatch): Promise<Job | undefined> {
  return jobsMatching(db, tenantId, match).where('status', 'in', ['completed', 'failed']).where('cli_report_pending', '=', 1).orderBy('created_at', 'desc').executeTakeFirst();
}

/** The CLI took the job on (`pending` true) or has reported it to its user (false). */
export async function markCliReportPending(db: Kysely<Database>, jobId: string, pending: boolean): Promise<void> {
  await db.updateTable('jobs').set({ cli_report_pending: pending ? 1 : 0 }).where('id', '=', jobId).execute();
}

export interface Lease {
  id: string;
  until: number;
}

/**
 * Claims up to `limit` jobs that are pending, or processing under a lease that ran out (their process died):
 * they are this claimer's until `now + leaseMs`. Tenants in `busyTenants` are skipped (one job per tenant at a
 * time in a process), `onlyJob` restricts the claim to one job (the CLI). PostgreSQL skips rows other nodes
 * are claiming (`FOR UPDATE SKIP LOCKED`); SQLite runs the one statement under its writer lock.
 */
export async function claimJobs(
  db: Kysely<Database>,
  dialect: Dialect,
  options: { limit: number; leaseMs: number; busyTenants?: readonly string[]; onlyJob?: string },
  now = Date.now(),
): Promise<{ jobs: Job[]; lease: Lease }> {
  const lease = { id: randomUUID(), until: now + options.leaseMs };
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const busy = options.busyTenants?.length ? sql`and tenant_id not in (${sql.join([...options.busyTenants])})` : sql``;
  const only = options.onlyJob ? sql`and id = ${options.onlyJob}` : sql``;
  const result = await sql<Job>`
    update jobs set status = 'processing', lease_id = ${lease.id}, lease_until = ${lease.until}, started_at = coalesce(started_at, ${now})
    where id in (
      select id from jobs
      where status in ('pending', 'processing') and (lease_until is null or lease_until <= ${now}) ${busy} ${only}
      order by created_at
      limit ${options.limit}
      ${lock}
    )
    returning *`.execute(db);
  return { jobs: result.rows, lease };
}

/** Extends a lease still held; false when another process took the job over (its lease had run out). */
export async function renewLease(db: Kysely<Database>, jobId: string, leaseId: string, until: number): Promise<boolean> {
  const result = await db.updateTable('jobs').set({ lease_until: until }).where('id', '=', jobId).where('lease_id', '=', leaseId).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives a job back (a stopping process): due again at once for whoever claims next. */
export async function releaseJob(db: Kysely<Database>, jobId: string, leaseId: string): Promise<void> {
  await db.updateTable('jobs').set({ lease_id: null, lease_until: null }).where('id', '=', jobId).where('lease_id', '=', leaseId).where('status', '=', 'processing').execute();
}

/** On start of the only claimer (SQLite, one process): jobs leased by a process that died are due at once. */
export async function releaseJobLeases(db: Kysely<Database>): Promise<number> {
  const result = await db.updateTable('jobs').set({ lease_id: null, lease_until: null }).where('status', '=', 'processing').executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function finishJob(db: Kysely<Database>, jobId: string, status: Extract<JobStatus, 'completed' | 'failed'>, statusDetails?: string, now = Date.now()): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ status, completed_at: now, lease_id: null, lease_until: null, ...(statusDetails !== undefined && { status_details: statusDetails }) })
    .where('id', '=', jobId)
    .where('status', 'in', ['pending', 'processing'])
    .execute();
}

/** Finished jobs older than `finishedBefore`, and uploads abandoned before `abandonedBefore`, with all their rows. */
export async function purgeJobs(db: Kysely<Database>, finishedBefore: number, abandonedBefore: number): Promise<number> {
  const result = await db
    .deleteFrom('jobs')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', ['completed', 'failed']), eb('completed_at', '<', finishedBefore)]),
        eb.and([eb('status', '=', 'uploading'), eb('created_at', '<', abandonedBefore)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// --- an import's batches and errors ------------------------------------------------------------------------

export async function insertImportBatch(db: Kysely<Database>, batch: { job_id: string; seq: number; first_index: number; users: string }): Promise<void> {
  await db.insertInto('job_import_batches').values(batch).execute();
}

/** The next `limit` batches still to do (lowest seq first). */
export async function nextImportBatches(db: Kysely<Database>, jobId: string, limit: number): Promise<{ seq: number; first_index: number; users: string }[]> {
  return db
    .selectFrom('job_import_batches')
    .select(['seq', 'first_index', 'users'])
    .where('job_id', '=', jobId)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** Takes the batch (in the transaction that applies it): false when another worker already did. */
export async function takeImportBatch(db: Kysely<Database>, jobId: string, seq: number): Promise<boolean> {
  const result = await db.deleteFrom('job_import_batches').where('job_id', '=', jobId).where('seq', '=', seq).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export interface JobErrorRow {
  position: number;
  user: string;
  errors: string;
}

export async function insertJobErrors(db: Kysely<Database>, jobId: string, rows: readonly JobErrorRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('job_errors')
      .values(rows.slice(i, i + 500).map((row) => ({ job_id: jobId, ...row })))
      .execute();
  }
}

/** Errors in file order, after `afterPosition`, `limit` at a time (the errors endpoint streams them). */
export async function listJobErrors(db: Kysely<Database>, jobId: string, afterPosition: number, limit: number): Promise<JobErrorRow[]> {
  return db
    .selectFrom('job_errors')
    .select(['position', 'user', 'errors'])
    .where('job_id', '=', jobId)
    .where('position', '>', afterPosition)
    .orderBy('position')
    .limit(limit)
    .execute();
}

/** Counts finished work into the job (increments, so that concurrent workers add up). */
export async function countImportProgress(db: Kysely<Database>, jobId: string, done: { processed: number; inserted: number; updated: number; failed: number }): Promise<void> {
  await db
    .updateTable('jobs')
    .set((eb) => ({
      processed: eb('processed', '+', done.processed),
      inserted: eb('inserted', '+', done.inserted),
      updated: eb('updated', '+', done.updated),
      failed: eb('failed', '+', done.failed),
    }))
    .where('id', '=', jobId)
    .execute();
}

// --- an export's parts --------------------------------------------------------------------------------------

/**
 * Appends a part and moves the cursor, only while the cursor is still `fromCursor`: false when another worker
 * wrote this stretch first (the caller's transaction then rolls back).
 */
export async function appendExportPart(
  db: Kysely<Database>,
  jobId: string,
  fromCursor: string | null,
  part: { seq: number; data: string; toCursor: string; users: number },
): Promise<boolean> {
  let move = db
    .updateTable('jobs')
    .set((eb) => ({ cursor: part.toCursor, processed: eb('processed', '+', part.users) }))
    .where('id', '=', jobId);
  move = fromCursor === null ? move.where('cursor', 'is', null) : move.where('cursor', '=', fromCursor);
  const moved = await move.executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) return false;
  await db.insertInto('job_export_parts').values({ job_id: jobId, seq: part.seq, data: part.data }).execute();
  return true;
}

export async function countExportParts(db: Kysely<Database>, jobId: string): Promise<number> {
  const row = await db
    .selectFrom('job_export_parts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('job_id', '=', jobId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function readExportPart(db: Kysely<Database>, jobId: string, seq: number): Promise<string | undefined> {
  const row = await db.selectFrom('job_export_parts').select('data').where('job_id', '=', jobId).where('seq', '=', seq).executeTakeFirst();
  return row?.data;
}
