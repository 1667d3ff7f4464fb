/**
 * Pushed authorization requests (RFC 9126): what /oauth/par stores and /authorize takes back.
 *  - the request_uri is `urn:ietf:params:oauth:request_uri:` + 256 random bits; only its SHA-256 is stored;
 *  - it lives at most 60 s (FAPI 2.0 SP §5.3.2.2 asks for less than 600; the issue and RFC 9126 §2.2's example
 *    use 60), or the client's shorter `par_request_expiry`;
 *  - it is bound to the client that pushed it, and used once.
 */
import { randomSecret } from '../../crypto/ids.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { insertPushedAuthorizationRequest, takePushedAuthorizationRequest } from '../../store/pushed-authorization-requests.js';
import type { Tenant } from '../../store/tenants.js';
import type { RawParameters } from '../authorize/request.js';
import { hashToken } from '../user-tokens/refresh-tokens.js';

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
export const MAX_EXPIRY_SECONDS = 60;
const RANDOM_PART = /^[A-Za-z0-9_-]{43}$/;

/** The client's `par_request_expiry` when shorter than our ceiling (the reference accepts 10 to 600). */
export function requestUriLifetime(client: Client): number {
  const asked = client.par_request_expiry;
  return typeof asked === 'number' && asked > 0 ? Math.min(asked, MAX_EXPIRY_SECONDS) : MAX_EXPIRY_SECONDS;
}

export interface PushedRequest {
  clientId: string;
  params: RawParameters;
  dpopJkt: string | null;
}

export async function pushRequest(
  services: Pick<Services, 'store'>,
  tenant: Tenant,
  client: Client,
  params: RawParameters,
  dpopJkt: string | null,
  now = Date.now(),
): Promise<{ request_uri: string; expires_in: number }> {
  const random = randomSecret(32);
  const expiresIn = requestUriLifetime(client);
  await insertPushedAuthorizationRequest(services.store.db, {
    request_uri_hash: hashToken(random),
    tenant_id: tenant.id,
    client_id: client.client_id,
    params: JSON.stringify(params),
    dpop_jkt: dpopJkt,
    expires_at: now + expiresIn * 1000,
    created_at: now,
  });
  return { request_uri: `${REQUEST_URI_PREFIX}${random}`, expires_in: expiresIn };
}

/** Takes (and so uses up) the request a request_uri names; undefined when unknown, used, or expired. */
export async function takePushedRequest(services: Pick<Services, 'store'>, tenant: Tenant, requestUri: string, now = Date.now()): Promise<PushedRequest | undefined> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined;
  const random = requestUri.slice(REQUEST_URI_PREFIX.length);
  if (!RANDOM_PART.test(random)) return undefined;
  const row = await takePushedAuthorizationRequest(services.store.db, tenant.id, hashToken(random));
  if (!row || row.expires_at <= now) return undefined;
  return { clientId: row.client_id, params: JSON.parse(row.params) as RawParameters, dpopJkt: row.dpop_jkt };
}
