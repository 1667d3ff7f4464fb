/**
 * The log event of a Management API request: `sapi` for a change that succeeded, `fapi` for a change that
 * failed and for any request refused as unauthenticated or forbidden, `api_limit` for a rate-limited one.
 * Successful reads are not logged (reading logs would otherwise log itself). Written after the response, so a
 * change that rolled back is never reported as a success. `details` carries the method, the path (never the query
 * string or body, which may carry secrets), the calling client and the status.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import type { LogEventType } from './catalogue.js';

function typeOf(method: string, status: number): LogEventType | undefined {
  if (status === 429) return 'api_limit';
  const write = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  if (status < 400) return write ? 'sapi' : undefined;
  return write || status === 401 || status === 403 ? 'fapi' : undefined;
}

export function recordManagementOperation(services: Services, request: FastifyRequest, reply: FastifyReply): void {
  const type = typeOf(request.method, reply.statusCode);
  if (!type) return;
  const principal = (request as Partial<Pick<FastifyRequest, 'principal'>>).principal;
  const path = request.url.split('?', 1)[0]!.slice(0, 500);
  const route = request.routeOptions.url ?? path;
  services.tenantLogs.recordFor(request, {
    type,
    description: `${request.method} ${route}`.slice(0, 500),
    ...(principal?.clientId && { client: { client_id: principal.clientId } }),
    details: {
      request: { method: request.method, path, ...(principal?.clientId && { auth: { client_id: principal.clientId } }) },
      response: { statusCode: reply.statusCode },
    },
  });
}
