/**
 * POST /api/v2/jobs/users-imports (scope create:users): a multipart/form-data upload, as the reference takes it
 * and as auth0@7's `jobs.usersImports.create` sends it: the `users` file (a JSON array of users, schema in
 * jobs/user-file.ts), `connection_id` (a database connection), and optionally `upsert` (default false),
 * `external_id` (any string, returned with the job) and `send_completion_email` (default true).
 *
 * The file is streamed into the job's batches as it arrives (jobs/users-import.ts), so its size is bounded by
 * GATEHOUSE_IMPORT_MAX_BYTES (512 MiB by default; the reference's is 500 KB) and not by memory; larger is a 413.
 * Answers 202 with the job; the runner does the rest. A tenant has at most two unfinished imports at a time, as
 * in the reference (429 beyond). `send_completion_email` is recorded, but no email is sent: a Gatehouse tenant
 * has no owners' addresses; follow the job with GET /api/v2/jobs/{id} (or `gatehouse users import`).
 */
import { Type } from '@fastify/type-provider-typebox';
import multipart from '@fastify/multipart';
import { eventContextFrom } from '../events/context.js';
import { InvalidInput, PayloadTooLarge, ProtocolError, UnsupportedMediaType } from '../http/errors.js';
import { jobQueued } from '../jobs/runner.js';
import { EmptyUsersFile, importBatchSize, openImportJob, stageUsersFile, type StagedFile } from '../jobs/users-import.js';
import type { App, Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';
import { countActiveJobs, deleteJob, findJobById } from '../store/jobs.js';
import { JobBody, presentJob } from './jobs.js';
import { operation } from './operation.js';

/** The reference's limit of unfinished import jobs per tenant. */
export const MAX_ACTIVE_IMPORTS = 2;
const CONNECTION_ID = /^con_[A-Za-z0-9]{16}$/;

const ImportForm = Type.Object(
  {
    users: Type.String({ contentMediaType: 'application/octet-stream', description: 'The users file: a JSON array of users' }),
    connection_id: Type.String({ pattern: CONNECTION_ID.source }),
    upsert: Type.Optional(Type.Boolean({ default: false })),
    external_id: Type.Optional(Type.String({ maxLength: 255 })),
    send_completion_email: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

class TooManyImports extends ProtocolError {
  constructor() {
    super(429, 'too_many_requests', `There are ${MAX_ACTIVE_IMPORTS} active import users jobs, please wait until some of them are finished and try again`);
  }
}

function flag(fields: Record<string, string>, name: string, fallback: boolean): boolean {
  const value = fields[name];
  if (value === undefined) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidInput('body', `${name} must be true or false`);
}

/** Multipart errors (limits, malformed parts) in our error taxonomy. */
function multipartError(err: unknown, maxBytes: number): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new PayloadTooLarge(maxBytes);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new InvalidInput('body', 'Payload validation error: too many parts: send the users file and at most four fields');
  }
  if (typeof code === 'string' && code.startsWith('FST_')) return new InvalidInput('body', "Payload validation error: 'Invalid multipart payload format'");
  if (err instanceof Error && /multipart|Unexpected end/i.test(err.message)) return new InvalidInput('body', "Payload validation error: 'Invalid multipart payload format'");
  return err;
}

export function registerJobsUsersImports(api: App, services: Services): void {
  const db = services.store.db;
  const maxBytes = services.config.importMaxBytes;

  // The multipart parser is registered for this route alone: every other route still takes JSON and forms only.
  void api.register(async (scoped) => {
    await scoped.register(multipart, { throwFileSizeLimit: true });
    scoped.post('/jobs/users-imports', {
      ...operation(['create:users'], {
        summary: 'Create an import users job: a JSON file of users into a database connection',
        consumes: ['multipart/form-data'],
        body: ImportForm,
        response: { 202: JobBody },
      }),
      // The form is read as a stream in the handler (the file may be large); the schema documents it.
      validatorCompiler: () => () => true,
      handler: async (request, reply) => {
        const tenant = request.tenant;
        if (!request.isMultipart()) throw new UnsupportedMediaType(request.headers['content-type'], ['multipart/form-data']);
        if ((await countActiveJobs(db, tenant.id, 'users_import')) >= MAX_ACTIVE_IMPORTS) throw new TooManyImports();

        const fields: Record<string, string> = {};
        let staged: StagedFile | undefined;
        const discard = async () => {
          if (staged) await deleteJob(db, staged.jobId);
        };
        try {
          for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 1, fields: 8, fieldSize: 1024, parts: 9 } })) {
            if (part.type === 'file') {
              if (part.fieldname !== 'users') {
                part.file.resume();
                throw new InvalidInput('body', `Unexpected file part ${part.fieldname}: send the users file as the part named users`);
              }
              staged = await stageUsersFile(db, tenant.id, part.file, importBatchSize(services.store.dialect));
              if (part.file.truncated) throw new PayloadTooLarge(maxBytes);
            } else {
              if (part.fieldname in fields) throw new InvalidInput('body', `The field ${part.fieldname} is repeated`);
              fields[part.fieldname] = String(part.value);
            }
          }
        } catch (err) {
          await discard();
          if (err instanceof EmptyUsersFile) throw new InvalidInput('body', 'Users file must not be empty');
          throw multipartError(err, maxBytes);
        }

        try {
          if (!staged) throw new InvalidInput('body', "Must provide 'users' file as multipart part.");
          const unknown = Object.keys(fields).find((name) => !(name in ImportForm.properties));
          if (unknown) throw new InvalidInput('body', `Payload validation error: unknown field ${unknown}`);
          const connectionId = fields.connection_id;
          if (connectionId === undefined) throw new InvalidInput('body', "Must provide 'connection_id' as multipart part.");
          if (!CONNECTION_ID.test(connectionId)) {
            throw new InvalidInput('body', `Payload validation error: 'String does not match pattern ${CONNECTION_ID.source}' on property connection_id.`);
          }
          const connection = await findConnectionById(db, tenant.id, connectionId);
          if (!connection) throw new InvalidInput('body', 'The connection does not exist.');
          if (connection.strategy !== 'auth0') throw new InvalidInput('body', 'Connection must be a database connection.');
          const externalId = fields.external_id;
          if (externalId !== undefined && externalId.length > 255) throw new InvalidInput('body', 'external_id must be at most 255 characters');
          const upsert = flag(fields, 'upsert', false);
          const sendCompletionEmail = flag(fields, 'send_completion_email', true);
          // Two requests may have passed the first check together.
          if ((await countActiveJobs(db, tenant.id, 'users_import')) > MAX_ACTIVE_IMPORTS) throw new TooManyImports();
          await openImportJob(db, staged, connection, {
            upsert,
            send_completion_email: sendCompletionEmail,
            external_id: externalId,
            context: eventContextFrom(request),
          });
        } catch (err) {
          await discard();
          throw err;
        }
        jobQueued();
        const job = (await findJobById(db, staged.jobId))!;
        return reply.code(202).send(await presentJob(services, tenant, job));
      },
    });
  });
}
