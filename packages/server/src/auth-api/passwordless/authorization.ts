/**
 * The authorization request a passwordless login finishes (the start request's `authParams`, or the query of
 * /passwordless/verify_redirect): checked by the very checks of /authorize, in the same order, so a magic
 * link can never do what /authorize would refuse.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendErrorPage } from '../../login/error-page.js';
import type { Services } from '../../services.js';
import type { Tenant } from '../../store/tenants.js';
import { checkAuthorizationRequest, type CheckedAuthorization } from '../authorize/checks/index.js';
import { sendAuthorizationError } from '../authorize/complete.js';
import type { RawParameters } from '../authorize/request.js';

export type { CheckedAuthorization };

/**
 * The authorization request is one string per name: numbers and booleans (a JSON `max_age: 300`) become text;
 * repeated query parameters, objects and over-long values are left out (the checks then see them missing).
 */
export function authorizationParameters(source: Record<string, unknown>): RawParameters {
  const params: RawParameters = {};
  for (const [name, value] of Object.entries(source)) {
    const text = typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
    if (typeof text === 'string' && text.length <= 4000) params[name] = text;
  }
  return params;
}

/** The /authorize checks, from their one table (auth-api/authorize/checks/index.ts). */
export function checkAuthorizationParameters(services: Services, tenant: Tenant, params: RawParameters): Promise<CheckedAuthorization> {
  return checkAuthorizationRequest(services, tenant, params);
}

/** Shows a failed check where /authorize would: the error page, or the client's redirect URI. */
export function sendCheckFailure(request: FastifyRequest, reply: FastifyReply, failure: Extract<CheckedAuthorization, { ok: false }>): FastifyReply {
  if (!failure.deliverTo) return sendErrorPage(reply, request, failure.error);
  const { client, ...deliverTo } = failure.deliverTo;
  return sendAuthorizationError(reply, request, client, deliverTo, failure.error, false);
}
