/**
 * What every hosted page handler starts with: the login transaction named by the URL or the form (bound to
 * this browser; on POST also to the form's CSRF token) and the client it is for. A missing or stale one gets
 * the error page, never a guess.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest } from '../http/errors.js';
import type { Services } from '../services.js';
import type { AuthorizationRequest } from '../auth-api/authorize/request.js';
import type { Client } from '../store/clients.js';
import { sendErrorPage } from './error-page.js';
import { signInResponseHeaders } from './hosted-page.js';
import { loadLoginTransaction, type LoginTransaction } from './transactions.js';

/**
 * The request once the user has just authenticated on a hosted page: `prompt=login` and `max_age` are met for
 * the rest of the transaction (else max_age=0, or a slow second step, would send them back to log in again).
 */
export function authenticatedNow(request: AuthorizationRequest): AuthorizationRequest {
  const { maxAge: _met, ...rest } = request;
  return { ...rest, prompt: request.prompt.filter((p) => p !== 'login') };
}

export interface LoginStep {
  transaction: LoginTransaction;
  client: Client;
}

export type FormBody = Record<string, string | undefined>;

/** The form body as single strings; anything else (arrays, objects) reads as absent. */
export function formBody(request: FastifyRequest): FormBody {
  const body = request.body;
  const out: FormBody = {};
  if (body && typeof body === 'object') for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

export async function loadStep(request: FastifyRequest, reply: FastifyReply, services: Services, method: 'GET' | 'POST'): Promise<LoginStep | undefined> {
  return loadStepWith(request, reply, services, method, loadLoginTransaction);
}

/** loadStep with another way of reading the transaction (the second step reads its challenge with it). */
export async function loadStepWith<T extends LoginTransaction>(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  method: 'GET' | 'POST',
  load: (request: FastifyRequest, services: Services, id: unknown, csrfToken?: unknown) => Promise<T | undefined>,
): Promise<{ transaction: T; client: Client } | undefined> {
  signInResponseHeaders(reply);
  const id = method === 'GET' ? (request.query as Record<string, unknown>).state : formBody(request).transaction;
  const csrf = method === 'POST' ? (formBody(request)._csrf ?? '') : undefined;
  const transaction = await load(request, services, id, csrf);
  const client = transaction && (await services.configCache.client(request.tenant.id, transaction.request.clientId));
  if (!transaction || !client) {
    sendErrorPage(
      reply,
      request,
      new InvalidRequest(
        method === 'POST'
          ? 'This form has expired or was sent from another browser. Go back to the application and sign in again.'
          : 'This sign-in link has expired or is not valid here. Go back to the application and sign in again.',
      ),
    );
    return undefined;
  }
  return { transaction, client };
}
