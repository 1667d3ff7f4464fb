/**
 * The second step of a hosted login, as domain logic (the pages are login/mfa-page.ts). A first factor that
 * passed while the tenant's policy requires MFA does not start a session: it leaves a challenge on the login
 * transaction (`requireSecondFactor`), and the person then, on the same transaction:
 *  - with no confirmed TOTP yet, enrolls: is shown the secret, proves it with the first code, and is then shown
 *    a recovery code once;
 *  - with one, answers with a code, or with the recovery code, which is used up and replaced by a new one
 *    shown once.
 * Every answer counts toward the lockout before it is checked (lockout.ts); a code's time step and a
 * recovery code are single use (the factors). The session started at the end records `amr` = the first
 * factor's values plus `mfa`.
 */
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Services } from '../services.js';
import { deleteMfaChallenge, findMfaChallenge, purgeExpiredMfaChallenges, replaceMfaChallenge, setChallengeRecoveryCode, type MfaChallenge } from '../store/mfa-challenges.js';
import { listMfaEnrollments, type MfaEnrollment } from '../store/mfa-enrollments.js';
import type { Tenant } from '../store/tenants.js';
import type { User } from '../store/users.js';
import type { FactorContext } from './factor.js';
import { checkAnswer } from './lockout.js';
import { recoveryCode } from './recovery-code.js';
import { totp } from './totp.js';

/** As long as the login transaction it belongs to. */
const CHALLENGE_LIFETIME_MS = 30 * 60_000;
let createdSincePurge = 0;

export type { MfaChallenge };

/** What the second step shows now. */
export type SecondFactorView =
  | { kind: 'enroll'; secret: string; uri: string }
  | { kind: 'challenge'; hasRecoveryCode: boolean }
  /** A recovery code to keep, shown once: the person confirms they saved it, and the login finishes. */
  | { kind: 'recovery-code'; code: string };

export type SecondFactorAnswer = { code: string } | { recoveryCode: string };

export type AnswerOutcome =
  /** Right: the login may finish (`finishSecondFactor`). */
  | { outcome: 'done' }
  /** Right, and a (new) recovery code is now to be shown before the login finishes. */
  | { outcome: 'show-recovery-code' }
  | { outcome: 'wrong'; nowLocked: boolean }
  | { outcome: 'locked' };

const recoveryCodeContext = (challenge: MfaChallenge) => `mfa-recovery-code:${challenge.tenantId}:${challenge.id}`;

function factorContext(services: Services, tenantId: string, userId: string): FactorContext {
  return { db: services.store.db, sealer: services.sealer, tenantId, userId, now: Date.now() };
}

/** Leaves a second factor owed on the transaction (kept if one for the same user is already under way). */
export async function requireSecondFactor(services: Services, tenantId: string, userId: string, transactionId: string, firstFactorAmr: string[]): Promise<void> {
  const now = Date.now();
  const existing = await findMfaChallenge(services.store.db, tenantId, transactionId, now);
  if (existing?.userId === userId) return;
  if (++createdSincePurge >= 200) {
    createdSincePurge = 0;
    await purgeExpiredMfaChallenges(services.store.db, now);
  }
  await replaceMfaChallenge(services.store.db, {
    id: randomAlphanumeric(24),
    tenantId,
    userId,
    transactionId,
    amr: firstFactorAmr,
    recoveryCodeSealed: null,
    expiresAt: now + CHALLENGE_LIFETIME_MS,
    createdAt: now,
  });
}

export function findSecondFactorChallenge(services: Services, tenantId: string, transactionId: string): Promise<MfaChallenge | undefined> {
  return findMfaChallenge(services.store.db, tenantId, transactionId);
}

function confirmedTotp(enrollments: MfaEnrollment[]): MfaEnrollment | undefined {
  return enrollments.find((e) => e.type === 'totp' && e.confirmed);
}

export async function secondFactorView(services: Services, tenant: Tenant, challenge: MfaChallenge, user: User): Promise<SecondFactorView> {
  if (challenge.recoveryCodeSealed) return { kind: 'recovery-code', code: services.sealer.unseal(challenge.recoveryCodeSealed, recoveryCodeContext(challenge)) };
  const enrollments = await listMfaEnrollments(services.store.db, tenant.id, user.user_id);
  if (confirmedTotp(enrollments)) return { kind: 'challenge', hasRecoveryCode: enrollments.some((e) => e.type === 'recovery-code') };
  const started = await totp.enroll(factorContext(services, tenant.id, user.user_id), {
    issuer: tenant.friendlyName || tenant.name,
    label: user.email ?? user.username ?? user.phone_number ?? user.user_id,
  });
  return { kind: 'enroll', secret: started.secret, uri: started.uri };
}

/** Issues the user's new recovery code and keeps it, sealed, on the challenge until it has been shown. */
async function issueRecoveryCode(services: Services, challenge: MfaChallenge): Promise<void> {
  const { code } = await recoveryCode.enroll(factorContext(services, challenge.tenantId, challenge.userId), { issuer: '', label: '' });
  await setChallengeRecoveryCode(services.store.db, challenge.id, services.sealer.seal(code, recoveryCodeContext(challenge)));
}

export async function answerSecondFactor(services: Services, challenge: MfaChallenge, answer: SecondFactorAnswer): Promise<AnswerOutcome> {
  const context = factorContext(services, challenge.tenantId, challenge.userId);
  const enrollments = await listMfaEnrollments(services.store.db, challenge.tenantId, challenge.userId);
  const enrolled = confirmedTotp(enrollments);
  const counters = services.attackProtection.counters;

  if ('recoveryCode' in answer) {
    const stored = enrollments.find((e) => e.type === 'recovery-code');
    // Without a TOTP enrollment there is nothing a recovery code stands in for.
    if (!enrolled) return { outcome: 'wrong', nowLocked: false };
    const checked = await checkAnswer(counters, challenge.tenantId, challenge.userId, async () => stored !== undefined && recoveryCode.verify(context, stored, answer.recoveryCode));
    if (checked.outcome !== 'right') return checked;
    await issueRecoveryCode(services, challenge);
    return { outcome: 'show-recovery-code' };
  }

  const enrollment = enrolled ?? enrollments.find((e) => e.type === 'totp');
  if (!enrollment) return { outcome: 'wrong', nowLocked: false };
  const checked = await checkAnswer(counters, challenge.tenantId, challenge.userId, () => totp.verify(context, enrollment, answer.code));
  if (checked.outcome !== 'right') return checked;
  if (enrolled) return { outcome: 'done' };
  // The first code confirmed a new enrollment: the recovery code comes with it.
  await issueRecoveryCode(services, challenge);
  return { outcome: 'show-recovery-code' };
}

/**
 * Ends the challenge once the second factor was given (and any recovery code shown): the `amr` the session is
 * to record. Undefined when another request already ended it (a double submit).
 */
export async function finishSecondFactor(services: Services, challenge: MfaChallenge): Promise<string[] | undefined> {
  if (!(await deleteMfaChallenge(services.store.db, challenge.id))) return undefined;
  return [...new Set([...challenge.amr, 'mfa'])];
}
