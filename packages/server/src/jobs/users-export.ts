/**
 * User exports (the reference's users-exports job): the tenant's users (of one connection, when asked), as
 * NDJSON or CSV (export-fields.ts), gzip-compressed, downloadable from a signed link that expires (download.ts).
 *
 * The job writes a page of EXPORT_PAGE users at a time as one gzip member, stored as a part beside the job with
 * the user id it ends at (the cursor) in one transaction; the parts concatenated are one gzip file (RFC 1952
 * allows many members). Memory stays flat however many users there are, and a job resumed after a crash goes on
 * from its cursor. Password hashes are never exported, as in the reference.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { randomSecret } from '../crypto/ids.js';
import { presentUser } from '../management/user-view.js';
import type { Services } from '../services.js';
import { listConnections, type Connection } from '../store/connections.js';
import { appendExportPart, countExportParts, findJobById, insertJob, newJobId, readExportPart, type Job } from '../store/jobs.js';
import type { Tenant } from '../store/tenants.js';
import { countUsers, listLinkedIdentities, listUsersAfter } from '../store/users.js';
import { defaultFields, ExportWriter, type ExportField, type ExportFormat } from './export-fields.js';

const gzipAsync = promisify(gzip);

/** Users per part. */
export const EXPORT_PAGE = 1000;
/** How long a download link works (the reference's: 60 seconds; GET /jobs/{id} gives a fresh one). */
export const DOWNLOAD_LINK_SECONDS = 60;

export interface ExportOptions {
  format: ExportFormat;
  fields: ExportField[];
  limit?: number | undefined;
}

function downloadKeyContext(jobId: string): string {
  return `job_download:${jobId}`;
}

/** The options a request asks for, with the defaults filled in (the same request always gives the same options). */
export function exportOptions(request: Partial<ExportOptions>): ExportOptions {
  const format = request.format ?? 'json';
  return { format, fields: request.fields ?? defaultFields(format), ...(request.limit !== undefined && { limit: request.limit }) };
}

/** `madeByCli`: the job is the CLI's to report (store/jobs.ts, markCliReportPending), from the moment it exists. */
export async function createExportJob(services: Services, tenant: Tenant, connection: Connection | undefined, request: Partial<ExportOptions>, now = Date.now(), madeByCli = false): Promise<Job> {
  const options = exportOptions(request);
  const id = newJobId();
  const users = await countUsers(services.store.db, tenant.id, connection?.id);
  const job = {
    id,
    tenant_id: tenant.id,
    type: 'users_export' as const,
    status: 'pending' as const,
    connection_id: connection?.id ?? null,
    options: JSON.stringify(options),
    total: options.limit === undefined ? users : Math.min(users, options.limit),
    download_key_sealed: services.sealer.seal(randomSecret(32), downloadKeyContext(id)),
    created_at: now,
    cli_report_pending: madeByCli ? 1 : 0,
  };
  await insertJob(services.store.db, job);
  return (await findJobById(services.store.db, id))!;
}

/** Writes the job's next part; `done` when every user (or `limit` of them) is written. */
export async function exportNextPart(services: Services, job: Job): Promise<{ done: boolean }> {
  const db = services.store.db;
  const options = JSON.parse(job.options) as ExportOptions;
  const remaining = options.limit === undefined ? EXPORT_PAGE : Math.min(EXPORT_PAGE, options.limit - job.processed);
  if (remaining <= 0) return { done: true };
  const users = await listUsersAfter(db, job.tenant_id, { connectionId: job.connection_id ?? undefined, afterUserId: job.cursor, limit: remaining });
  // Nothing to export still makes a file (a CSV header, or an empty gzip member): a download never gets no bytes.
  if (users.length === 0 && job.cursor !== null) return { done: true };
  const connections = new Map((await listConnections(db, job.tenant_id)).map((c) => [c.id, c]));
  const linked = await listLinkedIdentities(
    db,
    job.tenant_id,
    users.map((u) => u.user_id),
  );
  const writer = new ExportWriter(options.format, options.fields);
  let text = job.cursor === null ? writer.header() : '';
  for (const user of users) text += writer.line(presentUser(user, linked.get(user.user_id) ?? [], { connections }));
  const data = (await gzipAsync(text)).toString('base64');
  const toCursor = users.at(-1)?.user_id ?? '';
  const written = await db.transaction().execute(async (trx) =>
    appendExportPart(trx, job.id, job.cursor, { seq: await countExportParts(trx, job.id), data, toCursor, users: users.length }),
  );
  // Another worker wrote this stretch first: the caller reloads the job and goes on from its cursor.
  if (!written) return { done: false };
  return { done: users.length < remaining };
}

function signature(key: string, jobId: string, expires: number): string {
  return createHmac('sha256', key).update(`${jobId}:${expires}`).digest('base64url');
}

/** The file name of an export: the tenant's name, as in the reference, with the format and `.gz`. */
export function exportFileName(tenant: Tenant, job: Job): string {
  const { format } = JSON.parse(job.options) as ExportOptions;
  return `${tenant.name.replace(/[^A-Za-z0-9._-]/g, '_')}.${format}.gz`;
}

/** A link to the finished export's file that works for DOWNLOAD_LINK_SECONDS. */
export function downloadLocation(services: Services, tenant: Tenant, job: Job, now = Date.now()): string | undefined {
  if (job.type !== 'users_export' || job.status !== 'completed' || !job.download_key_sealed) return undefined;
  const key = services.sealer.unseal(job.download_key_sealed, downloadKeyContext(job.id));
  const expires = Math.floor(now / 1000) + DOWNLOAD_LINK_SECONDS;
  const query = new URLSearchParams({ expires: String(expires), signature: signature(key, job.id, expires) });
  return `${tenant.baseUrl}/jobs/${job.id}/${exportFileName(tenant, job)}?${query}`;
}

/** Whether a download link's `expires` and `signature` are genuine and unexpired. */
export function checkDownloadLink(services: Services, job: Job, expires: number, given: string, now = Date.now()): boolean {
  if (!job.download_key_sealed || expires * 1000 < now) return false;
  const expected = Buffer.from(signature(services.sealer.unseal(job.download_key_sealed, downloadKeyContext(job.id)), job.id, expires));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Base64 parts → bytes of the gzip file, in order, one part at a time. */
export async function* exportFileChunks(services: Services, jobId: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const data = await readExportPart(services.store.db, jobId, seq);
    if (data === undefined) return;
    yield Buffer.from(data, 'base64');
  }
}
