/**
 * SAML single logout toward upstream identity providers (0034): the NameID and SessionIndex of a user's last
 * sign-in through a samlp connection, and the LogoutRequests sent upstream awaiting their LogoutResponse
 * (consumed once, by the RelayState's hash).
 */
import type { Kysely } from 'kysely';
import type { Database, SamlUpstreamLogoutsTable, SamlUpstreamSessionsTable } from './schema.js';

export type SamlUpstreamSession = SamlUpstreamSessionsTable;
export type SamlUpstreamLogout = SamlUpstreamLogoutsTable;

export async function saveSamlUpstreamSession(db: Kysely<Database>, row: SamlUpstreamSession): Promise<void> {
  const { user_id: _key, ...changes } = row;
  await db.insertInto('saml_upstream_sessions').values(row).onConflict((c) => c.column('user_id').doUpdateSet(changes)).execute();
}

export async function findSamlUpstreamSession(db: Kysely<Database>, tenantId: string, userId: string): Promise<SamlUpstreamSession | undefined> {
  return db.selectFrom('saml_upstream_sessions').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
}

export async function insertSamlUpstreamLogout(db: Kysely<Database>, row: SamlUpstreamLogout): Promise<void> {
  await db.deleteFrom('saml_upstream_logouts').where('expires_at', '<', row.created_at).execute();
  await db.insertInto('saml_upstream_logouts').values(row).execute();
}

/** The pending logout of this RelayState hash, removed so that it is answered once; undefined when unknown or expired. */
export async function consumeSamlUpstreamLogout(db: Kysely<Database>, tenantId: string, id: string, now = Date.now()): Promise<SamlUpstreamLogout | undefined> {
  const row = await db.selectFrom('saml_upstream_logouts').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) return undefined;
  // Whoever deletes the row owns the answer: a replayed or concurrent LogoutResponse finds nothing.
  const deleted = await db.deleteFrom('saml_upstream_logouts').where('id', '=', id).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1 || Number(row.expires_at) <= now) return undefined;
  return { ...row, expires_at: Number(row.expires_at), created_at: Number(row.created_at) };
}
