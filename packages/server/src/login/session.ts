/**
 * The SSO session: an opaque cookie whose SHA-256 is the key of a `sso_sessions` row. A new value on every
 * login (no fixation), idle and absolute lifetimes from the tenant's settings, ended server-side on logout and
 * whenever the user is found blocked or deleted.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomAlphanumeric, randomSecret } from '../crypto/ids.js';
import type { Services } from '../services.js';
import { queueBackchannelLogouts } from '../auth-api/backchannel-logout/queue.js';
import type { LogoutInitiator } from '../auth-api/backchannel-logout/settings.js';
import { purgeExpiredSamlSessions } from '../store/saml-sessions.js';
import { deleteSsoSession, findSsoSessionByTokenHash, insertSsoSession, purgeExpiredSsoSessions, touchSsoSession, type SsoSession } from '../store/sso-sessions.js';
import type { Tenant } from '../store/tenants.js';
import { findUser, type User } from '../store/users.js';

export const SESSION_COOKIE = 'gh_session';

const HOUR_MS = 3_600_000;
/** Auth0's defaults: 3 days idle, 7 days absolute. */
const DEFAULT_IDLE_HOURS = 72;
const DEFAULT_ABSOLUTE_HOURS = 168;
/** Activity is written at most this often, so a busy session does not cost a write per request. */
const TOUCH_EVERY_MS = 60_000;
/** Expired sessions are swept now and then by the logins that create new ones. */
const PURGE_EVERY = 200;
let startedSincePurge = 0;

export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function lifetimes(tenant: Tenant): { idleMs: number; absoluteMs: number } {
  const idle = tenant.settings.idle_session_lifetime ?? DEFAULT_IDLE_HOURS;
  const absolute = tenant.settings.session_lifetime ?? DEFAULT_ABSOLUTE_HOURS;
  return { idleMs: idle * HOUR_MS, absoluteMs: absolute * HOUR_MS };
}

/**
 * Cookie attributes: `SameSite=None; Secure` over HTTPS so that silent authentication in a cross-site iframe
 * still sees the session; Lax over plain-HTTP localhost, where browsers refuse `None` without `Secure` (and the
 * app and the server are same-site anyway).
 */
export function cookieOptions(tenant: Tenant, maxAgeSeconds?: number) {
  const secure = tenant.baseUrl.startsWith('https:');
  return {
    path: '/',
    httpOnly: true,
    secure,
    sameSite: secure ? ('none' as const) : ('lax' as const),
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

export interface ActiveSession {
  session: SsoSession;
  user: User;
}

/** The session this browser holds, with its (primary) user; ends it when expired, blocked or deleted. */
export async function currentSession(request: FastifyRequest, services: Services, now = Date.now()): Promise<ActiveSession | undefined> {
  const value = request.cookies[SESSION_COOKIE];
  if (!value) return undefined;
  const tenant = request.tenant;
  const session = await findSsoSessionByTokenHash(services.store.db, tenant.id, sha256(value));
  if (!session) return undefined;
  const user = await findUser(services.store.db, tenant.id, session.user_id);
  if (!user || user.blocked || session.expires_at <= now || session.idle_expires_at <= now) {
    await deleteSsoSession(services.store.db, session.id);
    return undefined;
  }
  if (now - session.last_active_at >= TOUCH_EVERY_MS) {
    const idleExpiresAt = Math.min(session.expires_at, now + lifetimes(tenant).idleMs);
    await touchSsoSession(services.store.db, session.id, now, idleExpiresAt);
    session.last_active_at = now;
    session.idle_expires_at = idleExpiresAt;
  }
  return { session, user };
}

/** The session's `amr` values; empty for sessions that recorded none (before 0023, or a factor without a name). */
export function sessionAmr(session: SsoSession): string[] {
  if (!session.amr) return [];
  try {
    const amr = JSON.parse(session.amr) as unknown;
    return Array.isArray(amr) ? amr.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Starts a new session for `user` (ending the one this browser held) and sets its cookie. `amr` says how the
 * user authenticated (["pwd"], ["pwd","mfa"]); the ID tokens issued from the session carry it.
 */
export async function startSession(request: FastifyRequest, reply: FastifyReply, services: Services, user: User, now = Date.now(), amr?: string[]): Promise<SsoSession> {
  await endSession(request, reply, services);
  if (++startedSincePurge >= PURGE_EVERY) {
    startedSincePurge = 0;
    await purgeExpiredSsoSessions(services.store.db, now);
    await purgeExpiredSamlSessions(services.store.db, now);
  }
  const tenant = request.tenant;
  const { idleMs, absoluteMs } = lifetimes(tenant);
  const value = randomSecret(32);
  const session: SsoSession = {
    id: randomAlphanumeric(32),
    tenant_id: tenant.id,
    token_hash: sha256(value),
    user_id: user.user_id,
    authenticated_at: now,
    last_active_at: now,
    idle_expires_at: Math.min(now + idleMs, now + absoluteMs),
    expires_at: now + absoluteMs,
    ip: request.ip,
    user_agent: (request.headers['user-agent'] ?? '').slice(0, 512) || null,
    created_at: now,
    amr: amr ? JSON.stringify(amr) : null,
  };
  await insertSsoSession(services.store.db, session);
  reply.setCookie(SESSION_COOKIE, value, cookieOptions(tenant, Math.floor(absoluteMs / 1000)));
  return session;
}

/**
 * Ends the browser's session, if it has one, and clears its cookie; returns whose it was (for the logout's log
 * event). With an initiator (a logout), the clients that took part are sent logout tokens (back-channel logout,
 * queued here and delivered by the worker); a session replaced by a new login tells no one.
 */
export async function endSession(request: FastifyRequest, reply: FastifyReply, services: Services, initiator?: LogoutInitiator): Promise<string | undefined> {
  return (await endSsoSession(request, reply, services, initiator))?.user_id;
}

/** As endSession, returning the session that ended (single logout needs its id to find its SAML participants). */
export async function endSsoSession(request: FastifyRequest, reply: FastifyReply, services: Services, initiator?: LogoutInitiator): Promise<SsoSession | undefined> {
  const value = request.cookies[SESSION_COOKIE];
  if (!value) return undefined;
  const session = await findSsoSessionByTokenHash(services.store.db, request.tenant.id, sha256(value));
  if (session && initiator) await queueBackchannelLogouts(services, request.tenant, [session], initiator);
  if (session) await deleteSsoSession(services.store.db, session.id);
  reply.clearCookie(SESSION_COOKIE, cookieOptions(request.tenant));
  return session;
}
