/**
 * Signing keys of a tenant. At any time a tenant has one `current` key (signs), one `next` key (published
 * ahead, so verifiers have it before it signs) and at most one `previous` key (still published, so tokens signed
 * before the last rotation keep verifying). Rotation moves each one step along and revokes the oldest.
 */
import type { Kysely } from 'kysely';
import type { Database, SigningKeyStatus, SigningKeysTable } from './schema.js';

export type SigningKeyRow = Omit<SigningKeysTable, 'version'> & { version: number };
export type NewSigningKey = Pick<SigningKeysTable, 'kid' | 'tenant_id' | 'alg' | 'public_jwk' | 'private_key_sealed'>;

export const PUBLISHED_STATUSES: readonly SigningKeyStatus[] = ['current', 'next', 'previous'];

export async function listPublishedKeys(db: Kysely<Database>, tenantId: string): Promise<SigningKeyRow[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', PUBLISHED_STATUSES)
    .orderBy('created_at', 'asc')
    .execute();
  // Order by role, not age: current first, so verifiers that take the first key still work.
  const rank: Record<string, number> = { current: 0, next: 1, previous: 2 };
  return rows.sort((a, b) => (rank[a.status] ?? 9) - (rank[b.status] ?? 9));
}

export async function listAllKeys(db: Kysely<Database>, tenantId: string): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'asc').execute();
}

/** Inserts the first current and next keys of a tenant, unless it has a current key already. */
export async function insertInitialKeys(
  db: Kysely<Database>,
  current: NewSigningKey,
  next: NewSigningKey,
  now = Date.now(),
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await lockTenant(trx, current.tenant_id, now);
    const existing = await trx
      .selectFrom('signing_keys')
      .select('kid')
      .where('tenant_id', '=', current.tenant_id)
      .where('status', '=', 'current')
      .executeTakeFirst();
    if (existing) return false;
    await trx
      .insertInto('signing_keys')
      .values([
        { ...current, status: 'current', created_at: now, activated_at: now, retired_at: null },
        { ...next, status: 'next', created_at: now, activated_at: null, retired_at: null },
      ])
      .execute();
    return true;
  });
}

/**
 * One rotation step: previous → revoked, current → previous, next → current, and `newNext` becomes next.
 * Returns the kid that now signs.
 */
export async function rotateKeys(db: Kysely<Database>, newNext: NewSigningKey, now = Date.now()): Promise<string> {
  const tenantId = newNext.tenant_id;
  return db.transaction().execute(async (trx) => {
    await lockTenant(trx, tenantId, now);
    const keys = await trx
      .selectFrom('signing_keys')
      .select(['kid', 'status'])
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', PUBLISHED_STATUSES)
      .execute();
    const next = keys.find((k) => k.status === 'next');
    if (!next) throw new Error(`tenant ${tenantId} has no next signing key to promote`);
    const step = (from: SigningKeyStatus, to: SigningKeyStatus, extra: Partial<Pick<SigningKeysTable, 'activated_at' | 'retired_at'>> = {}) =>
      trx
        .updateTable('signing_keys')
        .set((eb) => ({ status: to, version: eb('version', '+', 1), ...extra }))
        .where('tenant_id', '=', tenantId)
        .where('status', '=', from)
        .execute();
    await step('previous', 'revoked', { retired_at: now });
    await step('current', 'previous');
    await step('next', 'current', { activated_at: now });
    await trx
      .insertInto('signing_keys')
      .values({ ...newNext, status: 'next', created_at: now, activated_at: null, retired_at: null })
      .execute();
    return next.kid;
  });
}

/**
 * Serialises key changes of one tenant: the update takes a row lock in PostgreSQL and the write lock in
 * SQLite, so two rotations (two nodes, or the CLI beside a server) run one after the other.
 */
async function lockTenant(db: Kysely<Database>, tenantId: string, now: number): Promise<void> {
  const result = await db.updateTable('tenants').set({ updated_at: now }).where('id', '=', tenantId).executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new Error(`tenant ${tenantId} does not exist`);
}
