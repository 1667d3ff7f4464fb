/**
 * POST /api/v2/jobs/users-exports (scope read:users): exports the tenant's users (of one connection, with
 * `connection_id`) as NDJSON (`format: json`, the default) or CSV, with the `fields` asked for (each `name` a
 * path into the user, written as `export_as` when given; a default set otherwise), at most `limit` users.
 * Answers with the job; once it is completed, GET /api/v2/jobs/{id} gives its `location`, a signed link to
 * the gzip file that works for 60 seconds. Password hashes are never exported.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidInput } from '../http/errors.js';
import { fieldsProblem, MAX_CSV_FIELDS } from '../jobs/export-fields.js';
import { jobQueued } from '../jobs/runner.js';
import { createExportJob } from '../jobs/users-export.js';
import type { App, Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';
import { JobBody, presentJob } from './jobs.js';
import { operation } from './operation.js';

const ExportBody = Type.Object(
  {
    connection_id: Type.Optional(Type.String({ pattern: '^con_[A-Za-z0-9]{16}$' })),
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
    limit: Type.Optional(Type.Integer({ minimum: 1 })),
    fields: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            export_as: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: `At most ${MAX_CSV_FIELDS} for csv` },
      ),
    ),
  },
  { additionalProperties: false },
);

export function registerJobsUsersExports(api: App, services: Services): void {
  api.post('/jobs/users-exports', {
    ...operation(['read:users'], { summary: 'Create an export users job: the users as a gzip NDJSON or CSV file', body: ExportBody, response: { 200: JobBody } }),
    handler: async (request) => {
      const { body, tenant } = request;
      const connection = body.connection_id ? await findConnectionById(services.store.db, tenant.id, body.connection_id) : undefined;
      if (body.connection_id && !connection) throw new InvalidInput('body', 'The connection does not exist.');
      const format = body.format ?? 'json';
      if (body.fields) {
        const problem = fieldsProblem(body.fields, format);
        if (problem) throw new InvalidInput('body', problem);
      }
      const job = await createExportJob(services, tenant, connection, { format, ...(body.fields && { fields: body.fields }), limit: body.limit });
      jobQueued();
      return presentJob(services, tenant, job);
    },
  });
}
