/**
 * Custom domains as the tenancy sees them: a request that comes on a ready custom domain sees its tenant with
 * that host as base URL and issuer (discovery, tokens, hosted pages and redirects follow the host, as the
 * reference does for custom domains), while tokens issued on any of the tenant's hosts validate on all of them.
 *
 * The scheme and port of a custom domain's URL are those of the tenant's own base URL: a deployment serves all
 * its host names the same way (behind one TLS edge, or on one port in development), and nothing taken from the
 * request but the matched host name ends up in an issuer.
 *
 * Verification: a domain is ready once it resolves (DNS, through the system resolver) to an address of this
 * server (its network interfaces, or what the tenant's own host name resolves to), or once an operator marks it
 * (`gatehouse custom-domains ready DOMAIN`).
 */
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import type { Kysely } from 'kysely';
import { readyCustomDomainNames } from '../store/custom-domains.js';
import type { Database } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';

export function customDomainBaseUrl(canonicalBaseUrl: string, domain: string): string {
  const own = new URL(canonicalBaseUrl);
  return `${own.protocol}//${domain}${own.port ? `:${own.port}` : ''}`;
}

/** The tenant as a request on `host` (normalised) sees it. */
export async function tenantOnHost(db: Kysely<Database>, tenant: Tenant, host: string): Promise<Tenant> {
  const domains = await readyCustomDomainNames(db, tenant.id);
  if (domains.length === 0) return tenant;
  const issuers = [`${tenant.canonicalBaseUrl}/`, ...domains.map((d) => `${customDomainBaseUrl(tenant.canonicalBaseUrl, d)}/`)];
  if (!domains.includes(host)) return { ...tenant, issuers };
  const baseUrl = customDomainBaseUrl(tenant.canonicalBaseUrl, host);
  return { ...tenant, baseUrl, issuer: `${baseUrl}/`, issuers };
}

async function addressesOf(name: string): Promise<string[]> {
  try {
    return (await lookup(name, { all: true })).map((a) => a.address);
  } catch {
    return [];
  }
}

/** Whether `domain` resolves to this server. */
export async function resolvesHere(domain: string, canonicalBaseUrl: string): Promise<boolean> {
  const addresses = await addressesOf(domain);
  if (addresses.length === 0) return false;
  const own = new Set<string>(await addressesOf(new URL(canonicalBaseUrl).hostname));
  for (const list of Object.values(os.networkInterfaces())) for (const i of list ?? []) own.add(i.address);
  return addresses.every((address) => own.has(address));
}
