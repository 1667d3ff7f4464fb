/**
 * /api/v2/custom-domains (the reference's Custom Domains): list, create (201), get, update, delete (204), and
 * POST /{id}/verify. A custom domain is an extra host name of the tenant; once `ready` the tenant answers on
 * it through the Host-based tenancy, with that host as issuer (tenancy/custom-domains.ts).
 *
 * Where the reference is silent, or where this server differs:
 *  - only `self_managed_certs`: TLS is the operator's edge's business (this server provisions no
 *    certificates), so `auth0_managed_certs` is a 400 that says so;
 *  - verification: `ready` once the domain resolves to this server, or its TXT record
 *    `_gatehouse-verification.<domain>` holds the record shown, or an operator marks it
 *    (`gatehouse custom-domains ready DOMAIN`);
 *  - the first verification of a tenant's first domain issues the tenant's `cname_api_key` (shown once): the
 *    key an edge sends as `cname-api-key` with forwarded client certificates (mTLS client authentication);
 *  - `custom_client_ip_header` is refused: client addresses come from GATEHOUSE_TRUSTED_PROXIES here, and a
 *    stored header that nothing reads would pretend otherwise; `tls_policy` is `recommended`, the only value;
 *  - a host name any tenant already answers on is a 409; a tenant has at most MAX_CUSTOM_DOMAINS.
 */
import { createHash, randomBytes } from 'node:crypto';
import { resolveTxt } from 'node:dns/promises';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { randomAlphanumeric } from '../crypto/ids.js';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import {
  deleteCustomDomain,
  domainTaken,
  findCustomDomain,
  insertCustomDomain,
  listCustomDomains,
  markCustomDomainReady,
  updateCustomDomainSettings,
  type CustomDomain,
} from '../store/custom-domains.js';
import { normalizeDomain, changeTenantSettings } from '../store/tenants.js';
import { resolvesHere } from '../tenancy/custom-domains.js';
import { operation } from './operation.js';

export const MAX_CUSTOM_DOMAINS = 20;
const TXT_PREFIX = '_gatehouse-verification.';

/**
 * A DNS host name (RFC 1123), not an IP address. One label is allowed: a self-hosted server may well be reached
 * by an intranet name.
 */
const HOST_NAME = '^(?=.{1,253}$)(?!\\d+\\.\\d+\\.\\d+\\.\\d+\\.?$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?$';

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }) });
/**
 * Read-only: the host an edge forwards to is always the tenant's own. Accepted and ignored on writes because tools
 * that copy what they read send it back (auth0-deploy-cli strips `status` and `verification`, not this), and
 * between environments it names the other server, so it cannot be required to match.
 */
const OriginDomainName = Type.Optional(Type.String({ maxLength: 253, description: 'Read-only; ignored when sent' }));
const Metadata = Type.Record(Type.String({ maxLength: 255 }), Type.String({ maxLength: 255 }), { maxProperties: 10 });

const CreateBody = Type.Object(
  {
    domain: Type.String({ minLength: 1, maxLength: 253, pattern: HOST_NAME }),
    type: Type.Union([Type.Literal('self_managed_certs'), Type.Literal('auth0_managed_certs')]),
    verification_method: Type.Optional(Type.Literal('txt')),
    tls_policy: Type.Optional(Type.Literal('recommended')),
    custom_client_ip_header: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 64 })])),
    domain_metadata: Type.Optional(Metadata),
    origin_domain_name: OriginDomainName,
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  {
    tls_policy: Type.Optional(Type.Literal('recommended')),
    custom_client_ip_header: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 64 })])),
    domain_metadata: Type.Optional(Metadata),
    origin_domain_name: OriginDomainName,
  },
  { additionalProperties: false },
);

