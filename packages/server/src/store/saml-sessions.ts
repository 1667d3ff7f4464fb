/**
 * What Gatehouse as a SAML identity provider remembers about SSO sessions (0031): the applications each session
 * signed in to (for single logout), single logouts in progress, and persistent NameIDs.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, SamlSessionParticipantsTable } from './schema.js';

export type SamlParticipant = SamlSessionParticipantsTable;

/** Records (or refreshes) that `session_id` signed in to `client_id` with this NameID and SessionIndex. */
export async function recordSamlParticipant(db: Kysely<Database>, participant: SamlParticipant): Promise<void> {
  await db
    .insertInto('saml_session_participants')
    .values(participant)
    .onConflict((oc) =>
      oc.columns(['session_id', 'client_id']).doUpdateSet({
        name_id: participant.name_id,
        name_id_format: participant.name_id_format,
        sp_name_qualifier: participant.sp_name_qualifier,
        session_index: participant.session_index,
        expires_at: participant.expires_at,
      }),
    )
    .execute();
}

/** The participants of a session, in the order they signed in; the rows are removed (the session is ending). */
export async function takeSamlParticipants(db: Kysely<Database>, tenantId: string, sessionId: string): Promise<SamlParticipant[]> {
  const rows = await db.selectFrom('saml_session_participants').selectAll().where('tenant_id', '=', tenantId).where('session_id', '=', sessionId).orderBy('created_at').execute();
  await db.deleteFrom('saml_session_participants').where('tenant_id', '=', tenantId).where('session_id', '=', sessionId).execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at), expires_at: Number(r.expires_at) }));
}

export async function createSamlLogout(db: Kysely<Database>, tenantId: string, state: unknown, expiresAt: number): Promise<string> {
  const id = randomBytes(20).toString('hex');
  await db.insertInto('saml_logouts').values({ id, tenant_id: tenantId, state: JSON.stringify(state), expires_at: expiresAt }).execute();
  return id;
}

export async function findSamlLogout(db: Kysely<Database>, tenantId: string, id: string, now = Date.now()): Promise<unknown> {
  const row = await db.selectFrom('saml_logouts').select(['state', 'expires_at']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row && Number(row.expires_at) > now ? (JSON.parse(row.state) as unknown) : undefined;
}

export async function updateSamlLogout(db: Kysely<Database>, id: string, state: unknown): Promise<void> {
  await db.updateTable('saml_logouts').set({ state: JSON.stringify(state) }).where('id', '=', id).execute();
}

export async function deleteSamlLogout(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('saml_logouts').where('id', '=', id).execute();
}

/** Participants of expired sessions and abandoned logouts. */
export async function purgeExpiredSamlSessions(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('saml_session_participants').where('expires_at', '<', now).execute();
  await db.deleteFrom('saml_logouts').where('expires_at', '<', now).execute();
}

/**
 * The user's persistent NameID for one application (SAML Core §8.3.7): random, so it says nothing about the user
 * and cannot be matched across applications; made on first use and the same ever after (on every node).
 */
export async function persistentNameId(db: Kysely<Database>, tenantId: string, clientId: string, userId: string, now = Date.now()): Promise<string> {
  const find = () => db.selectFrom('saml_persistent_ids').select('name_id').where('tenant_id', '=', tenantId).where('client_id', '=', clientId).where('user_id', '=', userId).executeTakeFirst();
  const found = await find();
  if (found) return found.name_id;
  await db
    .insertInto('saml_persistent_ids')
    .values({ tenant_id: tenantId, client_id: clientId, user_id: userId, name_id: `_${randomBytes(20).toString('hex')}`, created_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'client_id', 'user_id']).doNothing())
    .execute();
  // Two first sign-ins at once: whichever row was written first is the one both use.
  return (await find())!.name_id;
}
