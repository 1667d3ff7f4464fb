/**
 * Custom domains (extra host names of a tenant, /api/v2/custom-domains), the tenant's own email provider
 * (/api/v2/emails/provider) and its edited email templates (/api/v2/email-templates/{name}).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('custom_domains')
    /** `cd_` + 16 alphanumerics. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** Normalised (lower case, no port, no trailing dot); unique across tenants, like tenant_domains. */
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('is_primary', 'integer', (c) => c.notNull())
    /** pending_verification | ready. Only a ready domain is in tenant_domains (selects the tenant). */
    .addColumn('status', 'text', (c) => c.notNull())
    /** The TXT record value that proves ownership (shown in `verification.methods`). */
    .addColumn('verification_record', 'text', (c) => c.notNull())
    /** JSON: tls_policy, custom_client_ip_header, domain_metadata. */
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('custom_domains_tenant').on('custom_domains').column('tenant_id').execute();

  await db.schema
    .createTable('email_providers')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    /** `smtp`: the only provider offered. */
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('default_from_address', 'text')
    /** JSON: settings that are not secret (none for SMTP today; kept for the reference's `settings`). */
    .addColumn('settings', 'text', (c) => c.notNull())
    /** JSON of {smtp_host, smtp_port, smtp_user, smtp_pass}, sealed: credentials are write-only. */
    .addColumn('credentials_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('email_templates')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** verify_email, reset_email, welcome_email, … (messaging/email-templates.ts). */
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text')
    .addColumn('subject', 'text')
    .addColumn('result_url', 'text')
    .addColumn('url_lifetime_in_seconds', 'integer')
    .addColumn('include_email_in_redirect', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_templates_pk', ['tenant_id', 'template'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_templates').execute();
  await db.schema.dropTable('email_providers').execute();
  await db.schema.dropTable('custom_domains').execute();
}
