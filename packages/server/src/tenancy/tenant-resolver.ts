/**
 * Host header → tenant. Looked up in the database and cached briefly, so a domain added through the
 * Management API (or by another node) is served within CACHE_MS. An unknown host is a 404, never a fallback
 * to some other tenant.
 */
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { TenantNotFound } from '../http/errors.js';
import type { Database } from '../store/schema.js';
import { findTenantByDomain, normalizeDomain, type Tenant } from '../store/tenants.js';
import { tenantOnHost } from './custom-domains.js';

const CACHE_MS = 5_000;
const MAX_CACHED = 10_000;

export class TenantResolver {
  readonly #cache = new Map<string, { tenant: Tenant | undefined; at: number }>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The cached answer for `host`, when there is a fresh one (no promise on the hot path). */
  cached(host: string): { tenant: Tenant | undefined } | undefined {
    const hit = this.#cache.get(normalizeDomain(host));
    return hit && Date.now() - hit.at < CACHE_MS ? hit : undefined;
  }

  async resolve(host: string): Promise<Tenant | undefined> {
    const domain = normalizeDomain(host);
    const hit = this.#cache.get(domain);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.tenant;
    let found = await findTenantByDomain(this.db, domain);
    let served = domain;
    // RFC 8705 §5 aliases: mtls.<host> is the tenant of <host>, same issuer and URLs, when it turned them on.
    if (!found && domain.startsWith('mtls.')) {
      const aliased = await findTenantByDomain(this.db, domain.slice('mtls.'.length));
      if (aliased?.settings.mtls?.enable_endpoint_aliases === true && aliased.settings.custom_domain_api_key_sha256) {
        found = aliased;
        served = domain.slice('mtls.'.length);
      }
    }
    // On a custom domain, the tenant's URLs and issuer are that host's (tenancy/custom-domains.ts).
    const tenant = found && (await tenantOnHost(this.db, found, served));
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
    this.#cache.set(domain, { tenant, at: Date.now() });
    return tenant;
  }

  /** Forget everything, e.g. after this process changed a tenant. */
  invalidate(): void {
    this.#cache.clear();
  }
}

export function registerTenancy(app: FastifyInstance, resolver: TenantResolver): void {
  app.decorateRequest('tenant', undefined as unknown as Tenant);
  // A callback hook: a cached tenant (nearly every request) is set without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.tenantless) return done();
    const host = request.headers.host ?? '';
    const settle = (tenant: Tenant | undefined) => {
      if (!tenant) return done(new TenantNotFound(host));
      request.tenant = tenant;
      done();
    };
    const hit = host ? resolver.cached(host) : undefined;
    if (hit || !host) return settle(hit?.tenant);
    resolver.resolve(host).then(settle, (err: unknown) => done(err as Error));
  });
}
