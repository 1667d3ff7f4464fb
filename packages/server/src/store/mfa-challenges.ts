/** Second factors owed by a hosted login (mfa_challenges, 0023): one per login transaction. */
import { sql, type Kysely } from 'kysely';
import type { Dialect } from './db.js';
import type { Database, MfaChallengesTable, UsersTable } from './schema.js';
import { USER_COLUMNS, userFromRow, type User } from './users.js';

export interface MfaChallenge {
  id: string;
  tenantId: string;
  userId: string;
  transactionId: string;
  /** The first factor's `amr` values. */
  amr: string[];
  recoveryCodeSealed: string | null;
  expiresAt: number;
  createdAt: number;
  /** The email factor: the live code's expiry (undefined when none is), and how many codes were sent. */
  emailCodeExpiresAt?: number;
  emailCodesSent?: number;
}

function fromRow(row: MfaChallengesTable): MfaChallenge {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    transactionId: row.transaction_id,
    amr: JSON.parse(row.amr) as string[],
    recoveryCodeSealed: row.recovery_code_sealed,
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
    ...(row.email_code_hash && row.email_code_expires_at !== null && row.email_code_expires_at !== undefined && { emailCodeExpiresAt: Number(row.email_code_expires_at) }),
    emailCodesSent: Number(row.email_codes_sent ?? 0),
  };
}

/** Stores `challenge`, replacing any earlier one of the same transaction (a second password login in it). */
export async function replaceMfaChallenge(db: Kysely<Database>, challenge: MfaChallenge): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('mfa_challenges').where('transaction_id', '=', challenge.transactionId).execute();
    await trx
      .insertInto('mfa_challenges')
      .values({
        id: challenge.id,
        tenant_id: challenge.tenantId,
        user_id: challenge.userId,
        transaction_id: challenge.transactionId,
        amr: JSON.stringify(challenge.amr),
        recovery_code_sealed: challenge.recoveryCodeSealed,
        expires_at: challenge.expiresAt,
        created_at: challenge.createdAt,
      })
      .execute();
  });
}

/** Stores a new challenge in one statement (the MFA API's: its transaction id is new, nothing to replace). */
export async function insertMfaChallenge(db: Kysely<Database>, challenge: MfaChallenge): Promise<void> {
  await db
    .insertInto('mfa_challenges')
    .values({
      id: challenge.id,
      tenant_id: challenge.tenantId,
      user_id: challenge.userId,
      transaction_id: challenge.transactionId,
      amr: JSON.stringify(challenge.amr),
      recovery_code_sealed: challenge.recoveryCodeSealed,
      expires_at: challenge.expiresAt,
      created_at: challenge.createdAt,
    })
    .execute();
}

/** The live challenge with this id. */
export async function findMfaChallengeById(db: Kysely<Database>, tenantId: string, id: string, now = Date.now()): Promise<MfaChallenge | undefined> {
  const row = await db.selectFrom('mfa_challenges').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findMfaChallenge(db: Kysely<Database>, tenantId: string, transactionId: string, now = Date.now()): Promise<MfaChallenge | undefined> {
  const row = await db.selectFrom('mfa_challenges').selectAll().where('tenant_id', '=', tenantId).where('transaction_id', '=', transactionId).where('expires_at', '>', now).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Keeps the recovery code to show; with `amr`, also the methods the answer that led to it added (same write). */
export async function setChallengeRecoveryCode(db: Kysely<Database>, id: string, sealed: string | null, amr?: string[]): Promise<void> {
  await db.updateTable('mfa_challenges').set({ recovery_code_sealed: sealed, ...(amr && { amr: JSON.stringify(amr) }) }).where('id', '=', id).execute();
}

/** Ends the challenge; false when another request already ended it (a double submit). */
export async function deleteMfaChallenge(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('mfa_challenges').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * Deletes the challenge `id` of `userId` and reads that user, in one statement: the deletion's RETURNING carries
 * the user row as one JSON value (PostgreSQL's row_to_json, SQLite's json_object), so a right MFA answer costs
 * one round trip here on either dialect rather than a delete and a read. `used` is false when another request
 * deleted it first; `user` is undefined when the user (or its primary identity) is gone.
 */
export async function useUpMfaChallengeReadingUser(db: Kysely<Database>, dialect: Dialect, tenantId: string, id: string, userId: string): Promise<{ used: boolean; user?: User }> {
  const userRow =
    dialect === 'postgres'
      ? sql`(select row_to_json(u) from "users" u where u."tenant_id" = ${tenantId} and u."user_id" = ${userId})`
      : sql`(select json_object(${sql.raw(USER_COLUMNS.map((c) => `'${c}', u."${c}"`).join(', '))}) from "users" u where u."tenant_id" = ${tenantId} and u."user_id" = ${userId})`;
  const result = await sql<{ user: string | UsersTable | null }>`delete from "mfa_challenges" where "id" = ${id} and "user_id" = ${userId} returning ${userRow} as "user"`.execute(db);
  const row = result.rows[0];
  if (!row) return { used: false };
  if (row.user === null) return { used: true };
  const user = userFromRow(typeof row.user === 'string' ? (JSON.parse(row.user) as UsersTable) : row.user);
  return user.linked_to === null ? { used: true, user } : { used: true };
}

export async function purgeExpiredMfaChallenges(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('mfa_challenges').where('expires_at', '<', now).execute();
}

/** Keeps the hash of a newly emailed code, unless `maxSent` codes were already sent; false then. */
export async function setEmailCode(db: Kysely<Database>, id: string, codeHash: string, expiresAt: number, maxSent: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_challenges')
    .set((eb) => ({ email_code_hash: codeHash, email_code_expires_at: expiresAt, email_codes_sent: eb('email_codes_sent', '+', 1) }))
    .where('id', '=', id)
    .where('email_codes_sent', '<', maxSent)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Uses up the emailed code whose hash is `codeHash`, if it is still live: true for the one request that did. */
export async function consumeEmailCode(db: Kysely<Database>, id: string, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_challenges')
    .set({ email_code_hash: null, email_code_expires_at: null })
    .where('id', '=', id)
    .where('email_code_hash', '=', codeHash)
    .where('email_code_expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
