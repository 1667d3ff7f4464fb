/**
 * The authorization request a passwordless login finishes (the start request's `authParams`, or the query of
 * /passwordless/verify_redirect): checked by the very checks of /authorize, in the same order, so a magic
 * link can never do what /authorize would refuse.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProtocolError } from '../../http/errors.js';
import { sendErrorPage } from '../../login/error-page.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import { checkClient } from '../authorize/checks/client.js';
import { clientOf, type AuthorizeCheck, type CheckContext } from '../authorize/checks/context.js';
import { checkConnection } from '../authorize/checks/connection.js';
import { checkNonce } from '../authorize/checks/nonce.js';
import { checkPkce } from '../authorize/checks/pkce.js';
import { checkPrompt } from '../authorize/checks/prompt.js';
import { checkRedirectUri } from '../authorize/checks/redirect-uri.js';
import { checkResponseMode } from '../authorize/checks/response-mode.js';
import { checkResponseType } from '../authorize/checks/response-type.js';
import { checkScope } from '../authorize/checks/scope.js';
import { checkWebMessageOrigin } from '../authorize/checks/web-message-origin.js';
import { sendAuthorizationError } from '../authorize/complete.js';
import type { AuthorizationRequest, RawParameters } from '../authorize/request.js';

/** As in /authorize: failures before these pass have nowhere trusted to go. */
const BEFORE_REDIRECT: AuthorizeCheck[] = [checkClient, checkRedirectUri, checkWebMessageOrigin];
const AFTER_REDIRECT: AuthorizeCheck[] = [checkResponseMode, checkResponseType, checkScope, checkNonce, checkPkce, checkPrompt, checkConnection];

export type CheckedAuthorization =
  | { ok: true; client: Client; request: AuthorizationRequest }
  | { ok: false; error: ProtocolError; deliverTo?: { client: Client; redirectUri: string; responseMode: AuthorizationRequest['responseMode']; state: string | undefined } };

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

export async function checkAuthorizationParameters(services: Services, tenant: Tenant, params: RawParameters): Promise<CheckedAuthorization> {
  const context: CheckContext = { services, tenant, params, request: {} };
  try {
    for (const check of BEFORE_REDIRECT) await check(context);
  } catch (error) {
    if (error instanceof ProtocolError) return { ok: false, error };
    throw error;
  }
  const client = clientOf(context);
  try {
    for (const check of AFTER_REDIRECT) await check(context);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const deliverTo = { client, redirectUri: context.request.redirectUri!, responseMode: context.request.responseMode ?? 'query', state: params.state };
    return { ok: false, error, deliverTo };
  }
  return { ok: true, client, request: context.request as AuthorizationRequest };
}

/** Shows a failed check where /authorize would: the error page, or the client's redirect URI. */
export function sendCheckFailure(request: FastifyRequest, reply: FastifyReply, failure: Extract<CheckedAuthorization, { ok: false }>): FastifyReply {
  if (!failure.deliverTo) return sendErrorPage(reply, request, failure.error);
  const { client, ...deliverTo } = failure.deliverTo;
  return sendAuthorizationError(reply, request, client, deliverTo, failure.error, false);
}
