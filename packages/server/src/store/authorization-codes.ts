/**
 * Authorization codes, stored by SHA-256 hash. A code is claimed (redeemed) by one conditional update, so two
 * concurrent redemptions cannot both win; redeemed rows stay a day past their expiry, so that a replay is still
 * recognised and can revoke what the first redemption issued.
 */
import type { Kysely } from 'kysely';
import type { AuthorizationCodesTable, Database } from './schema.js';

export type AuthorizationCodeRow = AuthorizationCodesTable;

/** How long a code row outlives its expiry, for replay detection. */
const KEEP_AFTER_EXPIRY_MS = 24 * 3600 * 1000;
const PURGE_EVERY = 500;
let insertsSincePurge = 0;

export async function insertAuthorizationCode(db: Kysely<Database>, row: AuthorizationCodeRow): Promise<void> {
  if (++insertsSincePurge >= PURGE_EVERY) {
    insertsSincePurge = 0;
    await db.deleteFrom('authorization_codes').where('expires_at', '<', row.created_at - KEEP_AFTER_EXPIRY_MS).execute();
  }
  await db.insertInto('authorization_codes').values(row).execute();
}

export async function findAuthorizationCode(db: Kysely<Database>, tenantId: string, codeHash: string): Promise<AuthorizationCodeRow | undefined> {
  return db.selectFrom('authorization_codes').selectAll().where('tenant_id', '=', tenantId).where('code_hash', '=', codeHash).executeTakeFirst();
}

export interface CodeIssue {
  accessTokenJti: string;
  accessTokenExpiresAt: number;
  refreshTokenFamily: string | null;
}

/** Marks the code redeemed, recording what it issues. False when it was redeemed already (a replay). */
export async function claimAuthorizationCode(db: Kysely<Database>, codeHash: string, issue: CodeIssue, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('authorization_codes')
    .set({
      redeemed_at: now,
      access_token_jti: issue.accessTokenJti,
      access_token_expires_at: issue.accessTokenExpiresAt,
      refresh_token_family: issue.refreshTokenFamily,
    })
    .where('code_hash', '=', codeHash)
    .where('redeemed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Notes a second redemption and returns the row as it is now (with what the first redemption issued). */
export async function markAuthorizationCodeReplayed(db: Kysely<Database>, codeHash: string, now = Date.now()): Promise<AuthorizationCodeRow | undefined> {
  await db.updateTable('authorization_codes').set({ replayed_at: now }).where('code_hash', '=', codeHash).execute();
  return db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Whether a replay was noted since the code was claimed (read by the first redemption after it issued). */
export async function wasAuthorizationCodeReplayed(db: Kysely<Database>, codeHash: string): Promise<boolean> {
  const row = await db.selectFrom('authorization_codes').select('replayed_at').where('code_hash', '=', codeHash).executeTakeFirst();
  return row !== undefined && row.replayed_at !== null;
}
