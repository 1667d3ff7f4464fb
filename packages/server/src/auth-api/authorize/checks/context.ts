/** What the /authorize checks share: the raw parameters, what earlier checks established, and the services. */
import type { Services } from '../../../services.js';
import type { Client } from '../../../store/clients.js';
import type { Tenant } from '../../../store/tenants.js';
import type { AuthorizationRequest, RawParameters } from '../request.js';

/** Where the checks run: the browser's /authorize, or a client's pushed request (/oauth/par, RFC 9126). */
export type CheckEndpoint = 'authorize' | 'par';

export interface CheckContext {
  services: Services;
  tenant: Tenant;
  endpoint: CheckEndpoint;
  /** May be replaced by the parameters of a pushed request (request_uri) or of a request object (request). */
  params: RawParameters;
  /** Set by the client check; at /oauth/par, set beforehand by client authentication. */
  client?: Client;
  /** Set when the parameters came from a pushed authorization request (request_uri). */
  pushed?: { dpopJkt: string | null };
  /** Filled in field by field; complete once every check has run. */
  request: Partial<AuthorizationRequest>;
}

export type AuthorizeCheck = (context: CheckContext) => void | Promise<void>;

/** The client, once the client check has passed (later checks run only after it). */
export function clientOf(context: CheckContext): Client {
  if (!context.client) throw new Error('client check must run first');
  return context.client;
}
