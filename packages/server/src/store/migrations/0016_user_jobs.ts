/**
 * Jobs (the reference's /api/v2/jobs): user imports, user exports and verification emails. A job is a row that
 * any server process may claim with a lease; its work sits beside it in the database, so a job survives a crash
 * and resumes on whichever node claims it next:
 *  - an import's file, parsed at upload into batches of users; processing a batch deletes it in the same
 *    transaction that writes its users, so no batch is ever applied twice;
 *  - an export's output, gzip members written one part at a time with the cursor they end at;
 *  - the users an import refused, with their errors (hashes redacted).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An export reads a tenant's users in user id order, a page at a time from where the last one ended; without
  // this index both dialects sort every user of the tenant for each page.
  await db.schema.createIndex('users_tenant_user_id').on('users').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('jobs')
    /** `job_` + 16 alphanumerics. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** users_import | users_export | verification_email */
    .addColumn('type', 'text', (c) => c.notNull())
    /** uploading (an import's file is still arriving; never claimed) | pending | processing | completed | failed */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text')
    .addColumn('external_id', 'text')
    /** JSON: what the job was asked to do (upsert, format, fields, limit, the event context of its creator). */
    .addColumn('options', 'text', (c) => c.notNull())
    /** SHA-256 (hex) of an import's file, so the CLI can find and resume the job of the same file. */
    .addColumn('source_digest', 'text')
    /** Users in the file (import) or to write (export). */
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('inserted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    /** An export's position: the last user id written. */
    .addColumn('cursor', 'text')
    /** Why a job failed as a whole (a file that is not a JSON array, say). */
    .addColumn('status_details', 'text')
    /** The key that signs an export's download links, sealed. */
    .addColumn('download_key_sealed', 'text')
    /** Set while a process works on the job; `lease_until` is then when others may take it over. */
    .addColumn('lease_id', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'lease_until']).execute();
  await db.schema.createIndex('jobs_tenant').on('jobs').columns(['tenant_id', 'type', 'status']).execute();

  await db.schema
    .createTable('job_import_batches')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    /** Position of the batch's first user in the file (0-based), for the errors. */
    .addColumn('first_index', 'integer', (c) => c.notNull())
    /** JSON array of the users as the file gave them. */
    .addColumn('users', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_import_batches_pk', ['job_id', 'seq'])
    .execute();

  await db.schema
    .createTable('job_errors')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    /** Position of the user in the file (0-based). */
    .addColumn('position', 'integer', (c) => c.notNull())
    /** JSON: the user as the file gave it, with password hashes and keys replaced by `*****`. */
    .addColumn('user', 'text', (c) => c.notNull())
    /** JSON array of { code, message, path }. */
    .addColumn('errors', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_errors_pk', ['job_id', 'position'])
    .execute();

  await db.schema
    .createTable('job_export_parts')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    /** One gzip member (base64): the parts concatenated are the export file. */
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_export_parts_pk', ['job_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_export_parts').execute();
  await db.schema.dropTable('job_errors').execute();
  await db.schema.dropTable('job_import_batches').execute();
  await db.schema.dropTable('jobs').execute();
  await db.schema.dropIndex('users_tenant_user_id').execute();
}
