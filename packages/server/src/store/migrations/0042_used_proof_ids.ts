/**
 * DPoP proof ids (`jti`) already used, for deployments whose processes share no memory and no Redis (PostgreSQL
 * nodes, or SQLite with several workers): the database is then what they share, so a proof used at one node is
 * refused at every other (RFC 9449 §11.1). Kept until the proof would be refused as too old anyway, then purged.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('used_proof_ids')
    /** `dpop:<tenant>:<jkt>:<jti>`. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('used_proof_ids_expiry').on('used_proof_ids').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('used_proof_ids').execute();
}
