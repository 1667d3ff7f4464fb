/** What the /authorize checks share: the raw parameters, what earlier checks established, and the services. */
import type { Services } from '../../../services.js';
import type { Client } from '../../../store/clients.js';
import type { Tenant } from '../../../store/tenants.js';
import type { AuthorizationRequest, RawParameters } from '../request.js';

export interface CheckContext {
  services: Services;
  tenant: Tenant;
  params: RawParameters;
  /** Set by the client check. */
  client?: Client;
  /** Filled in field by field; complete once every check has run. */
  request: Partial<AuthorizationRequest>;
}

export type AuthorizeCheck = (context: CheckContext) => void | Promise<void>;

/** The client, once the client check has passed (later checks run only after it). */
export function clientOf(context: CheckContext): Client {
  if (!context.client) throw new Error('client check must run first');
  return context.client;
}
