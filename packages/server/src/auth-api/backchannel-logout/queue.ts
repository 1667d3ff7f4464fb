/**
 * Remembering which clients a session authorized (§2.3), and queueing their logout tokens when it ends.
 *
 * Queueing writes rows only (backchannel_logout_deliveries); the delivery worker POSTs them. So a logout
 * answers as fast as before whatever the RPs do, and a logout token survives a restart or a slow receiver.
 * Whoever ends a session calls `endSessionsWithBackchannel` (or queues before deleting): the session's
 * `sso_session_clients` rows go with it.
 */
import type { Kysely } from 'kysely';
import { randomAlphanumeric } from '../../crypto/ids.js';
import { signalDeliveriesQueued } from '../../events/outbox.js';
import type { Services } from '../../services.js';
import type { Database } from '../../store/schema.js';
import type { Tenant } from '../../store/tenants.js';
import { backchannelLogoutSettings, notifiesOn, type LogoutInitiator } from './settings.js';

/** Records that `clientId` was issued something from the session (idempotent). */
export async function recordSessionClient(db: Kysely<Database>, tenantId: string, sessionId: string, clientId: string, now = Date.now()): Promise<void> {
  await db
    .insertInto('sso_session_clients')
    .values({ session_id: sessionId, client_id: clientId, tenant_id: tenantId, created_at: now })
    .onConflict((oc) => oc.columns(['session_id', 'client_id']).doNothing())
    .execute();
}

export interface EndedSession {
  id: string;
  user_id: string;
}

/**
 * Queues one logout token per (session, client that took part and listens for this initiator). Returns how
 * many were queued. Call before the sessions are deleted.
 */
export async function queueBackchannelLogouts(
  services: Pick<Services, 'store' | 'configCache'>,
  tenant: Tenant,
  sessions: readonly EndedSession[],
  initiator: LogoutInitiator,
  now = Date.now(),
): Promise<number> {
  if (sessions.length === 0) return 0;
  const db = services.store.db;
  const participants = await db
    .selectFrom('sso_session_clients')
    .select(['session_id', 'client_id'])
    .where('tenant_id', '=', tenant.id)
    .where(
      'session_id',
      'in',
      sessions.map((s) => s.id),
    )
    .execute();
  if (participants.length === 0) return 0;
  const userOf = new Map(sessions.map((s) => [s.id, s.user_id]));
  const rows = [];
  for (const { session_id, client_id } of participants) {
    const client = await services.configCache.client(tenant.id, client_id);
    const settings = client && backchannelLogoutSettings(client);
    if (!settings || !notifiesOn(settings, initiator)) continue;
    rows.push({
      id: `bcl_${randomAlphanumeric(24)}`,
      tenant_id: tenant.id,
      client_id,
      endpoint: settings.url,
      issuer: tenant.issuer,
      user_id: userOf.get(session_id)!,
      session_id,
      initiator,
      status: 'pending' as const,
      attempt_count: 0,
      next_attempt_at: now,
      lease_id: null,
      last_error: null,
      created_at: now,
      completed_at: null,
    });
  }
  if (rows.length === 0) return 0;
  await db.insertInto('backchannel_logout_deliveries').values(rows).execute();
  signalDeliveriesQueued();
  return rows.length;
}

/** Every live session of a user (or of several: a primary and its linked account). */
export async function sessionsOfUsers(db: Kysely<Database>, tenantId: string, userIds: readonly string[]): Promise<EndedSession[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom('sso_sessions').select(['id', 'user_id']).where('tenant_id', '=', tenantId).where('user_id', 'in', userIds).execute();
}

/**
 * Ends every session of these users (a password reset, a block, a deletion) after queueing the logout tokens
 * of the clients that took part. Returns how many sessions ended.
 */
export async function endSessionsOfUsers(
  services: Pick<Services, 'store' | 'configCache'>,
  tenant: Tenant,
  userIds: readonly string[],
  initiator: LogoutInitiator,
): Promise<number> {
  const db = services.store.db;
  const sessions = await sessionsOfUsers(db, tenant.id, userIds);
  if (sessions.length === 0) return 0;
  await queueBackchannelLogouts(services, tenant, sessions, initiator);
  await db
    .deleteFrom('sso_sessions')
    .where(
      'id',
      'in',
      sessions.map((s) => s.id),
    )
    .execute();
  return sessions.length;
}
