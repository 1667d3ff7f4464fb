/**
 * RFC 8705 §5 endpoint aliases: `mtls.<host>` serves the same tenant (tenancy/tenant-resolver.ts) so that an edge
 * can ask for a client certificate there only. A request that came through the alias addressed the alias's URL,
 * which is what a DPoP proof's `htu` names (RFC 9449 §4.3 check 9).
 */
import type { FastifyRequest } from 'fastify';
import { normalizeDomain, type Tenant } from '../store/tenants.js';

/** `baseUrl` with `mtls.` before its host (the reference's "mtls.<your custom domain>"), path kept. */
export function mtlsAliasBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.hostname = `mtls.${url.hostname}`;
  return `${url.origin}${url.pathname.replace(/\/$/, '')}`;
}

/** The aliases are served only when an edge is trusted (the custom domain API key) and the tenant turned them on. */
export function mtlsAliasesEnabled(tenant: Tenant): boolean {
  return Boolean(tenant.settings.custom_domain_api_key_sha256) && tenant.settings.mtls?.enable_endpoint_aliases === true;
}

/** The base URL the client addressed: the alias's when the request came through `mtls.<host>`, else the tenant's. */
export function addressedBaseUrl(request: FastifyRequest): string {
  const tenant = request.tenant;
  if (!mtlsAliasesEnabled(tenant)) return tenant.baseUrl;
  const alias = mtlsAliasBaseUrl(tenant.baseUrl);
  return normalizeDomain(request.headers.host ?? '') === normalizeDomain(new URL(alias).host) ? alias : tenant.baseUrl;
}
