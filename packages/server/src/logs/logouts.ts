/**
 * The log event of a logout (/v2/logout, /oidc/logout): `slo` when it went where it was asked, `flo` when it was
 * refused (an unknown client, a return URL not allowed). The session is ended in both cases; the event names whose
 * it was when the browser had one.
 */
import type { FastifyRequest } from 'fastify';
import { ProtocolError } from '../http/errors.js';
import type { Services } from '../services.js';
import type { Client } from '../store/clients.js';

export interface LogoutFacts {
  userId?: string | undefined;
  client?: Client | undefined;
}

export function recordLogout(services: Services, request: FastifyRequest, facts: LogoutFacts, error?: unknown): void {
  services.tenantLogs.recordFor(request, {
    type: error === undefined ? 'slo' : 'flo',
    ...(error !== undefined && { description: error instanceof ProtocolError ? error.message.slice(0, 500) : 'Internal error' }),
    ...(facts.client && { client: { client_id: facts.client.client_id, name: facts.client.name } }),
    user_id: facts.userId,
  });
}