const CustomDomainView = Type.Object({
  custom_domain_id: Type.String(),
  domain: Type.String(),
  primary: Type.Boolean(),
  status: Type.Union([Type.Literal('pending_verification'), Type.Literal('ready')]),
  type: Type.Literal('self_managed_certs'),
  origin_domain_name: Type.String({ description: 'The host name an edge forwards this domain to: the tenant’s own' }),
  verification: Type.Object({
    methods: Type.Array(Type.Object({ name: Type.Literal('txt'), record: Type.String(), domain: Type.String() })),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
    last_verified_at: Type.Optional(Type.String({ format: 'date-time' })),
  }),
  tls_policy: Type.Literal('recommended'),
  custom_client_ip_header: Type.Null(),
  domain_metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
});
type CustomDomainView = Static<typeof CustomDomainView>;
const VerifiedView = Type.Object({
  ...CustomDomainView.properties,
  cname_api_key: Type.Optional(Type.String({ description: 'Shown once, when the tenant’s first domain is first verified' })),
});

function present(domain: CustomDomain, canonicalBaseUrl: string): CustomDomainView {
  return {
    custom_domain_id: domain.id,
    domain: domain.domain,
    primary: domain.primary,
    status: domain.status,
    type: 'self_managed_certs',
    origin_domain_name: new URL(canonicalBaseUrl).hostname,
    verification: {
      methods: [{ name: 'txt', record: domain.verificationRecord, domain: `${TXT_PREFIX}${domain.domain}` }],
      status: domain.status === 'ready' ? 'verified' : 'pending',
      ...(domain.verifiedAt !== null && { last_verified_at: new Date(domain.verifiedAt).toISOString() }),
    },
    tls_policy: 'recommended',
    custom_client_ip_header: null,
    ...(domain.settings.domain_metadata && { domain_metadata: domain.settings.domain_metadata }),
  };
}

class CustomDomainNotFound extends NotFound {
  constructor() {
    super('The custom domain does not exist', 'inexistent_custom_domain');
  }
}

function refuseClientIpHeader(value: string | null | undefined): void {
  if (value !== undefined && value !== null) {
    throw new InvalidInput('body', 'custom_client_ip_header: not offered; client addresses come from the trusted proxies (GATEHOUSE_TRUSTED_PROXIES)');
  }
}

async function txtRecordHolds(domain: CustomDomain): Promise<boolean> {
  try {
    return (await resolveTxt(`${TXT_PREFIX}${domain.domain}`)).some((chunks) => chunks.join('') === domain.verificationRecord);
  } catch {
    return false;
  }
}

