/** What every client authentication method sees, and what it must establish. */
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';

export type ClientAuthMethod =
  | 'client_secret_post'
  | 'client_secret_basic'
  | 'private_key_jwt'
  | 'tls_client_auth'
  | 'self_signed_tls_client_auth'
  | 'none';

/** The credentials a request presented, parsed but not yet checked. */
export interface PresentedCredentials {
  method: ClientAuthMethod;
  clientId: string;
  secret?: string;
  assertion?: string;
  assertionType?: string;
  /** A certificate forwarded by a trusted edge (cname-api-key matched), PEM. */
  certificate?: { pem: string; caVerified: boolean };
}

export interface ClientAuthContext {
  services: Pick<Services, 'store' | 'sealer'>;
  tenant: Tenant;
  client: Client;
  presented: PresentedCredentials;
  /** URLs a private_key_jwt `aud` may name: the issuer and this endpoint's URL. */
  audiences: string[];
}

/** One method: resolves when the presented credential proves the client, throws InvalidClient otherwise. */
export type ClientAuthenticator = (context: ClientAuthContext) => Promise<void>;
