/** SSO sessions: found by the SHA-256 of the browser's cookie value, never by the value itself. */
import type { Kysely } from 'kysely';
import type { Database, SsoSessionsTable } from './schema.js';

export type SsoSession = SsoSessionsTable;

export async function insertSsoSession(db: Kysely<Database>, session: SsoSession): Promise<void> {
  await db.insertInto('sso_sessions').values(session).execute();
}

export async function findSsoSessionByTokenHash(db: Kysely<Database>, tenantId: string, tokenHash: string): Promise<SsoSession | undefined> {
  const row = await db.selectFrom('sso_sessions').selectAll().where('token_hash', '=', tokenHash).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row && { ...row, authenticated_at: Number(row.authenticated_at), last_active_at: Number(row.last_active_at), idle_expires_at: Number(row.idle_expires_at), expires_at: Number(row.expires_at), created_at: Number(row.created_at), amr: row.amr ?? null };
}

export async function touchSsoSession(db: Kysely<Database>, id: string, lastActiveAt: number, idleExpiresAt: number): Promise<void> {
  await db.updateTable('sso_sessions').set({ last_active_at: lastActiveAt, idle_expires_at: idleExpiresAt }).where('id', '=', id).execute();
}

export async function deleteSsoSession(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('sso_sessions').where('id', '=', id).execute();
}

/** Ends every session of a user (blocked, deleted, or an administrator's request). */
export async function deleteSsoSessionsOfUser(db: Kysely<Database>, tenantId: string, userId: string): Promise<number> {
  const result = await db.deleteFrom('sso_sessions').where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function purgeExpiredSsoSessions(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db
    .deleteFrom('sso_sessions')
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('idle_expires_at', '<', now)]))
    .execute();
}
