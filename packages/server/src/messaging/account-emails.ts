/**
 * The account emails: verification after signup and password reset. Each writes a ticket and queues its email
 * in one transaction (the caller's, when the email belongs to a bigger change such as a signup), so a committed
 * change always has its email and a rolled-back one never sends a link that cannot work. The tenant's saved
 * template (email-templates.ts), when there is one, decides the words, the link's lifetime, and whether the
 * email is sent at all (`enabled`).
 */
import type { Kysely } from 'kysely';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import type { Database } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';
import { findUserInConnection, type User } from '../store/users.js';
import { enqueueEmail, isDeliverableAddress } from './email-outbox.js';
import { composeEmail, templateVariables, tenantTemplate } from './email-templates.js';
import { passwordResetEmail, tenantUrl, verificationEmail } from './templates.js';
import { countTicketsSince, issueTicket, purgeExpiredTickets } from './tickets.js';
import { normalizeEmail } from '../connections/email-address.js';

/** The hosted page a reset link opens. */
export const RESET_TICKET_PATH = '/u/reset-password/ticket';
/** The link in a verification email. */
export const VERIFY_EMAIL_PATH = '/u/email-verification';

/** At most this many reset emails per user and hour: enough for a lost email, too few to flood a mailbox. */
export const MAX_RESET_EMAILS_PER_HOUR = 5;

/**
 * Queues the verification email of `user` with `db` (pass the signup's transaction). Skips users without an
 * address (`undeliverable`), and everyone while the tenant's verify_email template is disabled (`disabled`).
 */
export async function queueVerificationEmail(
  db: Kysely<Database>,
  services: Services,
  tenant: Tenant,
  user: User,
  clientId?: string,
): Promise<'queued' | 'undeliverable' | 'disabled'> {
  if (!user.email || user.email_verified || !isDeliverableAddress(user.email)) return 'undeliverable';
  const template = await tenantTemplate(db, tenant.id, 'verify_email');
  if (template && !template.enabled) return 'disabled';
  const lifetimeMs = template?.url_lifetime_in_seconds ? template.url_lifetime_in_seconds * 1000 : undefined;
  const ticket = await issueTicket(db, { tenantId: tenant.id, userId: user.user_id, purpose: 'email_verification', email: user.email, clientId, lifetimeMs });
  const url = tenantUrl(tenant, VERIFY_EMAIL_PATH, { ticket });
  const content = await composeEmail(template, templateVariables(tenant, user, url), verificationEmail(tenant, url));
  await enqueueEmail(db, services.sealer, { tenantId: tenant.id, to: user.email, ...content });
  return 'queued';
}

/** Sends `user` a verification email now (its own transaction). */
export async function sendVerificationEmail(services: Services, tenant: Tenant, user: User, clientId?: string): Promise<'queued' | 'undeliverable' | 'disabled'> {
  return services.store.db.transaction().execute((trx) => queueVerificationEmail(trx, services, tenant, user, clientId));
}

/**
 * "Forgot password": emails a reset link when `identifier` (an email, or a username where the connection has
 * them) names a user of the connection. Says nothing either way: callers answer the same whatever happened.
 * Returns whether an email was queued, for tests and logs only.
 */
export async function requestPasswordReset(
  services: Services,
  tenant: Tenant,
  connection: Connection,
  identifier: { email?: string | undefined; username?: string | undefined },
  clientId?: string,
  now = Date.now(),
): Promise<boolean> {
  const db = services.store.db;
  const email = identifier.email ? normalizeEmail(identifier.email) : undefined;
  const username = identifier.username?.trim().toLowerCase();
  const user = email ? await findUserInConnection(db, connection.id, { email }) : username ? await findUserInConnection(db, connection.id, { username }) : undefined;
  if (!user?.email || !user.password_hash || !isDeliverableAddress(user.email)) return false;
  if ((await countTicketsSince(db, tenant.id, user.user_id, 'password_reset', now - 3_600_000)) >= MAX_RESET_EMAILS_PER_HOUR) return false;
  const to = user.email;
  const template = await tenantTemplate(db, tenant.id, 'reset_email');
  if (template && !template.enabled) return false;
  const lifetimeMs = template?.url_lifetime_in_seconds ? template.url_lifetime_in_seconds * 1000 : undefined;
  await db.transaction().execute(async (trx) => {
    const ticket = await issueTicket(trx, { tenantId: tenant.id, userId: user.user_id, purpose: 'password_reset', email: to, clientId, lifetimeMs }, now);
    const url = tenantUrl(tenant, RESET_TICKET_PATH, { ticket });
    const content = await composeEmail(template, templateVariables(tenant, user, url), passwordResetEmail(tenant, url));
    await enqueueEmail(trx, services.sealer, { tenantId: tenant.id, to, ...content }, now);
  });
  await purgeExpiredTickets(db, now);
  return true;
}
