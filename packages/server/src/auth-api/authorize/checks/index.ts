/**
 * Which check runs where: the one table of /authorize's checks, also used by every other way of finishing an
 * authorization request (the passwordless link and verify_redirect), so none can do what /authorize refuses.
 */
import { ProtocolError } from '../../../http/errors.js';
import type { Services } from '../../../services.js';
import type { Client } from '../../../store/clients.js';
import type { Tenant } from '../../../store/tenants.js';
import type { AuthorizationRequest, RawParameters } from '../request.js';
import { checkClient } from './client.js';
import { clientOf, type AuthorizeCheck, type CheckContext } from './context.js';
import { checkConnection } from './connection.js';
import { checkNonce } from './nonce.js';
import { checkPkce } from './pkce.js';
import { checkPrompt } from './prompt.js';
import { checkRedirectUri } from './redirect-uri.js';
import { checkResponseMode } from './response-mode.js';
import { checkResponseType } from './response-type.js';
import { checkScope } from './scope.js';
import { checkWebMessageOrigin } from './web-message-origin.js';

/** Failures here show the error page: there is no trusted place to send them yet. */
export const BEFORE_REDIRECT: readonly AuthorizeCheck[] = [checkClient, checkRedirectUri, checkWebMessageOrigin];
/** Failures here are sent to the redirect URI; response_mode first, so the rest know how to deliver. */
export const AFTER_REDIRECT: readonly AuthorizeCheck[] = [checkResponseMode, checkResponseType, checkScope, checkNonce, checkPkce, checkPrompt, checkConnection];

export type CheckedAuthorization =
  | { ok: true; client: Client; request: AuthorizationRequest }
  | { ok: false; error: ProtocolError; deliverTo?: { client: Client; redirectUri: string; responseMode: AuthorizationRequest['responseMode']; state: string | undefined } };

/** Runs both tables; a failure says whether it may be delivered to the client (`deliverTo`) or not. */
export async function checkAuthorizationRequest(services: Services, tenant: Tenant, params: RawParameters): Promise<CheckedAuthorization> {
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
    return { ok: false, error, deliverTo: { client, redirectUri: context.request.redirectUri!, responseMode: context.request.responseMode ?? 'query', state: params.state } };
  }
  return { ok: true, client, request: context.request as AuthorizationRequest };
}
