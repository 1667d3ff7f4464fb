/**
 * /api/v2/jobs/{id} and /api/v2/jobs/{id}/errors: a job's state and the users an import refused. The jobs are
 * made by jobs-users-imports.ts, jobs-users-exports.ts and jobs-verification-email.ts, and worked by
 * jobs/runner.ts.
 *
 *  - `status`: pending, processing, completed or failed (with `status_details` saying why);
 *  - imports: `summary` {failed, updated, inserted, total}, counted as the job goes;
 *  - exports: `location`, a signed link to the gzip file that works for 60 seconds (each GET makes a new one);
 *  - `percentage_done` and `time_left_seconds` while it runs (estimated from the pace so far).
 * GET /jobs/{id}/errors answers each refused user (hashes as `*****`) with its errors, in file order, streamed;
 * 204 when there are none; for a job that failed as a whole, the job with its `status_details`.
 */
import { Readable } from 'node:stream';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { NotFound } from '../http/errors.js';
import { jobErrorsDocument } from '../jobs/job-errors.js';
import type { ImportOptions } from '../jobs/users-import.js';
import { downloadLocation, type ExportOptions } from '../jobs/users-export.js';
import type { App, Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';
import { findJob, type Job } from '../store/jobs.js';
import type { Tenant } from '../store/tenants.js';
import { operation } from './operation.js';

export const JOB_ID_PATTERN = '^job_[A-Za-z0-9]{16}$';
const JobParams = Type.Object({ id: Type.String({ pattern: JOB_ID_PATTERN }) });

export const JobBody = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    status: Type.String(),
    created_at: Type.String(),
    connection_id: Type.Optional(Type.String()),
    connection: Type.Optional(Type.String()),
    external_id: Type.Optional(Type.String()),
    upsert: Type.Optional(Type.Boolean()),
    send_completion_email: Type.Optional(Type.Boolean()),
    format: Type.Optional(Type.String()),
    limit: Type.Optional(Type.Integer()),
    fields: Type.Optional(Type.Array(Type.Object({ name: Type.String(), export_as: Type.Optional(Type.String()) }))),
    location: Type.Optional(Type.String()),
    percentage_done: Type.Optional(Type.Integer()),
    time_left_seconds: Type.Optional(Type.Integer()),
    status_details: Type.Optional(Type.String()),
    summary: Type.Optional(Type.Object({ failed: Type.Integer(), updated: Type.Integer(), inserted: Type.Integer(), total: Type.Integer() })),
  },
  { additionalProperties: true },
);

export type JobView = Static<typeof JobBody>;

const ErrorsBody = Type.Array(
  Type.Object(
    {
      user: Type.Unknown(),
      errors: Type.Array(Type.Object({ code: Type.String(), message: Type.String(), path: Type.String() })),
    },
    { additionalProperties: false },
  ),
);

export class JobNotFound extends NotFound {
  constructor() {
    super('The job does not exist', 'inexistent_job');
  }
}

function progress(job: Job, now: number): { percentage_done?: number; time_left_seconds?: number } {
  if (job.status === 'completed') return { percentage_done: 100, time_left_seconds: 0 };
  if (job.status === 'failed') return {};
  const percentage = job.total > 0 ? Math.min(99, Math.floor((job.processed * 100) / job.total)) : 0;
  if (job.status !== 'processing' || job.processed === 0 || job.started_at === null) return { percentage_done: percentage };
  const perUser = (now - job.started_at) / job.processed;
  return { percentage_done: percentage, time_left_seconds: Math.ceil((perUser * Math.max(0, job.total - job.processed)) / 1000) };
}

/** A job as GET /jobs/{id} shows it (and the create routes, when it is new). */
export async function presentJob(services: Services, tenant: Tenant, job: Job, now = Date.now()): Promise<JobView> {
  const connection = job.connection_id ? await findConnectionById(services.store.db, tenant.id, job.connection_id) : undefined;
  const base: JobView = {
    id: job.id,
    type: job.type,
    // An upload still arriving is not a job anyone was told of yet; shown as pending.
    status: job.status === 'uploading' ? 'pending' : job.status,
    created_at: new Date(job.created_at).toISOString(),
    ...(job.connection_id && { connection_id: job.connection_id }),
    ...(connection && { connection: connection.name }),
    ...(job.external_id !== null && { external_id: job.external_id }),
    ...(job.type !== 'verification_email' && progress(job, now)),
    ...(job.status_details !== null && { status_details: job.status_details }),
  };
  if (job.type === 'users_import') {
    const options = JSON.parse(job.options) as Partial<ImportOptions>;
    return {
      ...base,
      ...(options.upsert !== undefined && { upsert: options.upsert }),
      ...(options.send_completion_email !== undefined && { send_completion_email: options.send_completion_email }),
      summary: { failed: job.failed, updated: job.updated, inserted: job.inserted, total: job.total },
    };
  }
  if (job.type === 'users_export') {
    const options = JSON.parse(job.options) as ExportOptions;
    const location = downloadLocation(services, tenant, job, now);
    return {
      ...base,
      format: options.format,
      ...(options.limit !== undefined && { limit: options.limit }),
      fields: options.fields,
      ...(location && { location }),
    };
  }
  return base;
}

export function registerJobs(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/jobs/:id', {
    ...operation(['create:users', 'read:users'], { summary: 'Get a job', params: JobParams, response: { 200: JobBody } }),
    handler: async (request) => {
      const job = await findJob(db, request.tenant.id, request.params.id);
      if (!job) throw new JobNotFound();
      return presentJob(services, request.tenant, job);
    },
  });

  api.get('/jobs/:id/errors', {
    ...operation(['create:users', 'read:users'], {
      summary: "Get a job's errors: the users an import refused, each with its errors",
      params: JobParams,
      response: { 200: Type.Union([ErrorsBody, JobBody]), 204: Type.Null({ description: 'The job has no errors' }) },
    }),
    handler: async (request, reply) => {
      const job = await findJob(db, request.tenant.id, request.params.id);
      if (!job) throw new JobNotFound();
      if (job.status === 'failed' && job.status_details !== null) return presentJob(services, request.tenant, job);
      if (job.failed === 0) return reply.code(204).send(null);
      // Streamed page by page; the schema documents the array it makes.
      return reply.type('application/json; charset=utf-8').send(Readable.from(jobErrorsDocument(db, job.id)) as unknown as Static<typeof ErrorsBody>);
    },
  });
}
