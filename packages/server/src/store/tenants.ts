/** Tenants and the host names that select them. */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { Database, TenantsTable } from './schema.js';
import type { AttackProtectionSettings } from '../protection/settings.js';
import type { MfaSettings } from '../mfa/policy.js';

/** Per-tenant overrides of one rate-limit bucket (see http/rate-limit/buckets.ts). */
export interface RateLimitSetting {
  /** Bucket size: how many requests may come at once. */
  capacity: number;
  /** Refill rate: tokens added per second. */
  per_second: number;
}

export interface TenantSettings {
  /** The hosted pages' look (/api/v2/branding; logo and primary colour also through /tenants/settings). */
  branding?: { logo_url?: string; primary_color?: string; page_background?: string; favicon_url?: string; font_url?: string };
  /** Contact details shown to people (/tenants/settings `support_email`, `support_url`). */
  support_email?: string;
  support_url?: string;
  /** The hosted pages' languages, the first being the default (login/texts.ts); English when unset. */
  enabled_locales?: string[];
  /** The hosted pages' own texts per prompt, language and screen (/api/v2/prompts/{prompt}/custom-text/{language}). */
  prompts?: { custom_text?: Record<string, Record<string, Record<string, Record<string, string>>>> };
  /** Tenant-level allowed logout URLs (used when logout names no client). */
  allowed_logout_urls?: string[];
  /** Rate limits by bucket name; missing buckets use the defaults. */
  rate_limits?: Record<string, RateLimitSetting>;
  /** Allow webhooks to http:// loopback and private addresses (development). */
  allow_insecure_webhooks?: boolean;
  /**
   * SHA-256 (hex) of the custom domain's API key that a TLS-terminating edge sends as `cname-api-key`; the
   * forwarded client-certificate headers count only when it matches.
   */
  custom_domain_api_key_sha256?: string;
  /** The audience used when a token request names none. */
  default_audience?: string;
  /** SSO session lifetimes in hours (Auth0's names): absolute, and since the last activity. */
  session_lifetime?: number;
  idle_session_lifetime?: number;
  /**
   * The tenant's default login route (Auth0's name): where pages that end a flow outside any application (a
   * finished password reset) send the person to log in, when the application has no `initiate_login_uri`.
   */
  default_redirection_uri?: string;
  /** The database connection the `password` grant and the hosted login page use when none is named. */
  default_directory?: string;
  /** Brute-force, breached-password and suspicious-IP settings, once changed through the Management API (protection/settings.ts). */
  attack_protection?: AttackProtectionSettings;
  /** Days tenant logs are kept (logs/writer.ts); 30 when never set. */
  log_retention_days?: number;
  /** RFC 9126 §6: every client of the tenant sends its authorization requests through /oauth/par. */
  require_pushed_authorization_requests?: boolean;
  /** The reference's `mtls`: `enable_endpoint_aliases` advertises mtls.<host> aliases (RFC 8705 §5) when an edge is trusted. */
  mtls?: { enable_endpoint_aliases?: boolean };
  /** The MFA policy and enabled factors, once changed through the Management API's Guardian routes (mfa/policy.ts). */
  mfa?: MfaSettings;
}

export interface Tenant {
  id: string;
  name: string;
  friendlyName: string;
  isDefault: boolean;
  /**
   * Without trailing slash: the URL the request came on. The tenant's own base URL, or one of its ready custom
   * domains when the request came on that host (tenancy/custom-domains.ts), as the reference does.
   */
  baseUrl: string;
  /** `baseUrl` plus `/`, as every token and the discovery document carry it. */
  issuer: string;
  /** The tenant's own base URL whatever host the request came on (the Management API's audience is here). */
  canonicalBaseUrl: string;
  /** Every issuer the tenant signs as (its own and its ready custom domains'): tokens from any of them validate. */
  issuers: string[];
  settings: TenantSettings;
}

export function tenantFromRow(row: TenantsTable): Tenant {
  return {
    id: row.id,
    name: row.name,
    friendlyName: row.friendly_name,
    isDefault: row.is_default === 1,
    baseUrl: row.base_url,
    issuer: `${row.base_url}/`,
    canonicalBaseUrl: row.base_url,
    issuers: [`${row.base_url}/`],
    settings: JSON.parse(row.settings) as TenantSettings,
  };
}

/** Host names are matched without port, case-insensitively, without a trailing dot. */
export function normalizeDomain(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) name = name.slice(0, name.indexOf(']') + 1);
  else if (name.includes(':') && name.indexOf(':') === name.lastIndexOf(':')) name = name.slice(0, name.indexOf(':'));
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

