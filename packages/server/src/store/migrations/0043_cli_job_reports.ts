/**
 * A job the CLI (`gatehouse users import` / `export`) took on and has not yet reported to its user. Ctrl-C, a
 * crash or a closed terminal leaves the job to any server on the same database, which finishes it; the same
 * command run again then finds it finished and reports it as if it had run it, instead of starting a new job
 * (an import would refuse every user as existing). Cleared once reported, so a later, deliberate run starts anew.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    /** 1 from when the CLI takes the job on until it has printed its summary; 0 for jobs of the Management API. */
    .addColumn('cli_report_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('cli_report_pending').execute();
}
