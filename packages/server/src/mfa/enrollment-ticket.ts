/**
 * Enrollment tickets (the reference's POST /api/v2/guardian/enrollments/ticket): a link that lets one user enroll
 * a second factor without their password, emailed by us (`send_mail`) or handed over by the administrator's own
 * means. The page it opens is login/mfa-enrollment-ticket-page.ts.
 *
 * Security read. Whoever holds the link can add an authenticator to the account without its password, so:
 *  - it is bound to its user and tenant (the row's, looked up by the SHA-256 of the secret within the tenant of
 *    the request; the secret itself, 256 random bits, is never stored), and a deleted or blocked user's opens
 *    nothing;
 *  - it is single use: spent in the same transaction that confirms the enrollment, by a conditional write (of
 *    two tabs, one enrolls), and it expires: 5 days, the reference's figure;
 *  - it only enrolls: no session, no cookie, no token; the person then logs in as anyone does, password first;
 *  - with `allow_multiple_enrollments` false (the default) it is refused to a user who has a confirmed factor
 *    already: else a leaked link would let a stranger add theirs beside the owner's. With it true, a factor is
 *    added beside the others (and the existing recovery code is kept);
 *  - the codes typed on the page count toward the factor lock like any other answer (lockout.ts).
 * Factors: the authenticator app (otp) only. The reference lets email never be enrolled this way; phone and
 * push do not exist here; security keys and passkeys are enrolled from a login (they need the login's
 * ceremony), so a ticket for them answers 501.
 */
import { createHash } from 'node:crypto';
import { randomAlphanumeric, randomSecret } from '../crypto/ids.js';
import { enqueueEmail, isDeliverableAddress } from '../messaging/email-outbox.js';
import { composeEmail, templateVariables, tenantTemplate } from '../messaging/email-templates.js';
import { mfaEnrollmentEmail, tenantUrl } from '../messaging/templates.js';
import type { Services } from '../services.js';
import {
  findMfaEnrollmentTicket,
  insertMfaEnrollmentTicket,
  purgeExpiredMfaEnrollmentTickets,
  spendMfaEnrollmentTicket,
  type MfaEnrollmentTicket,
} from '../store/mfa-enrollment-tickets.js';
import { listMfaEnrollments } from '../store/mfa-enrollments.js';
import type { Tenant } from '../store/tenants.js';
import { findPrimaryUser, type User } from '../store/users.js';
import type { FactorContext } from './factor.js';
import { checkFactorAnswer } from './lock-notice.js';
import { factorEnabled } from './policy.js';
import { recoveryCode } from './recovery-code.js';
import { totp } from './totp.js';

export const ENROLLMENT_TICKET_PATH = '/u/mfa-enrollment';
export const ENROLLMENT_TICKET_LIFETIME_MS = 5 * 24 * 3_600_000;

/** The reference's `factor` values. */
export const TICKET_FACTORS = ['push-notification', 'phone', 'email', 'otp', 'webauthn-roaming', 'webauthn-platform'] as const;
export type TicketFactor = (typeof TICKET_FACTORS)[number];

/** A ticket as its URL carries it: 32 random bytes, base64url. */
const SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

export interface TicketRequest {
  factor?: TicketFactor | undefined;
  allowMultiple: boolean;
  /** The address to email the link to, or undefined: not emailed. */
  mailTo?: string | undefined;
}

/** Creates the ticket and, when asked, queues its email in the same transaction. */
export async function createEnrollmentTicket(services: Services, tenant: Tenant, user: User, request: TicketRequest, now = Date.now()): Promise<{ ticketId: string; ticketUrl: string; mailed: boolean }> {
  const db = services.store.db;
  const secret = randomSecret(32);
  const ticket: MfaEnrollmentTicket = {
    id: randomAlphanumeric(32),
    tenantId: tenant.id,
    userId: user.user_id,
    factor: request.factor ?? null,
    allowMultiple: request.allowMultiple,
    createdAt: now,
    expiresAt: now + ENROLLMENT_TICKET_LIFETIME_MS,
    usedAt: null,
  };
  const ticketUrl = tenantUrl(tenant, ENROLLMENT_TICKET_PATH, { ticket: secret });
  const template = request.mailTo ? await tenantTemplate(db, tenant.id, 'enrollment_email') : undefined;
  const mailed = request.mailTo !== undefined && isDeliverableAddress(request.mailTo) && !(template && !template.enabled);
  await db.transaction().execute(async (trx) => {
    await insertMfaEnrollmentTicket(trx, ticket, hashOf(secret));
    if (!mailed) return;
    const content = await composeEmail(template, templateVariables(tenant, user, ticketUrl), mfaEnrollmentEmail(tenant, ticketUrl));
    await enqueueEmail(trx, services.sealer, { tenantId: tenant.id, to: request.mailTo!, ...content }, now);
  });
  await purgeExpiredMfaEnrollmentTickets(db, now);
  return { ticketId: ticket.id, ticketUrl, mailed };
}

