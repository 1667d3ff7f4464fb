/**
 * GET /jobs/{id}/{file}?expires=…&signature=…: the gzip file of a completed export, for whoever holds the link
 * GET /api/v2/jobs/{id} gave (users-export.ts signs it; it works for 60 seconds). No bearer token: the link is
 * the authorization, as the reference's storage links are. The parts are streamed one at a time.
 */
import { Readable } from 'node:stream';
import { Type } from '@fastify/type-provider-typebox';
import { InvalidRequest, NotFound, ProtocolError } from '../http/errors.js';
import { errorResponses, fileBody } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findJob } from '../store/jobs.js';
import { checkDownloadLink, exportFileChunks, exportFileName } from './users-export.js';

const Params = Type.Object({ id: Type.String({ pattern: '^job_[A-Za-z0-9]{16}$' }), file: Type.String({ maxLength: 300 }) });
const Query = Type.Object({ expires: Type.Integer({ minimum: 0 }), signature: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

class LinkRefused extends ProtocolError {
  constructor() {
    super(403, 'access_denied', 'This download link is not valid or has expired: get a new one from GET /api/v2/jobs/{id}');
  }
}

export function registerExportDownload(app: App, services: Services): void {
  app.get('/jobs/:id/:file', {
    schema: {
      summary: "Download a completed users export (the signed link of the job's location)",
      params: Params,
      querystring: Query,
      response: {
        200: fileBody('The export file', ['application/gzip']),
        ...errorResponses('oauth', {
          400: 'invalid_request: the export is not completed yet',
          403: 'access_denied: the link is not valid or has expired (get a new one from GET /api/v2/jobs/{id})',
          404: 'inexistent_job, or no such file in the job',
        }),
      },
    },
    handler: async (request, reply) => {
      const job = await findJob(services.store.db, request.tenant.id, request.params.id);
      if (!job || job.type !== 'users_export') throw new NotFound('The job does not exist', 'inexistent_job');
      if (job.status !== 'completed') throw new InvalidRequest('The export is not completed yet');
      if (request.params.file !== exportFileName(request.tenant, job)) throw new NotFound('No such file in this job');
      if (!checkDownloadLink(services, job, request.query.expires, request.query.signature)) throw new LinkRefused();
      return reply
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="${request.params.file}"`)
        .header('cache-control', 'no-store')
        // A stream, not the string the schema's type says: the schema documents the bytes sent.
        .send(Readable.from(exportFileChunks(services, job.id)) as unknown as string);
    },
  });
}
