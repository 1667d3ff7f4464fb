/**
 * Custom domains: extra host names of a tenant. A domain is stored when it is configured and selects its tenant
 * (a row in tenant_domains, the existing Host-based tenancy) only once it is ready; deleting it takes the host
 * name away again in the same transaction.
 */
import type { Kysely } from 'kysely';
import type { CustomDomainsTable, Database } from './schema.js';

export type CustomDomainStatus = 'pending_verification' | 'ready';

export interface CustomDomainSettings {
  tls_policy?: string;
  custom_client_ip_header?: string | null;
  domain_metadata?: Record<string, string>;
}

export interface CustomDomain {
  id: string;
  tenantId: string;
  domain: string;
  primary: boolean;
  status: CustomDomainStatus;
  verificationRecord: string;
  settings: CustomDomainSettings;
  verifiedAt: number | null;
  createdAt: number;
}

function fromRow(row: CustomDomainsTable): CustomDomain {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    domain: row.domain,
    primary: row.is_primary === 1,
    status: row.status as CustomDomainStatus,
    verificationRecord: row.verification_record,
    settings: JSON.parse(row.settings) as CustomDomainSettings,
    verifiedAt: row.verified_at === null ? null : Number(row.verified_at),
    createdAt: Number(row.created_at),
  };
}

export async function insertCustomDomain(db: Kysely<Database>, domain: CustomDomain): Promise<void> {
  await db
    .insertInto('custom_domains')
    .values({
      id: domain.id,
      tenant_id: domain.tenantId,
      domain: domain.domain,
      is_primary: domain.primary ? 1 : 0,
      status: domain.status,
      verification_record: domain.verificationRecord,
      settings: JSON.stringify(domain.settings),
      verified_at: domain.verifiedAt,
      created_at: domain.createdAt,
    })
    .execute();
}

export async function listCustomDomains(db: Kysely<Database>, tenantId: string): Promise<CustomDomain[]> {
  const rows = await db.selectFrom('custom_domains').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  return rows.map(fromRow);
}

/** The host names of a tenant's ready custom domains (what the tenant resolver needs, and nothing more). */
export async function readyCustomDomainNames(db: Kysely<Database>, tenantId: string): Promise<string[]> {
  const rows = await db.selectFrom('custom_domains').select('domain').where('tenant_id', '=', tenantId).where('status', '=', 'ready').orderBy('domain').execute();
  return rows.map((r) => r.domain);
}

export async function findCustomDomain(db: Kysely<Database>, tenantId: string, id: string): Promise<CustomDomain | undefined> {
  const row = await db.selectFrom('custom_domains').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findCustomDomainByName(db: Kysely<Database>, domain: string): Promise<CustomDomain | undefined> {
  const row = await db.selectFrom('custom_domains').selectAll().where('domain', '=', domain).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Whether any tenant already answers on `domain` (its own host names or a configured custom domain). */
export async function domainTaken(db: Kysely<Database>, domain: string): Promise<boolean> {
  const host = await db.selectFrom('tenant_domains').select('domain').where('domain', '=', domain).executeTakeFirst();
  return host !== undefined || (await findCustomDomainByName(db, domain)) !== undefined;
}

export async function updateCustomDomainSettings(db: Kysely<Database>, id: string, settings: CustomDomainSettings): Promise<void> {
  await db.updateTable('custom_domains').set({ settings: JSON.stringify(settings) }).where('id', '=', id).execute();
}

/** Ready: the domain now selects its tenant. Idempotent. */
export async function markCustomDomainReady(db: Kysely<Database>, domain: CustomDomain, now = Date.now()): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('custom_domains').set({ status: 'ready', verified_at: now }).where('id', '=', domain.id).execute();
    const existing = await trx.selectFrom('tenant_domains').select('tenant_id').where('domain', '=', domain.domain).executeTakeFirst();
    if (!existing) await trx.insertInto('tenant_domains').values({ domain: domain.domain, tenant_id: domain.tenantId, created_at: now }).execute();
  });
}

export async function deleteCustomDomain(db: Kysely<Database>, domain: CustomDomain): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('custom_domains').where('id', '=', domain.id).execute();
    await trx.deleteFrom('tenant_domains').where('domain', '=', domain.domain).where('tenant_id', '=', domain.tenantId).execute();
  });
}
