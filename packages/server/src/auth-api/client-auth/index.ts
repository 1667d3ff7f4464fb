/**
 * Client authentication for every endpoint that authenticates a client (token, revoke, passwordless start).
 *
 *   presented by the request            registered for the client          check
 *   Authorization: Basic                token_endpoint_auth_method basic   clientSecretBasic
 *   client_secret in the body           token_endpoint_auth_method post    clientSecretPost
 *   client_assertion + type             …methods.private_key_jwt           privateKeyJwt
 *   edge certificate (trusted edge)     …methods.tls_client_auth           tlsClientAuth
 *   edge certificate (trusted edge)     …methods.self_signed_tls…          selfSignedTlsClientAuth
 *   client_id only                      token_endpoint_auth_method none    none (when the caller allows it)
 *
 * The presented method must be the one the client registered, with one exception: a client that holds a
 * secret (registered for client_secret_post or client_secret_basic) may send it either way, as RFC 6749
 * §2.3.1 requires servers to accept HTTP Basic from such clients and as the reference does. Any other
 * mismatch, like any failed check, is a 401 invalid_client that does not say which part was wrong.
 */
import type { FastifyRequest } from 'fastify';
import { noteForLog } from '../../logs/request-notes.js';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { fapi2Profile } from '../fapi-profile.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import { InvalidClient } from '../errors.js';
import { clientSecretBasic, clientSecretPost } from './client-secret.js';
import { none } from './none.js';
import { privateKeyJwt } from './private-key-jwt.js';
import { edgeCertificate, selfSignedTlsClientAuth, tlsClientAuth } from './tls-client-auth.js';
import type { ClientAuthenticator, ClientAuthMethod, PresentedCredentials } from './types.js';

export type { ClientAuthMethod } from './types.js';

export const TOKEN_ENDPOINT_AUTH_METHODS: readonly ClientAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'tls_client_auth',
  'self_signed_tls_client_auth',
  'none',
];

const AUTHENTICATORS: Record<ClientAuthMethod, ClientAuthenticator> = {
  client_secret_basic: clientSecretBasic,
  client_secret_post: clientSecretPost,
  private_key_jwt: privateKeyJwt,
  tls_client_auth: tlsClientAuth,
  self_signed_tls_client_auth: selfSignedTlsClientAuth,
  none,
};

const SECRET_METHODS: ReadonlySet<ClientAuthMethod> = new Set(['client_secret_post', 'client_secret_basic']);

/** The method a client is registered for: `client_authentication_methods` wins over the endpoint method. */
export function registeredMethod(client: Client): ClientAuthMethod {
  const methods = client.client_authentication_methods;
  if (methods?.private_key_jwt) return 'private_key_jwt';
  if (methods?.tls_client_auth) return 'tls_client_auth';
  if (methods?.self_signed_tls_client_auth) return 'self_signed_tls_client_auth';
  return client.token_endpoint_auth_method;
}

function decodeBasic(header: string): { clientId: string; secret: string } {
  const encoded = header.slice('basic '.length).trim();
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (!/^[A-Za-z0-9+/=]+$/.test(encoded) || colon < 1) throw new InvalidClient(true);
  // RFC 6749 §2.3.1: both parts are form-urlencoded before encoding; most clients send them raw.
  const unescape = (value: string) => {
    try {
      return decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      return value;
    }
  };
  return { clientId: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
}

function clientIdFromAssertion(assertion: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}

/** Reads what the request presents. More than one way at once is a 400 (RFC 6749 §2.3). */
export function presentedCredentials(request: FastifyRequest, params: Record<string, unknown>, tenant: Tenant): PresentedCredentials {
  const str = (key: string) => (typeof params[key] === 'string' ? (params[key] as string) : undefined);
  const authorization = request.headers.authorization;
  const basic = authorization?.toLowerCase().startsWith('basic ') ? decodeBasic(authorization) : undefined;
  const secret = str('client_secret');
  const assertion = str('client_assertion');
  const assertionType = str('client_assertion_type');
  const ways = [basic, secret, assertion ?? assertionType].filter((w) => w !== undefined).length;
  if (ways > 1) throw new InvalidRequest('Use exactly one client authentication method per request');

  const bodyClientId = str('client_id');
  if (basic) {
    if (bodyClientId !== undefined && bodyClientId !== basic.clientId) throw new InvalidClient(true);
    return { method: 'client_secret_basic', clientId: basic.clientId, secret: basic.secret };
  }
  if (assertion !== undefined || assertionType !== undefined) {
    const clientId = bodyClientId ?? (assertion ? clientIdFromAssertion(assertion) : undefined);
    if (!clientId) throw new InvalidClient();
    return { method: 'private_key_jwt', clientId, ...(assertion && { assertion }), ...(assertionType && { assertionType }) };
  }
  if (!bodyClientId) throw new InvalidClient();
  if (secret !== undefined) return { method: 'client_secret_post', clientId: bodyClientId, secret };
  const certificate = edgeCertificate(request, tenant);
  // With a trusted certificate, the client's registration says which of the two mTLS methods applies.
  return certificate ? { method: 'tls_client_auth', clientId: bodyClientId, certificate } : { method: 'none', clientId: bodyClientId };
}

export interface ClientAuthOptions {
  /** Whether public clients (`none`) may use this endpoint or grant. */
  allowPublic: boolean;
  /** The URL of the endpoint, which a private_key_jwt `aud` may name besides the issuer. */
  endpointUrl: string;
}

export async function authenticateClient(
  request: FastifyRequest,
  params: Record<string, unknown>,
  services: Pick<Services, 'store' | 'sealer' | 'configCache'>,
  options: ClientAuthOptions,
): Promise<Client> {
  const tenant = request.tenant;
  const presented = presentedCredentials(request, params, tenant);
  const client = await services.configCache.client(tenant.id, presented.clientId);
  const basic = presented.method === 'client_secret_basic';
  if (!client) throw new InvalidClient(basic);
  // Named in the log before its credentials are checked: a failed exchange says which client it claimed to be.
  noteForLog(request, { client: { client_id: client.client_id, name: client.name } });
  const registered = registeredMethod(client);
  // Both mTLS methods arrive the same way; the registration decides which one is checked.
  const method = presented.method === 'tls_client_auth' && registered === 'self_signed_tls_client_auth' ? registered : presented.method;
  const eitherSecretMethod = SECRET_METHODS.has(registered) && SECRET_METHODS.has(presented.method);
  if (method !== registered && !eitherSecretMethod && !(presented.method === 'tls_client_auth' && registered === 'none')) {
    throw new InvalidClient(basic);
  }
  if (registered === 'none' && !options.allowPublic) throw new InvalidClient();
  // FAPI 2.0 SP §5.3.2.1-3 and -6: confidential clients only, authenticated by the level's method; §5.3.2.1-8:
  // a client assertion's `aud` is the issuer, so not this endpoint's URL (and a string: private-key-jwt.ts).
  const fapi = fapi2Profile(client);
  if (fapi && !fapi.clientAuthentication.includes(registered)) {
    throw new ProtocolError(401, 'invalid_client', `FAPI 2.0 (${fapi.level}): the application must authenticate with ${fapi.clientAuthentication.join(' or ')}`);
  }
  // A secret is checked the way it was sent (which decides the WWW-Authenticate of a failure).
  await AUTHENTICATORS[eitherSecretMethod ? presented.method : registered]({
    services,
    tenant,
    client,
    presented,
    audiences: fapi ? [...tenant.issuers] : [...tenant.issuers, options.endpointUrl],
  });
  return client;
}
