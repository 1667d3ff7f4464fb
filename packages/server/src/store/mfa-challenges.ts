/** Second factors owed by a hosted login (mfa_challenges, 0023): one per login transaction. */
import type { Kysely } from 'kysely';
import type { Database, MfaChallengesTable } from './schema.js';

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

export async function findMfaChallenge(db: Kysely<Database>, tenantId: string, transactionId: string, now = Date.now()): Promise<MfaChallenge | undefined> {
  const row = await db.selectFrom('mfa_challenges').selectAll().where('tenant_id', '=', tenantId).where('transaction_id', '=', transactionId).where('expires_at', '>', now).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function setChallengeRecoveryCode(db: Kysely<Database>, id: string, sealed: string | null): Promise<void> {
  await db.updateTable('mfa_challenges').set({ recovery_code_sealed: sealed }).where('id', '=', id).execute();
}

/** Ends the challenge; false when another request already ended it (a double submit). */
export async function deleteMfaChallenge(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('mfa_challenges').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function purgeExpiredMfaChallenges(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('mfa_challenges').where('expires_at', '<', now).execute();
}
