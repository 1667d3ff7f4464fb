/**
 * Pending passwordless codes and magic links. One row per connection and identifier: a new start replaces the
 * old one. Each check of a code first claims one of its attempts with a conditional update, so parallel
 * guesses cannot share a slot; using a code deletes its row, so it works once.
 */
import type { Kysely } from 'kysely';
import type { Database, PasswordlessCodesTable } from './schema.js';

export interface PasswordlessCode extends Omit<PasswordlessCodesTable, 'auth_params'> {
  authParams: Record<string, string>;
}

function fromRow(row: PasswordlessCodesTable): PasswordlessCode {
  const { auth_params, ...rest } = row;
  return {
    ...rest,
    authParams: JSON.parse(auth_params) as Record<string, string>,
    attempts: Number(row.attempts),
    verified_at: row.verified_at === null ? null : Number(row.verified_at),
    expires_at: Number(row.expires_at),
    created_at: Number(row.created_at),
  };
}

/** Stores `code`, dropping the pending one for the same connection and identifier. */
export async function replacePasswordlessCode(db: Kysely<Database>, code: PasswordlessCode): Promise<void> {
  const { authParams, ...rest } = code;
  const row: PasswordlessCodesTable = { ...rest, auth_params: JSON.stringify(authParams) };
  const write = () =>
    db.transaction().execute(async (trx) => {
      await trx.deleteFrom('passwordless_codes').where('connection_id', '=', code.connection_id).where('identifier', '=', code.identifier).execute();
      await trx.insertInto('passwordless_codes').values(row).execute();
    });
  try {
    await write();
  } catch (error) {
    // Two starts racing for one identifier: the unique index refuses the second insert; the later start wins.
    const pending = await db
      .selectFrom('passwordless_codes')
      .select('id')
      .where('connection_id', '=', code.connection_id)
      .where('identifier', '=', code.identifier)
      .executeTakeFirst();
    if (!pending) throw error;
    await write();
  }
}

export async function findPasswordlessCode(db: Kysely<Database>, connectionId: string, identifier: string): Promise<PasswordlessCode | undefined> {
  const row = await db.selectFrom('passwordless_codes').selectAll().where('connection_id', '=', connectionId).where('identifier', '=', identifier).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findPasswordlessLink(db: Kysely<Database>, tenantId: string, linkTokenHash: string): Promise<PasswordlessCode | undefined> {
  const row = await db.selectFrom('passwordless_codes').selectAll().where('tenant_id', '=', tenantId).where('link_token_hash', '=', linkTokenHash).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Takes one attempt of the code; false when none is left (or the row is gone). */
export async function claimPasswordlessAttempt(db: Kysely<Database>, id: string, maxAttempts: number): Promise<boolean> {
  const result = await db
    .updateTable('passwordless_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('attempts', '<', maxAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markPasswordlessVerified(db: Kysely<Database>, id: string, now = Date.now()): Promise<void> {
  await db.updateTable('passwordless_codes').set({ verified_at: now }).where('id', '=', id).execute();
}

/** Deletes the row; true only for the one call that removed it (single use). */
export async function deletePasswordlessCode(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('passwordless_codes').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function purgeExpiredPasswordlessCodes(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('passwordless_codes').where('expires_at', '<', now).execute();
}
