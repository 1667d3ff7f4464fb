/**
 * Which check runs where: the one table of the authorization request's checks, for /authorize, for the pushed
 * requests of /oauth/par (RFC 9126: "the same as /authorize", minus what only the browser request has), and for
 * every other way of finishing an authorization request (the passwordless link and verify_redirect, which run
 * the /authorize column), so none can do what /authorize refuses.
 *
 * Until the client and its redirect URI are known good (`before` the redirect), a failure is shown on the error
 * page (or answered as JSON at /oauth/par); after that it may be delivered to the redirect URI.
 */
import { ProtocolError } from '../../../http/errors.js';
import type { Services } from '../../../services.js';
import type { Client } from '../../../store/clients.js';
import type { Tenant } from '../../../store/tenants.js';
import type { AuthorizationRequest, RawParameters } from '../request.js';
import { checkAcrValues } from './acr-values.js';
import { checkClient } from './client.js';
import { clientOf, type AuthorizeCheck, type CheckContext, type CheckEndpoint } from './context.js';
import { checkConnection } from './connection.js';
import { checkNonce } from './nonce.js';
import { checkPkce } from './pkce.js';
import { checkFapiProfile } from './fapi-profile.js';
import { checkPrompt } from './prompt.js';
import { checkPushedRequired } from './pushed-required.js';
import { checkRedirectUri } from './redirect-uri.js';
import { checkRequestObject } from './request-object.js';
import { checkRequestUri } from './request-uri.js';
import { checkResponseMode } from './response-mode.js';
import { checkResponseType } from './response-type.js';
import { checkScope } from './scope.js';
import { checkSenderConstraint } from './sender-constraint.js';
import { checkWebMessageOrigin } from './web-message-origin.js';

type Stage = 'before' | 'after';
const X = true;
const _ = false;

/** response_mode first after the redirect URI, so the rest know how to deliver their errors. */
const TABLE: readonly (readonly [AuthorizeCheck, authorize: boolean, par: boolean, stage: Stage])[] = [
  //  check                   /authorize  /oauth/par
  [checkClient,               X,          X, 'before'],
  [checkRequestUri,           X,          X, 'before'],
  [checkRequestObject,        X,          X, 'before'],
  [checkPushedRequired,       X,          _, 'before'],
  [checkRedirectUri,          X,          X, 'before'],
  [checkWebMessageOrigin,     X,          X, 'before'],
  [checkResponseMode,         X,          X, 'after'],
  [checkResponseType,         X,          X, 'after'],
  [checkScope,                X,          X, 'after'],
  [checkNonce,                X,          X, 'after'],
  [checkPkce,                 X,          X, 'after'],
  [checkFapiProfile,          X,          X, 'after'],
  [checkSenderConstraint,     X,          X, 'after'],
  [checkPrompt,               X,          X, 'after'],
  [checkAcrValues,            X,          X, 'after'],
  [checkConnection,           X,          X, 'after'],
];

function checksFor(endpoint: CheckEndpoint, stage: Stage): AuthorizeCheck[] {
  return TABLE.filter(([, authorize, par, s]) => s === stage && (endpoint === 'par' ? par : authorize)).map(([check]) => check);
}

export type CheckedAuthorization =
  | { ok: true; client: Client; request: AuthorizationRequest; params: RawParameters }
  | { ok: false; error: ProtocolError; deliverTo?: { client: Client; redirectUri: string; responseMode: AuthorizationRequest['responseMode']; state: string | undefined } };

export interface CheckOptions {
  endpoint?: CheckEndpoint;
  /** At /oauth/par: the client that authenticated. */
  client?: Client;
}

/** Runs the endpoint's column; a failure says whether it may be delivered to the client (`deliverTo`) or not. */
export async function checkAuthorizationRequest(services: Services, tenant: Tenant, params: RawParameters, options: CheckOptions = {}): Promise<CheckedAuthorization> {
  const endpoint = options.endpoint ?? 'authorize';
  const context: CheckContext = { services, tenant, endpoint, params, request: {}, ...(options.client && { client: options.client }) };
  try {
    for (const check of checksFor(endpoint, 'before')) await check(context);
  } catch (error) {
    if (error instanceof ProtocolError) return { ok: false, error };
    throw error;
  }
  const client = clientOf(context);
  try {
    for (const check of checksFor(endpoint, 'after')) await check(context);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return {
      ok: false,
      error,
      deliverTo: { client, redirectUri: context.request.redirectUri!, responseMode: context.request.responseMode ?? 'query', state: context.params.state },
    };
  }
  return { ok: true, client, request: context.request as AuthorizationRequest, params: context.params };
}
