/**
 * Refresh tokens, stored by SHA-256 hash, in families: every token obtained by rotating another shares the family
 * of the first, so that revoking a grant (reuse detected, a replayed code, /oauth/revoke) is one update.
 */
import type { Kysely } from 'kysely';
import type { Database, RefreshTokensTable } from './schema.js';

export interface RefreshToken {
  id: string;
  token_hash: string;
  tenant_id: string;
  family_id: string;
  parent_id: string | null;
  client_id: string;
  user_id: string;
  audience: string | null;
  scopes: string[];
  session_id: string | null;
  /** Epoch ms. */
  authenticated_at: number;
  rotating: boolean;
  created_at: number;
  last_used_at: number | null;
  rotated_at: number | null;
  revoked_at: number | null;
  expires_at: number | null;
  idle_expires_at: number | null;
  /** RFC 9449 §5: the DPoP key thumbprint this token is bound to, or null. */
  dpop_jkt?: string | null;
}

function fromRow(row: RefreshTokensTable): RefreshToken {
  return { ...row, scopes: JSON.parse(row.scopes) as string[], rotating: row.rotating === 1 };
}

const PURGE_EVERY = 500;
/** Dead rows are kept a while so that the reuse of a token in a revoked family still says what it is. */
const KEEP_DEAD_MS = 7 * 24 * 3600 * 1000;
let insertsSincePurge = 0;

export async function insertRefreshToken(db: Kysely<Database>, token: RefreshToken): Promise<void> {
  if (++insertsSincePurge >= PURGE_EVERY) {
    insertsSincePurge = 0;
    const before = token.created_at - KEEP_DEAD_MS;
    await db
      .deleteFrom('refresh_tokens')
      .where((eb) => eb.or([eb('revoked_at', '<', before), eb('expires_at', '<', before), eb('idle_expires_at', '<', before)]))
      .execute();
  }
  await db
    .insertInto('refresh_tokens')
    .values({ ...token, scopes: JSON.stringify(token.scopes), rotating: token.rotating ? 1 : 0 })
    .execute();
}

export async function findRefreshTokenByHash(db: Kysely<Database>, tenantId: string, tokenHash: string): Promise<RefreshToken | undefined> {
  const row = await db.selectFrom('refresh_tokens').selectAll().where('tenant_id', '=', tenantId).where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Marks a live token rotated. False when another request rotated or revoked it first. */
export async function markRefreshTokenRotated(db: Kysely<Database>, id: string, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ rotated_at: now, last_used_at: now })
    .where('id', '=', id)
    .where('rotated_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a use of a non-rotating token, moving its idle expiry. */
export async function touchRefreshToken(db: Kysely<Database>, id: string, idleExpiresAt: number | null, now = Date.now()): Promise<void> {
  await db.updateTable('refresh_tokens').set({ last_used_at: now, idle_expires_at: idleExpiresAt }).where('id', '=', id).execute();
}

/** Revokes every token of the family. Returns how many were still live. */
export async function revokeRefreshTokenFamily(db: Kysely<Database>, tenantId: string, familyId: string, now = Date.now()): Promise<number> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether any token of the family was revoked (read after adding to it, to close the race with a revocation). */
export async function isRefreshTokenFamilyRevoked(db: Kysely<Database>, tenantId: string, familyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('refresh_tokens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}