export function registerCustomDomains(api: App, services: Services): void {
  const db = services.store.db;
  const require = async (tenantId: string, id: string) => {
    const domain = await findCustomDomain(db, tenantId, id);
    if (!domain) throw new CustomDomainNotFound();
    return domain;
  };
  const notFound = { 404: 'inexistent_custom_domain' };

  api.get('/custom-domains', {
    ...operation(['read:custom_domains'], { summary: 'List the custom domains', response: { 200: Type.Array(CustomDomainView) } }),
    handler: async (request) => (await listCustomDomains(db, request.tenant.id)).map((d) => present(d, request.tenant.canonicalBaseUrl)),
  });

  api.post('/custom-domains', {
    ...operation(['create:custom_domains'], {
      summary: 'Configure a custom domain (pending verification)',
      body: CreateBody,
      response: {
        201: CustomDomainView,
        ...errorResponses('management', { 409: 'conflict: a tenant already answers on this host name, or the tenant has the most domains it may' }),
      },
    }),
    handler: async (request, reply) => {
      const { tenant, body } = request;
      if (body.type !== 'self_managed_certs') {
        throw new InvalidInput('body', 'type: only self_managed_certs is offered (TLS is terminated by your own edge; this server provisions no certificates)');
      }
      refuseClientIpHeader(body.custom_client_ip_header);
      const name = normalizeDomain(body.domain);
      if (await domainTaken(db, name)) throw new Conflict(`A tenant already answers on ${name}, or it is configured as a custom domain`);
      const existing = await listCustomDomains(db, tenant.id);
      if (existing.length >= MAX_CUSTOM_DOMAINS) throw new Conflict(`A tenant may have at most ${MAX_CUSTOM_DOMAINS} custom domains`);
      const domain: CustomDomain = {
        id: `cd_${randomAlphanumeric(16)}`,
        tenantId: tenant.id,
        domain: name,
        primary: existing.length === 0,
        status: 'pending_verification',
        verificationRecord: `gatehouse-domain-verification=${randomAlphanumeric(32)}`,
        settings: { ...(body.domain_metadata && { domain_metadata: body.domain_metadata }) },
        verifiedAt: null,
        createdAt: Date.now(),
      };
      try {
        await insertCustomDomain(db, domain);
      } catch (err) {
        // Two creates racing on one name: the unique constraint decides.
        if (await domainTaken(db, name)) throw new Conflict(`A tenant already answers on ${name}, or it is configured as a custom domain`);
        throw err;
      }
      return reply.code(201).send(present(domain, tenant.canonicalBaseUrl));
    },
  });

  api.get('/custom-domains/:id', {
    ...operation(['read:custom_domains'], {
      summary: 'Get a custom domain',
      params: Params,
      response: { 200: CustomDomainView, ...errorResponses('management', notFound) },
    }),
    handler: async (request) => present(await require(request.tenant.id, request.params.id), request.tenant.canonicalBaseUrl),
  });

  api.patch('/custom-domains/:id', {
    ...operation(['update:custom_domains'], {
      summary: 'Update a custom domain’s settings',
      params: Params,
      body: UpdateBody,
      response: { 200: CustomDomainView, ...errorResponses('management', notFound) },
    }),
    handler: async (request) => {
      const domain = await require(request.tenant.id, request.params.id);
      refuseClientIpHeader(request.body.custom_client_ip_header);
      const settings = { ...domain.settings, ...(request.body.domain_metadata && { domain_metadata: request.body.domain_metadata }) };
      await updateCustomDomainSettings(db, domain.id, settings);
      return present({ ...domain, settings }, request.tenant.canonicalBaseUrl);
    },
  });

  api.delete('/custom-domains/:id', {
    ...operation(['delete:custom_domains'], {
      summary: 'Delete a custom domain: the tenant no longer answers on it',
      params: Params,
      response: { 204: noContent('Deleted'), ...errorResponses('management', notFound) },
    }),
    handler: async (request, reply) => {
      await deleteCustomDomain(db, await require(request.tenant.id, request.params.id));
      services.tenants.invalidate();
      return reply.code(204).send();
    },
  });

  api.post('/custom-domains/:id/verify', {
    ...operation(['create:custom_domains', 'update:custom_domains'], {
      summary: 'Verify a custom domain: ready once it resolves to this server or its TXT record holds',
      params: Params,
      response: { 200: VerifiedView, ...errorResponses('management', notFound) },
    }),
    handler: async (request) => {
      const tenant = request.tenant;
      let domain = await require(tenant.id, request.params.id);
      let cnameApiKey: string | undefined;
      if (domain.status !== 'ready' && ((await resolvesHere(domain.domain, tenant.canonicalBaseUrl)) || (await txtRecordHolds(domain)))) {
        await markCustomDomainReady(db, domain);
        services.tenants.invalidate();
        domain = (await require(tenant.id, domain.id));
        // Issued once: under the tenant's lock, so two verifications racing cannot both hand out a key.
        const key = randomBytes(32).toString('base64url');
        let issued = false;
        await changeTenantSettings(db, tenant.id, (settings) => {
          if (settings.custom_domain_api_key_sha256) return settings;
          issued = true;
          return { ...settings, custom_domain_api_key_sha256: createHash('sha256').update(key, 'utf8').digest('hex') };
        });
        if (issued) {
          cnameApiKey = key;
          services.tenants.invalidate();
        }
      }
      return { ...present(domain, tenant.canonicalBaseUrl), ...(cnameApiKey && { cname_api_key: cnameApiKey }) };
    },
  });
}
