/** A tenant's own email provider (SMTP) and its edited email templates. */
import type { Kysely } from 'kysely';
import { updateAsRead } from './concurrent-change.js';
import type { Database, EmailProvidersTable, EmailTemplatesTable } from './schema.js';

export type EmailProviderRow = EmailProvidersTable;
export type EmailTemplateRow = EmailTemplatesTable;

export async function findEmailProvider(db: Kysely<Database>, tenantId: string): Promise<EmailProviderRow | undefined> {
  return db.selectFrom('email_providers').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function insertEmailProvider(db: Kysely<Database>, row: EmailProviderRow): Promise<void> {
  await db.insertInto('email_providers').values(row).execute();
}

/** Writes the provider only while it is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateEmailProviderAsRead(db: Kysely<Database>, row: EmailProviderRow, readAt: number): Promise<boolean> {
  const { tenant_id, ...fields } = row;
  return updateAsRead(db, 'email_providers', { tenant_id }, readAt, fields);
}

export async function deleteEmailProvider(db: Kysely<Database>, tenantId: string): Promise<boolean> {
  const result = await db.deleteFrom('email_providers').where('tenant_id', '=', tenantId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function findEmailTemplate(db: Kysely<Database>, tenantId: string, template: string): Promise<EmailTemplateRow | undefined> {
  return db.selectFrom('email_templates').selectAll().where('tenant_id', '=', tenantId).where('template', '=', template).executeTakeFirst();
}

/** Inserts or replaces the template (PUT and POST write whole templates; PATCH reads, merges, and writes). */
/** Creates or replaces the template in one statement, so that two saves at once cannot both insert. */
export async function saveEmailTemplate(db: Kysely<Database>, row: EmailTemplateRow): Promise<void> {
  const { tenant_id: _tenant, template: _template, ...fields } = row;
  await db
    .insertInto('email_templates')
    .values(row)
    .onConflict((conflict) => conflict.columns(['tenant_id', 'template']).doUpdateSet(fields))
    .execute();
}

/** Writes the template only while it is still at the version `readAt` (store/concurrent-change.ts). */
export async function updateEmailTemplateAsRead(db: Kysely<Database>, row: EmailTemplateRow, readAt: number): Promise<boolean> {
  const { tenant_id, template, created_at: _created, ...fields } = row;
  return updateAsRead(db, 'email_templates', { tenant_id, template }, readAt, fields);
}
