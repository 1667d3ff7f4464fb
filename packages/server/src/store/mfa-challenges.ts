/** Second factors owed by a hosted login (mfa_challenges, 0023): one per login transaction. */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from './db.js';
import type { LoginTransactionRow } from './login-transactions.js';
import type { Database, LoginTransactionsTable, MfaChallengesTable, UsersTable } from './schema.js';
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

/** A challenge as its row, for both ways of storing one. */
function challengeRow(challenge: MfaChallenge) {
  return {
    id: challenge.id,
    tenant_id: challenge.tenantId,
    user_id: challenge.userId,
    transaction_id: challenge.transactionId,
    amr: JSON.stringify(challenge.amr),
    recovery_code_sealed: challenge.recoveryCodeSealed,
    expires_at: challenge.expiresAt,
    created_at: challenge.createdAt,
  };
}

/**
 * Stores `challenge` for its transaction in one statement, unless a live one for the same user is already there
 * (a reload of the login, say): an earlier one of another user, or an expired one, is replaced (a second
 * password login in the same transaction).
 */
export async function claimMfaChallenge(db: Kysely<Database>, challenge: MfaChallenge, now: number): Promise<void> {
  await db
    .insertInto('mfa_challenges')
    .values(challengeRow(challenge))
    .onConflict((oc) =>
      oc
        .column('transaction_id')
        .doUpdateSet((eb) => ({
          id: eb.ref('excluded.id'),
          tenant_id: eb.ref('excluded.tenant_id'),
          user_id: eb.ref('excluded.user_id'),
          amr: eb.ref('excluded.amr'),
          recovery_code_sealed: eb.ref('excluded.recovery_code_sealed'),
          expires_at: eb.ref('excluded.expires_at'),
          created_at: eb.ref('excluded.created_at'),
          email_code_hash: null,
          email_code_expires_at: null,
          email_codes_sent: 0,
        }))
        .where((eb) => eb.or([eb('mfa_challenges.user_id', '<>', eb.ref('excluded.user_id')), eb('mfa_challenges.expires_at', '<=', now)])),
    )
    .execute();
}

/** Stores a new challenge in one statement (the MFA API's: its transaction id is new, nothing to replace). */
export async function insertMfaChallenge(db: Kysely<Database>, challenge: MfaChallenge): Promise<void> {
  await db
    .insertInto('mfa_challenges')
    .values(challengeRow(challenge))
    .execute();
}

/** The live challenge with this id. */
export async function findMfaChallengeById(db: Kysely<Database>, tenantId: string, id: string, now = Date.now()): Promise<MfaChallenge | undefined> {
  const row = await db.selectFrom('mfa_challenges').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** The challenge's columns, read beside a login transaction under `c_` names. */
const CHALLENGE_COLUMNS: (keyof MfaChallengesTable)[] = ['id', 'tenant_id', 'user_id', 'transaction_id', 'amr', 'recovery_code_sealed', 'expires_at', 'created_at', 'email_code_hash', 'email_code_expires_at', 'email_codes_sent'];

/**
 * A login transaction with its live second-factor challenge and that challenge's user, in one statement: what
 * each request of the hosted second step (login/mfa-page.ts) starts with, where another hosted page reads its
 * transaction alone. The caller checks the transaction's binding to the browser and its CSRF token.
 */
export async function findTransactionWithChallenge(
  db: Kysely<Database>,
  dialect: Dialect,
  tenantId: string,
  transactionId: string,
  now = Date.now(),
): Promise<{ transaction: LoginTransactionRow; challenge?: MfaChallenge; user?: User } | undefined> {
  const challengeColumns = sql.raw(CHALLENGE_COLUMNS.map((c) => `c."${c}" as "c_${c}"`).join(', '));
  const result = await sql<LoginTransactionsTable & Record<string, unknown> & { user: string | UsersTable | null }>`select t.*, ${challengeColumns}, ${userAsJson(dialect, sql`c."tenant_id"`, sql`c."user_id"`)} as "user" from "login_transactions" t left join "mfa_challenges" c on c."transaction_id" = t."id" and c."tenant_id" = t."tenant_id" and c."expires_at" > ${now} where t."id" = ${transactionId} and t."tenant_id" = ${tenantId} and t."expires_at" > ${now}`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  const transaction = Object.fromEntries(Object.entries(row).filter(([key]) => !key.startsWith('c_') && key !== 'user')) as unknown as LoginTransactionRow;
  transaction.expires_at = Number(transaction.expires_at);
  transaction.created_at = Number(transaction.created_at);
  if (row.c_id === null || row.c_id === undefined) return { transaction };
  const challenge = fromRow(Object.fromEntries(CHALLENGE_COLUMNS.map((c) => [c, row[`c_${c}`]])) as unknown as MfaChallengesTable);
  const user = primaryUserOf(row.user);
  return { transaction, challenge, ...(user && { user }) };
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
  const result = await sql<{ user: string | UsersTable | null }>`delete from "mfa_challenges" where "id" = ${id} and "user_id" = ${userId} returning ${userAsJson(dialect, sql`${tenantId}`, sql`${userId}`)} as "user"`.execute(db);
  const row = result.rows[0];
  if (!row) return { used: false };
  const user = primaryUserOf(row.user);
  return user ? { used: true, user } : { used: true };
}

/** A subquery giving the user row as one JSON value: PostgreSQL's row_to_json, SQLite's json_object (which needs the names). */
function userAsJson(dialect: Dialect, tenantId: RawBuilder<unknown>, userId: RawBuilder<unknown>): RawBuilder<unknown> {
  return dialect === 'postgres'
    ? sql`(select row_to_json(u) from "users" u where u."tenant_id" = ${tenantId} and u."user_id" = ${userId})`
    : sql`(select json_object(${sql.raw(USER_COLUMNS.map((c) => `'${c}', u."${c}"`).join(', '))}) from "users" u where u."tenant_id" = ${tenantId} and u."user_id" = ${userId})`;
}

/** The user of such a JSON value, when it is there and a primary identity (a linked secondary is no user of its own). */
function primaryUserOf(value: string | UsersTable | null): User | undefined {
  if (value === null) return undefined;
  const user = userFromRow(typeof value === 'string' ? (JSON.parse(value) as UsersTable) : value);
  return user.linked_to === null ? user : undefined;
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
