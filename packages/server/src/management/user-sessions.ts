/**
 * A user's login sessions, as the reference has them: GET/DELETE /api/v2/users/{id}/sessions and
 * GET/DELETE /api/v2/sessions/{id}, POST /api/v2/sessions/{id}/revoke. A session is the hosted login's SSO
 * session (its id is the `sid` of the ID tokens it gave). Ending one tells the clients that took part
 * (back-channel logout, initiator `session-revoked`) before the row goes; revoking also revokes the refresh
 * tokens issued from it, as the reference's revoke does (a deletion leaves them, as there).
 */
import { Type } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { endSessionsOfUsers, queueBackchannelLogouts } from '../auth-api/backchannel-logout/queue.js';
import { NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import type { Database, SsoSessionsTable } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';
import { findPrimaryUser } from '../store/users.js';
import { operation } from './operation.js';
import { checkpointList, pageWindow } from './pagination.js';
import { UserNotFound } from './users.js';

const UserIdParams = Type.Object({ id: Type.String({ minLength: 3, maxLength: 321, pattern: '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$' }) });
const SessionIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_-]+$' }) });
const CheckpointQuery = Type.Object(
  { from: Type.Optional(Type.String({ maxLength: 200 })), take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) },
  { additionalProperties: false },
);

const SessionBody = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  authenticated_at: Type.String({ format: 'date-time' }),
  last_interacted_at: Type.String({ format: 'date-time' }),
  idle_expires_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
  device: Type.Object({ initial_ip: Type.Optional(Type.String()), initial_user_agent: Type.Optional(Type.String()) }),
  clients: Type.Array(Type.Object({ client_id: Type.String() })),
  authentication: Type.Object({ methods: Type.Array(Type.Object({ name: Type.String(), timestamp: Type.String({ format: 'date-time' }) })) }),
});

class SessionNotFound extends NotFound {
  constructor() {
    super('The session does not exist.', 'inexistent_session');
  }
}

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

function amrOf(value: string | null | undefined): string[] {
  if (!value) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

async function present(db: Kysely<Database>, tenantId: string, sessions: readonly SsoSessionsTable[]) {
  const ids = sessions.map((s) => s.id);
  const clients =
    ids.length === 0
      ? []
      : await db.selectFrom('sso_session_clients').select(['session_id', 'client_id']).where('tenant_id', '=', tenantId).where('session_id', 'in', ids).orderBy('created_at').execute();
  return sessions.map((s) => ({
    id: s.id,
    user_id: s.user_id,
    created_at: iso(s.created_at),
    updated_at: iso(s.last_active_at),
    authenticated_at: iso(s.authenticated_at),
    last_interacted_at: iso(s.last_active_at),
    idle_expires_at: iso(s.idle_expires_at),
    expires_at: iso(s.expires_at),
    device: { ...(s.ip !== null && { initial_ip: s.ip }), ...(s.user_agent !== null && { initial_user_agent: s.user_agent }) },
    clients: clients.filter((c) => c.session_id === s.id).map((c) => ({ client_id: c.client_id })),
    authentication: { methods: amrOf(s.amr).map((name) => ({ name, timestamp: iso(s.authenticated_at) })) },
  }));
}

/** Live sessions only: an expired row waiting for the purge is no session. */
function live(db: Kysely<Database>, tenantId: string, now = Date.now()) {
  return db.selectFrom('sso_sessions').selectAll().where('tenant_id', '=', tenantId).where('expires_at', '>=', now).where('idle_expires_at', '>=', now);
}

async function endSession(services: Services, tenant: Tenant, session: SsoSessionsTable, revokeRefreshTokens: boolean): Promise<void> {
  const db = services.store.db;
  await queueBackchannelLogouts(services, tenant, [session], 'session-revoked');
  if (revokeRefreshTokens) {
    await db.updateTable('refresh_tokens').set({ revoked_at: Date.now() }).where('tenant_id', '=', tenant.id).where('session_id', '=', session.id).where('revoked_at', 'is', null).execute();
  }
  await db.deleteFrom('sso_sessions').where('tenant_id', '=', tenant.id).where('id', '=', session.id).execute();
}

export function registerUserSessions(api: App, services: Services): void {
  const db = services.store.db;

  async function sessionOr404(tenantId: string, id: string): Promise<SsoSessionsTable> {
    const session = await live(db, tenantId).where('id', '=', id).executeTakeFirst();
    if (!session) throw new SessionNotFound();
    return session;
  }

  api.get('/users/:id/sessions', {
    ...operation(['read:sessions'], {
      summary: "List a user's sessions (checkpoint paging: from, take)",
      params: UserIdParams,
      querystring: CheckpointQuery,
      response: { 200: checkpointList(SessionBody, 'sessions'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const user = await findPrimaryUser(db, tenantId, request.params.id);
      if (!user) throw new UserNotFound();
      const window = pageWindow({ from: request.query.from, take: request.query.take ?? 50 });
      // One more than the page, to know whether there is a next one.
      const rows = await live(db, tenantId).where('user_id', '=', user.user_id).orderBy('created_at', 'desc').orderBy('id').limit(window.limit + 1).offset(window.offset).execute();
      const page = rows.slice(0, window.limit);
      const next = rows.length > window.limit ? Buffer.from(`o:${window.offset + window.limit}`).toString('base64url') : undefined;
      return { sessions: await present(db, tenantId, page), ...(next !== undefined && { next }) };
    },
  });

  api.delete('/users/:id/sessions', {
    ...operation(['delete:sessions'], {
      summary: "End every session of a user (their clients are told by back-channel logout)",
      params: UserIdParams,
      response: { 202: noContent('Ended'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request, reply) => {
      const user = await findPrimaryUser(db, request.tenant.id, request.params.id);
      if (!user) throw new UserNotFound();
      await endSessionsOfUsers(services, request.tenant, [user.user_id], 'session-revoked');
      return reply.code(202).send();
    },
  });

  api.get('/sessions/:id', {
    ...operation(['read:sessions'], {
      summary: 'Get a session',
      params: SessionIdParams,
      response: { 200: SessionBody, ...errorResponses('management', { 404: 'inexistent_session' }) },
    }),
    handler: async (request) => (await present(db, request.tenant.id, [await sessionOr404(request.tenant.id, request.params.id)]))[0]!,
  });

  api.delete('/sessions/:id', {
    ...operation(['delete:sessions'], {
      summary: 'End a session (its refresh tokens stay; revoke ends them too)',
      params: SessionIdParams,
      response: { 202: noContent('Ended'), ...errorResponses('management', { 404: 'inexistent_session' }) },
    }),
    handler: async (request, reply) => {
      await endSession(services, request.tenant, await sessionOr404(request.tenant.id, request.params.id), false);
      return reply.code(202).send();
    },
  });

  api.post('/sessions/:id/revoke', {
    ...operation(['delete:sessions'], {
      summary: 'Revoke a session and the refresh tokens issued from it',
      params: SessionIdParams,
      response: { 202: noContent('Revoked'), ...errorResponses('management', { 404: 'inexistent_session' }) },
    }),
    handler: async (request, reply) => {
      await endSession(services, request.tenant, await sessionOr404(request.tenant.id, request.params.id), true);
      return reply.code(202).send();
    },
  });
}