export interface NewTenant {
  id: string;
  name: string;
  friendlyName: string;
  baseUrl: string;
  isDefault?: boolean;
  settings?: TenantSettings;
  domains: string[];
}

export async function insertTenant(db: Kysely<Database>, tenant: NewTenant, now = Date.now()): Promise<Tenant> {
  const row: TenantsTable = {
    id: tenant.id,
    name: tenant.name,
    friendly_name: tenant.friendlyName,
    is_default: tenant.isDefault ? 1 : 0,
    base_url: tenant.baseUrl,
    settings: JSON.stringify(tenant.settings ?? {}),
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('tenants').values(row).execute();
    if (tenant.domains.length > 0) {
      await trx
        .insertInto('tenant_domains')
        .values(tenant.domains.map((d) => ({ domain: normalizeDomain(d), tenant_id: tenant.id, created_at: now })))
        .execute();
    }
  });
  return tenantFromRow(row);
}

export async function findTenantByDomain(db: Kysely<Database>, host: string): Promise<Tenant | undefined> {
  const row = await db
    .selectFrom('tenant_domains')
    .innerJoin('tenants', 'tenants.id', 'tenant_domains.tenant_id')
    .selectAll('tenants')
    .where('tenant_domains.domain', '=', normalizeDomain(host))
    .executeTakeFirst();
  return row ? tenantFromRow(row) : undefined;
}

export async function findTenantById(db: Kysely<Database>, id: string): Promise<Tenant | undefined> {
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? tenantFromRow(row) : undefined;
}

export async function findDefaultTenant(db: Kysely<Database>): Promise<Tenant | undefined> {
  const row = await db.selectFrom('tenants').selectAll().where('is_default', '=', 1).executeTakeFirst();
  return row ? tenantFromRow(row) : undefined;
}

export async function listTenantDomains(db: Kysely<Database>, tenantId: string): Promise<string[]> {
  const rows = await db.selectFrom('tenant_domains').select('domain').where('tenant_id', '=', tenantId).orderBy('domain').execute();
  return rows.map((r) => r.domain);
}

export interface TenantPatch {
  friendlyName?: string;
  baseUrl?: string;
  settings?: TenantSettings;
}

/**
 * Locks the tenant's row until the transaction `db` ends (PostgreSQL; SQLite has one writer at a time): for
 * read-modify-write of its settings, and to order stream writes with the changes that fan out to streams.
 */
export async function lockTenant(db: Kysely<Database>, id: string): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select id from tenants where id = ${id} for update`.execute(db);
}

export async function updateTenant(db: Kysely<Database>, id: string, patch: TenantPatch, now = Date.now()): Promise<void> {
  await db
    .updateTable('tenants')
    .set({
      updated_at: now,
      ...(patch.friendlyName !== undefined && { friendly_name: patch.friendlyName }),
      ...(patch.baseUrl !== undefined && { base_url: patch.baseUrl }),
      ...(patch.settings !== undefined && { settings: JSON.stringify(patch.settings) }),
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Rewrites the tenant's settings as `change` makes them from the stored ones, in one transaction that holds the
 * tenant's row: settings are one document, and writers of different parts of it run concurrently
 * (auth0-deploy-cli sends its attack-protection PATCHes and prompt texts three at a time). Reading the tenant
 * outside the lock and writing the whole document back would put back what the other writer just changed.
 * Undefined when the tenant does not exist; otherwise the tenant as written.
 */
export async function changeTenantSettings(
  db: Kysely<Database>,
  id: string,
  change: (settings: TenantSettings, tenant: Tenant) => TenantSettings,
  patch: Omit<TenantPatch, 'settings'> = {},
): Promise<Tenant | undefined> {
  const write = async (trx: Kysely<Database>): Promise<Tenant | undefined> => {
    await lockTenant(trx, id);
    const tenant = await findTenantById(trx, id);
    if (!tenant) return undefined;
    const settings = change(tenant.settings, tenant);
    await updateTenant(trx, id, { ...patch, settings });
    return { ...tenant, settings, ...(patch.friendlyName !== undefined && { friendlyName: patch.friendlyName }) };
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/** Makes `domain` select `tenantId`. Throws if another tenant owns it, so no host is ever shared. */
export async function addTenantDomain(db: Kysely<Database>, tenantId: string, domain: string, now = Date.now()): Promise<void> {
  const name = normalizeDomain(domain);
  const owner = await db.selectFrom('tenant_domains').select('tenant_id').where('domain', '=', name).executeTakeFirst();
  if (owner?.tenant_id === tenantId) return;
  if (owner) throw new Error(`domain ${name} belongs to another tenant`);
  await db.insertInto('tenant_domains').values({ domain: name, tenant_id: tenantId, created_at: now }).execute();
}

export async function deleteTenant(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('tenants').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
