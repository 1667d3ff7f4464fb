/**
 * The notice of a factor lock: when a second factor locks (the 10th wrong answer in a row, lockout.ts), the user
 * is emailed as after a password brute-force block (protection/block-notice.ts): the same switch (the brute-force
 * `user_notification` shield), the same editable template (blocked_account, whose `url` is the link), and the
 * same page (/u/unblock), where the link lifts the factor lock. One notice per lock: only the answer that took
 * the streak's last place is `nowLocked`. The link is a user ticket (messaging/tickets.ts, `mfa_unblock`: kept
 * hashed, single use, 30 days like the lock); a newer notice or an administrator's unblock spends the older links,
 * so a link lifts only the lock it was sent for.
 * The reference sends no email of its own on an MFA lock that we could find; the issue asks for the password's.
 */
import type { Services } from '../services.js';
import { enqueueEmail, isDeliverableAddress } from '../messaging/email-outbox.js';
import { composeEmail, templateVariables, tenantTemplate } from '../messaging/email-templates.js';
import { mfaLockNoticeEmail, tenantUrl } from '../messaging/templates.js';
import { findTicket, issueTicket, revokeTickets, spendTicket, usable } from '../messaging/tickets.js';
import { UNBLOCK_PATH } from '../protection/block-notice.js';
import type { Tenant } from '../store/tenants.js';
import { findPrimaryUser } from '../store/users.js';
import { checkAnswer, liftMfaLock, type CheckedAnswer } from './lockout.js';

/** checkAnswer, and the notice when this answer locked the factor. A notice that cannot be queued does not fail the answer. */
export async function checkFactorAnswer(services: Services, tenant: Tenant, userId: string, check: () => Promise<boolean>): Promise<CheckedAnswer> {
  const checked = await checkAnswer(services.attackProtection.counters, tenant.id, userId, check);
  if (checked.outcome === 'wrong' && checked.nowLocked) {
    // The lock itself stands either way; a notice lost to a failing database is not worth a 500 here.
    await queueLockNotice(services, tenant, userId).catch(() => undefined);
  }
  return checked;
}

async function queueLockNotice(services: Services, tenant: Tenant, userId: string): Promise<void> {
  const bruteForce = (await services.attackProtection.settings(tenant.id)).brute_force_protection;
  if (!bruteForce.enabled || !bruteForce.shields.includes('user_notification')) return;
  const db = services.store.db;
  const user = await findPrimaryUser(db, tenant.id, userId);
  if (!user?.email || !isDeliverableAddress(user.email)) return;
  const template = await tenantTemplate(db, tenant.id, 'blocked_account');
  if (template && !template.enabled) return;
  const to = user.email;
  await db.transaction().execute(async (trx) => {
    await revokeTickets(trx, tenant.id, userId, 'mfa_unblock');
    const ticket = await issueTicket(trx, { tenantId: tenant.id, userId, purpose: 'mfa_unblock', email: to });
    const link = tenantUrl(tenant, UNBLOCK_PATH, { ticket });
    const content = await composeEmail(template, templateVariables(tenant, user, link), mfaLockNoticeEmail(tenant, link));
    await enqueueEmail(trx, services.sealer, { tenantId: tenant.id, to, ...content });
  });
}

/** The notice's link: lifts the factor lock it was sent for, once. False for any other value. */
export async function liftLockByTicket(services: Services, tenantId: string, value: unknown): Promise<boolean> {
  const ticket = await findTicket(services.store.db, tenantId, 'mfa_unblock', value);
  if (!ticket || !usable(ticket) || !(await spendTicket(services.store.db, ticket))) return false;
  await liftMfaLock(services.attackProtection.counters, tenantId, ticket.user_id);
  return true;
}

/** An administrator's unblock: the lock goes, and the links of earlier notices with it. */
export async function liftLockAsAdministrator(services: Services, tenantId: string, userId: string): Promise<void> {
  await liftMfaLock(services.attackProtection.counters, tenantId, userId);
  await revokeTickets(services.store.db, tenantId, userId, 'mfa_unblock');
}
