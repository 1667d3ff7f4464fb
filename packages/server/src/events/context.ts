/** What a request tells about the origin of the events it raises (reference A.8 `data.context`). */
import type { FastifyRequest } from 'fastify';
import type { EventContext } from './outbox.js';

export function eventContextFrom(request: FastifyRequest): EventContext {
  // `principal` is set on Management API routes only; elsewhere the property is absent.
  const principal = (request as Partial<Pick<FastifyRequest, 'principal'>>).principal;
  const tenant = (request as Partial<Pick<FastifyRequest, 'tenant'>>).tenant;
  const userAgent = request.headers['user-agent'];
  return {
    ...(tenant && { tenant_id: tenant.id }),
    ...(principal?.clientId && { client_id: principal.clientId }),
    request_id: request.id,
    ip: request.ip,
    ...(request.hostname && { hostname: request.hostname.slice(0, 255) }),
    ...(typeof userAgent === 'string' && userAgent && { user_agent: userAgent.slice(0, 512) }),
  };
}
