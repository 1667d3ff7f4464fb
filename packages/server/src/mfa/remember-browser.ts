/**
 * Remember this browser: after the second factor, a person may ask not to be asked for it again on this browser
 * (the MFA pages' checkbox, the reference's `rememberBrowser` field, offered as the tenant's Guardian settings
 * say). The browser gets a cookie with a random secret, for that user only; the server keeps its SHA-256
 * (mfa_remembered_browsers, 0029). It stands in for the tenant's MFA policy, never for a step-up an application
 * asks for (acr_values): that one wants a second factor now. The session it leads to records no `mfa` in its
 * `amr`, since none was given. Resetting the user's factors forgets all their browsers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { randomSecret } from '../crypto/ids.js';
import { cookieOptions, sha256 } from '../login/session.js';
import type { Services } from '../services.js';
import type { Database } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';
import { rememberBrowserSettings } from './policy.js';

export const REMEMBER_COOKIE = 'gh_mfa_remember';
/** Expired rows are swept now and then by the browsers that are remembered. */
const PURGE_EVERY = 200;
let rememberedSincePurge = 0;

/** Remembers this browser for `userId` (replacing the one it held, for whichever user). */
export async function rememberBrowser(request: FastifyRequest, reply: FastifyReply, services: Services, userId: string, now = Date.now()): Promise<void> {
  const tenant = request.tenant;
  const db = services.store.db;
  const settings = rememberBrowserSettings(tenant);
  const held = request.cookies[REMEMBER_COOKIE];
  if (held) await db.deleteFrom('mfa_remembered_browsers').where('token_hash', '=', sha256(held)).execute();
  if (++rememberedSincePurge >= PURGE_EVERY) {
    rememberedSincePurge = 0;
    await db.deleteFrom('mfa_remembered_browsers').where('expires_at', '<=', now).execute();
  }
  const value = randomSecret(32);
  const lifetimeMs = settings.mfa_session_overall_timeout * 1000;
  await db
    .insertInto('mfa_remembered_browsers')
    .values({ token_hash: sha256(value), tenant_id: tenant.id, user_id: userId, created_at: now, last_used_at: now, expires_at: now + lifetimeMs })
    .execute();
  reply.setCookie(REMEMBER_COOKIE, value, cookieOptions(tenant, settings.mfa_session_overall_timeout));
}

/**
 * Whether this browser is remembered for `userId` now (within both timeouts, the tenant still offering it);
 * a use moves the inactivity timeout on.
 */
export async function browserRemembered(request: FastifyRequest, services: Services, tenant: Tenant, userId: string, now = Date.now()): Promise<boolean> {
  const value = request.cookies[REMEMBER_COOKIE];
  if (!value) return false;
  const settings = rememberBrowserSettings(tenant);
  // Switching the checkbox off stops honouring what it set, as turning a feature off should.
  if (!settings.display_remember_me_checkbox) return false;
  const db = services.store.db;
  const row = await db.selectFrom('mfa_remembered_browsers').selectAll().where('token_hash', '=', sha256(value)).where('tenant_id', '=', tenant.id).executeTakeFirst();
  if (!row || row.user_id !== userId) return false;
  const inactiveSince = Number(row.last_used_at);
  if (Number(row.expires_at) <= now || now - inactiveSince > settings.mfa_session_inactivity_timeout * 1000) return false;
  // Written at most once a minute, as sessions' activity is: a login and its resume right after cost one read each.
  if (now - inactiveSince >= 60_000) await db.updateTable('mfa_remembered_browsers').set({ last_used_at: now }).where('token_hash', '=', row.token_hash).execute();
  return true;
}

/** Forgets every browser remembered for the user: their factors were reset, or an administrator said so. */
export async function forgetRememberedBrowsers(db: Kysely<Database>, tenantId: string, userId: string): Promise<void> {
  await db.deleteFrom('mfa_remembered_browsers').where('tenant_id', '=', tenantId).where('user_id', '=', userId).execute();
}
