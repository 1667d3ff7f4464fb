/**
 * The tenant's global client, as the reference lists it in GET /api/v2/clients: `global: true`, named
 * "All Applications", the holder of tenant-wide application settings. Tools find it there (auth0-deploy-cli
 * reads its `custom_login_page` to dump the login page, and refuses to run without it).
 *
 * Here it is a view of the tenant, not a stored client: it has no secret, no grant types and no callbacks, so it
 * can obtain no token of any kind. The contract's rule for the Management API is unchanged by it: a Management
 * token comes from a client of this tenant that holds a grant for the API (management/authenticate.ts), and the
 * global client is never one. It is read-only (PATCH, DELETE and rotate-secret answer 403
 * operation_not_supported): the one setting tools write on it, a custom login page's HTML, is not offered, since
 * the hosted pages are rendered by this server (their texts and branding are /api/v2/prompts and /api/v2/branding).
 */
import { createHash } from 'node:crypto';
import type { Tenant } from '../store/tenants.js';

export const GLOBAL_CLIENT_NAME = 'All Applications';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Stable per tenant (the same after every restart, on every node) and shaped like any client id: 32 alphanumerics. */
export function globalClientId(tenant: Pick<Tenant, 'id'>): string {
  const digest = createHash('sha256').update(`gatehouse global client\0${tenant.id}`).digest();
  return Array.from(digest.subarray(0, 32), (byte) => ALPHABET[byte % ALPHABET.length]).join('');
}

export function isGlobalClientId(tenant: Pick<Tenant, 'id'>, clientId: string): boolean {
  return clientId === globalClientId(tenant);
}

export function presentGlobalClient(tenant: Tenant): Record<string, unknown> {
  return {
    client_id: globalClientId(tenant),
    tenant: tenant.name,
    global: true,
    name: GLOBAL_CLIENT_NAME,
    is_first_party: true,
    callbacks: [],
    allowed_origins: [],
    web_origins: [],
    allowed_logout_urls: [],
    grant_types: [],
    // No custom login page HTML: the hosted login page is this server's own.
    custom_login_page_on: false,
    sso_disabled: false,
    cross_origin_authentication: false,
    oidc_conformant: true,
  };
}
