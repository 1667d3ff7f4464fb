/** Client grants keep their documented options (organization_usage, subject_type, …) as JSON, as clients do. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('client_grants')
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('client_grants').dropColumn('properties').execute();
}
