/**
 * Email one-time codes as a second factor (the Guardian `email` factor): 6 digits, sent through the outbox
 * (so the dev mailbox or the tenant's provider delivers them), valid 5 minutes, single use, kept only as a
 * hash on the login's MFA challenge. As in the reference, email is never a person's only second factor: it is
 * offered as another way at the challenge, to a user whose address is verified, when the tenant enables it.
 * At most 5 codes per challenge, so the step cannot be used to flood a mailbox. Wrong codes count toward the
 * MFA lockout like any other answer (lockout.ts, in login-step.ts). The tenant's mfa_oob_code template, when
 * saved, gives the words (`code` holds the code); disabled, no code is sent (the step says codes by email are
 * not available).
 */
import { createHash, randomInt } from 'node:crypto';
import { escapeHtml } from '../login/pages/html.js';
import { enqueueEmail, isDeliverableAddress } from '../messaging/email-outbox.js';
import { composeEmail, templateVariables, tenantTemplate } from '../messaging/email-templates.js';
import type { Services } from '../services.js';
import { consumeEmailCode, setEmailCode, type MfaChallenge } from '../store/mfa-challenges.js';
import type { Tenant } from '../store/tenants.js';
import type { User } from '../store/users.js';

const LIFETIME_MS = 5 * 60_000;
export const MAX_EMAIL_CODES = 5;
const CODE = /^\d{6}$/;

const hashOf = (challengeId: string, code: string) => createHash('sha256').update(`${challengeId}:${code}`, 'utf8').digest('hex');

/** Whether `user` can get codes by email in `tenant`'s second step (the factor's switch is the caller's). */
export function canReceiveEmailCodes(user: User): boolean {
  return Boolean(user.email && user.email_verified && isDeliverableAddress(user.email));
}

/** Emails a new code (the earlier one stops working); `limit` once MAX_EMAIL_CODES were sent for this challenge. */
export async function sendEmailCode(services: Services, tenant: Tenant, challenge: MfaChallenge, user: User, now = Date.now()): Promise<'sent' | 'limit' | 'undeliverable'> {
  if (!canReceiveEmailCodes(user)) return 'undeliverable';
  const template = await tenantTemplate(services.store.db, tenant.id, 'mfa_oob_code');
  if (template && !template.enabled) return 'undeliverable';
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const name = tenant.friendlyName || tenant.name;
  const builtIn = {
    subject: `${code} is your ${name} verification code`,
    text: `Your verification code for ${name} is ${code}.\n\nIt works once, for 5 minutes. If you did not try to log in, someone may know your password: change it.`,
    html: `<p>Your verification code for ${escapeHtml(name)} is <strong>${code}</strong>.</p><p>It works once, for 5 minutes. If you did not try to log in, someone may know your password: change it.</p>`,
  };
  const content = await composeEmail(template, { ...templateVariables(tenant, user, ''), code }, builtIn);
  const sent = await services.store.db.transaction().execute(async (trx) => {
    if (!(await setEmailCode(trx, challenge.id, hashOf(challenge.id, code), now + LIFETIME_MS, MAX_EMAIL_CODES))) return false;
    await enqueueEmail(trx, services.sealer, { tenantId: tenant.id, to: user.email!, ...content });
    return true;
  });
  return sent ? 'sent' : 'limit';
}

/** Whether `answer` is the live code of this challenge; using it up (of two requests with it, one gets true). */
export async function verifyEmailCode(services: Services, challenge: MfaChallenge, answer: string, now = Date.now()): Promise<boolean> {
  const code = answer.replace(/[\s-]/g, '');
  if (!CODE.test(code)) return false;
  return consumeEmailCode(services.store.db, challenge.id, hashOf(challenge.id, code), now);
}