/** Why a ticket opens nothing; each is told plainly on the page. */
export type TicketProblem = 'invalid' | 'used' | 'expired' | 'enrolled' | 'unavailable';

export type OpenedTicket = { ticket: MfaEnrollmentTicket; user: User } | { problem: TicketProblem };

/** The ticket of this secret in the tenant, with its user, when it may still enroll; else why not. */
export async function openEnrollmentTicket(services: Services, tenant: Tenant, secret: unknown, now = Date.now()): Promise<OpenedTicket> {
  if (typeof secret !== 'string' || !SECRET_FORMAT.test(secret)) return { problem: 'invalid' };
  const db = services.store.db;
  const ticket = await findMfaEnrollmentTicket(db, tenant.id, hashOf(secret));
  if (!ticket) return { problem: 'invalid' };
  if (ticket.usedAt !== null) return { problem: 'used' };
  if (ticket.expiresAt <= now) return { problem: 'expired' };
  const user = await findPrimaryUser(db, tenant.id, ticket.userId);
  if (!user || user.blocked) return { problem: 'invalid' };
  if (!factorEnabled(tenant, 'otp')) return { problem: 'unavailable' };
  const confirmed = (await listMfaEnrollments(db, tenant.id, user.user_id)).filter((e) => e.confirmed && e.type !== 'recovery-code');
  // Only an authenticator app is enrolled here: a user who has one has nothing to add with this link.
  if ((!ticket.allowMultiple && confirmed.length > 0) || confirmed.some((e) => e.type === 'totp')) return { problem: 'enrolled' };
  return { ticket, user };
}

function factorContext(services: Services, tenantId: string, userId: string, now: number): FactorContext {
  return { db: services.store.db, sealer: services.sealer, tenantId, userId, now };
}

/** The authenticator app's secret and otpauth URI for the page (a reload shows the same pending secret). */
export async function startTicketEnrollment(services: Services, tenant: Tenant, user: User): Promise<{ secret: string; uri: string }> {
  const started = await totp.enroll(factorContext(services, tenant.id, user.user_id, Date.now()), {
    issuer: tenant.friendlyName || tenant.name,
    label: user.email ?? user.username ?? user.phone_number ?? user.user_id,
  });
  return { secret: started.secret, uri: started.uri };
}

class WrongCode extends Error {}

export type TicketAnswer =
  /** Enrolled, the ticket spent; `recoveryCode` when a new one was issued (shown once). */
  | { outcome: 'enrolled'; recoveryCode?: string }
  | { outcome: 'wrong'; nowLocked: boolean }
  | { outcome: 'locked' }
  /** Another request spent the ticket first. */
  | { outcome: 'used' };

/**
 * Checks the first code of the pending authenticator app and, when right, confirms it and spends the ticket in
 * one transaction: a ticket is spent exactly when a factor was enrolled with it.
 */
export async function answerTicketEnrollment(services: Services, tenant: Tenant, opened: { ticket: MfaEnrollmentTicket; user: User }, code: string): Promise<TicketAnswer> {
  const { ticket, user } = opened;
  const now = Date.now();
  const db = services.store.db;
  const enrollments = await listMfaEnrollments(db, tenant.id, user.user_id);
  const pending = enrollments.find((e) => e.type === 'totp' && !e.confirmed);
  if (!pending) return { outcome: 'wrong', nowLocked: false };
  let spent = true;
  const checked = await checkFactorAnswer(services, tenant, user.user_id, async () => {
    try {
      await db.transaction().execute(async (trx) => {
        // The ticket first: a second request for it waits on its row until this one commits, then finds it spent
        // and is told so, rather than "wrong code" from a time step this one used.
        spent = await spendMfaEnrollmentTicket(trx, ticket.id, now);
        if (!spent) throw new WrongCode();
        if (!(await totp.verify({ ...factorContext(services, tenant.id, user.user_id, now), db: trx }, pending, code))) throw new WrongCode();
      });
      return true;
    } catch (error) {
      if (error instanceof WrongCode) return false;
      throw error;
    }
  });
  if (!spent) return { outcome: 'used' };
  if (checked.outcome !== 'right') return checked;
  // A user with a recovery code keeps it; a first factor comes with one, as in a login's enrollment.
  if (enrollments.some((e) => e.type === 'recovery-code')) return { outcome: 'enrolled' };
  const issued = await recoveryCode.enroll(factorContext(services, tenant.id, user.user_id, now), { issuer: '', label: '' });
  return { outcome: 'enrolled', recoveryCode: issued.code };
}
