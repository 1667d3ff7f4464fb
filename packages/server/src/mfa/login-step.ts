/**
 * The second step of a hosted login, as domain logic (the pages are login/mfa-page.ts). A first factor that
 * passed while the tenant's policy requires MFA does not start a session: it leaves a challenge on the login
 * transaction (`requireSecondFactor`), and the person then, on the same transaction:
 *  - with no second factor yet, enrolls: is shown the TOTP secret and proves it with the first code, or (the
 *    tenant's WebAuthn factors) registers a security key or this device's authenticator; then is shown a
 *    recovery code once;
 *  - with one, answers with a code, with a security key / this device (tried first when the person has one),
 *    or with the recovery code, which is used up and replaced by a new one shown once.
 * Every answer counts toward the lockout before it is checked (lockout.ts); a code's time step and a
 * recovery code are single use (the factors). The session started at the end records `amr` = the first
 * factor's values plus `mfa`.
 */
import { randomAlphanumeric } from '../crypto/ids.js';
import type { Services } from '../services.js';
import { claimMfaChallenge, deleteMfaChallenge, purgeExpiredMfaChallenges, setChallengeRecoveryCode, type MfaChallenge } from '../store/mfa-challenges.js';
import { listMfaEnrollments, type MfaEnrollment } from '../store/mfa-enrollments.js';
import type { Tenant } from '../store/tenants.js';
import type { User } from '../store/users.js';
import type { FactorContext } from './factor.js';
import type { LoginTransaction } from '../login/transactions.js';
import { openCeremony, takeCeremony } from '../login/transactions.js';
import { checkFactorAnswer } from './lock-notice.js';
import { findPrimaryUser } from '../store/users.js';
import { canReceiveEmailCodes, MAX_EMAIL_CODES, sendEmailCode, verifyEmailCode } from './email.js';
import { factorEnabled, mfaRequired, secondFactorOwed, stepUpRequested } from './policy.js';
import { browserRemembered } from './remember-browser.js';
import type { FastifyRequest } from 'fastify';
import { authenticationCeremony, credentialAmr, registrationCeremony, saveRegistration, verifyRegistration, completeAuthentication } from './webauthn.js';
import { recoveryCode } from './recovery-code.js';
import { totp } from './totp.js';

/** As long as the login transaction it belongs to. */
const CHALLENGE_LIFETIME_MS = 30 * 60_000;
let createdSincePurge = 0;

export type { MfaChallenge };

/** The WebAuthn factors, as Guardian names them (and as their enrollments' types). */
const WEBAUTHN_FACTORS = ['webauthn-roaming', 'webauthn-platform'] as const;
type WebauthnFactor = (typeof WEBAUTHN_FACTORS)[number];

/** What the second step shows now. */
export type SecondFactorView =
  | { kind: 'enroll'; secret: string; uri: string; /** Other enrollable factors. */ alternatives: WebauthnFactor[] }
  | { kind: 'webauthn-enroll'; factor: WebauthnFactor; options: unknown; otpEnabled: boolean }
  | { kind: 'challenge'; hasRecoveryCode: boolean; hasWebauthn: boolean; hasEmail: boolean }
  | { kind: 'webauthn-challenge'; options: unknown; hasRecoveryCode: boolean; hasTotp: boolean; hasEmail: boolean }
  /** Codes by email: `sent` once a live code is out, to `address` (masked). */
  | { kind: 'email-challenge'; sent: boolean; address: string; canSendMore: boolean }
  /** A recovery code to keep, shown once: the person confirms they saved it, and the login finishes. */
  | { kind: 'recovery-code'; code: string };

export type SecondFactorAnswer = { code: string } | { recoveryCode: string } | { webauthn: string } | { emailCode: string };

export type AnswerOutcome =
  /** Right: the login may finish (`finishSecondFactor`), with `amr` values the factor adds (hwk, swk). */
  | { outcome: 'done'; amr?: string[] }
  /** Right, and a (new) recovery code is now to be shown before the login finishes; `enrolled`: a factor was enrolled. */
  | { outcome: 'show-recovery-code'; enrolled: boolean }
  | { outcome: 'wrong'; nowLocked: boolean }
  | { outcome: 'locked' };

const recoveryCodeContext = (challenge: MfaChallenge) => `mfa-recovery-code:${challenge.tenantId}:${challenge.id}`;

function factorContext(services: Services, tenantId: string, userId: string): FactorContext {
  return { db: services.store.db, sealer: services.sealer, tenantId, userId, now: Date.now() };
}

/**
 * Whether `userId`, who has just given a first factor (or holds a session without `mfa`), owes a second one now:
 * the application asked for it (step-up), or the tenant's policy does and this browser is not remembered for them.
 * The remembered-browser lookup runs only when the policy alone is why (one query, then).
 */
export async function secondFactorDue(request: FastifyRequest, services: Services, tenant: Tenant, userId: string, acrValues: readonly string[] | undefined): Promise<boolean> {
  if (!secondFactorOwed(tenant, acrValues)) return false;
  if (stepUpRequested(acrValues)) return true;
  return mfaRequired(tenant) && !(await browserRemembered(request, services, tenant, userId));
}

/**
 * Leaves a second factor owed on the transaction (kept if one for the same user is already under way): one
 * statement, where a login without MFA writes its session.
 */
export async function requireSecondFactor(services: Services, tenantId: string, userId: string, transactionId: string, firstFactorAmr: string[]): Promise<void> {
  const now = Date.now();
  if (++createdSincePurge >= 200) {
    createdSincePurge = 0;
    await purgeExpiredMfaChallenges(services.store.db, now);
  }
  await claimMfaChallenge(services.store.db, {
    id: randomAlphanumeric(24),
    tenantId,
    userId,
    transactionId,
    amr: firstFactorAmr,
    recoveryCodeSealed: null,
    expiresAt: now + CHALLENGE_LIFETIME_MS,
    createdAt: now,
  }, now);
}

function confirmedTotp(enrollments: MfaEnrollment[]): MfaEnrollment | undefined {
  return enrollments.find((e) => e.type === 'totp' && e.confirmed);
}

function enabledWebauthn(tenant: Tenant): WebauthnFactor[] {
  return WEBAUTHN_FACTORS.filter((name) => factorEnabled(tenant, name));
}

/** The user's confirmed WebAuthn second factors the tenant has enabled. */
function confirmedWebauthn(tenant: Tenant, enrollments: MfaEnrollment[]): MfaEnrollment[] {
  const enabled: string[] = enabledWebauthn(tenant);
  return enrollments.filter((e) => e.confirmed && enabled.includes(e.type));
}

/**
 * What the step shows now. `method` is what the person chose ("try another method"): `otp`, or a WebAuthn
 * factor's name to enroll that instead of an authenticator app. A WebAuthn view opens its ceremony on the
 * login transaction.
 */
export async function secondFactorView(services: Services, tenant: Tenant, challenge: MfaChallenge, user: User, transaction: LoginTransaction, method?: string): Promise<SecondFactorView> {
  if (challenge.recoveryCodeSealed) return { kind: 'recovery-code', code: services.sealer.unseal(challenge.recoveryCodeSealed, recoveryCodeContext(challenge)) };
  const enrollments = await listMfaEnrollments(services.store.db, tenant.id, user.user_id);
  const hasRecoveryCode = enrollments.some((e) => e.type === 'recovery-code');
  const keys = confirmedWebauthn(tenant, enrollments);
  const hasTotp = confirmedTotp(enrollments) !== undefined;
  const hasEmail = (hasTotp || keys.length > 0) && emailFactorFor(tenant, user);
  if (hasEmail && method === 'email') {
    const now = Date.now();
    return { kind: 'email-challenge', sent: (challenge.emailCodeExpiresAt ?? 0) > now, address: maskedAddress(user.email!), canSendMore: (challenge.emailCodesSent ?? 0) < MAX_EMAIL_CODES };
  }
  // The recovery code stands in for whichever factor the person has (the page shows its entry form).
  if (method === 'recovery-code' && hasRecoveryCode && keys.length > 0) return { kind: 'challenge', hasRecoveryCode, hasWebauthn: true, hasEmail };
  if (keys.length > 0 && !(method === 'otp' && hasTotp)) {
    const ceremony = await authenticationCeremony(tenant, 'mfa-challenge', keys);
    await openCeremony(services, transaction, ceremony);
    return { kind: 'webauthn-challenge', options: ceremony.options, hasRecoveryCode, hasTotp, hasEmail };
  }
  if (hasTotp) return { kind: 'challenge', hasRecoveryCode, hasWebauthn: keys.length > 0, hasEmail };
  const webauthn = enabledWebauthn(tenant);
  const chosen = webauthn.find((name) => name === method) ?? (factorEnabled(tenant, 'otp') ? undefined : webauthn[0]);
  if (chosen) {
    const name = user.email ?? user.username ?? user.phone_number ?? user.user_id;
    const ceremony = await registrationCeremony(tenant, 'mfa-enroll', chosen, { id: user.user_id, name }, enrollments);
    await openCeremony(services, transaction, ceremony);
    return { kind: 'webauthn-enroll', factor: chosen, options: ceremony.options, otpEnabled: factorEnabled(tenant, 'otp') };
  }
  const started = await totp.enroll(factorContext(services, tenant.id, user.user_id), {
    issuer: tenant.friendlyName || tenant.name,
    label: user.email ?? user.username ?? user.phone_number ?? user.user_id,
  });
  return { kind: 'enroll', secret: started.secret, uri: started.uri, alternatives: webauthn };
}

function emailFactorFor(tenant: Tenant, user: User): boolean {
  return factorEnabled(tenant, 'email') && canReceiveEmailCodes(user);
}

/** a•••@example.com: enough to recognise one's address, not to learn it. */
function maskedAddress(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}•••${email.slice(at)}`;
}

/** Emails a code for this step ("email me a code"), where the person may use email. */
export async function sendSecondFactorEmail(services: Services, tenant: Tenant, challenge: MfaChallenge, user: User): Promise<'sent' | 'limit' | 'undeliverable'> {
  const enrollments = await listMfaEnrollments(services.store.db, tenant.id, user.user_id);
  const hasFactor = confirmedTotp(enrollments) !== undefined || confirmedWebauthn(tenant, enrollments).length > 0;
  if (!hasFactor || !emailFactorFor(tenant, user)) return 'undeliverable';
  return sendEmailCode(services, tenant, challenge, user);
}

/**
 * Issues the user's new recovery code and keeps it, sealed, on the challenge until it has been shown, with the
 * `amr` values of the factor just enrolled (otp, hwk, swk), which the session records once the step ends.
 */
async function issueRecoveryCode(services: Services, challenge: MfaChallenge, factorAmr: string[] = []): Promise<void> {
  const { code } = await recoveryCode.enroll(factorContext(services, challenge.tenantId, challenge.userId), { issuer: '', label: '' });
  const amr = factorAmr.length > 0 ? [...new Set([...challenge.amr, ...factorAmr])] : undefined;
  await setChallengeRecoveryCode(services.store.db, challenge.id, services.sealer.seal(code, recoveryCodeContext(challenge)), amr);
}

export async function answerSecondFactor(
  services: Services,
  tenant: Tenant,
  challenge: MfaChallenge,
  transaction: LoginTransaction,
  answer: SecondFactorAnswer,
  userAgent?: string,
): Promise<AnswerOutcome> {
  const context = factorContext(services, challenge.tenantId, challenge.userId);
  const enrollments = await listMfaEnrollments(services.store.db, challenge.tenantId, challenge.userId);
  const enrolled = confirmedTotp(enrollments);

  if ('emailCode' in answer) {
    const user = await findPrimaryUser(services.store.db, challenge.tenantId, challenge.userId);
    // Email stands in for a factor the person has; it is not one to have alone.
    if (!user || !emailFactorFor(tenant, user) || (!enrolled && confirmedWebauthn(tenant, enrollments).length === 0)) return { outcome: 'wrong', nowLocked: false };
    // `email`: the method's name as the reference's authentication methods call it (RFC 8176 has none for it).
    return checkFactorAnswer(services, tenant, challenge.userId, () => verifyEmailCode(services, challenge, answer.emailCode)).then((checked) => (checked.outcome === 'right' ? { outcome: 'done' as const, amr: ['email'] } : checked));
  }

  if ('webauthn' in answer) {
    // The ceremony the page showed, taken once whatever the answer.
    const ceremony = await takeCeremony(services, transaction, ['mfa-enroll', 'mfa-challenge']);
    if (!ceremony) return { outcome: 'wrong', nowLocked: false };
    if (ceremony.purpose === 'mfa-enroll') {
      // Enrolling is not guessing (a new credential proves nothing of the account): no lockout count.
      if (enrolled || confirmedWebauthn(tenant, enrollments).length > 0 || !ceremony.kind || !enabledWebauthn(tenant).includes(ceremony.kind as WebauthnFactor)) return { outcome: 'wrong', nowLocked: false };
      const made = await verifyRegistration(tenant, ceremony, challenge.userId, answer.webauthn, userAgent);
      if (!made || !(await saveRegistration(services.store.db, made))) return { outcome: 'wrong', nowLocked: false };
      await issueRecoveryCode(services, challenge, [credentialAmr(made)]);
      return { outcome: 'show-recovery-code', enrolled: true };
    }
    let used: MfaEnrollment | undefined;
    const checked = await checkFactorAnswer(services, tenant, challenge.userId, async () => {
      const result = await completeAuthentication(services.store.db, tenant, ceremony, answer.webauthn, { types: enabledWebauthn(tenant), userId: challenge.userId });
      if (result.outcome === 'right') used = result.enrollment;
      return result.outcome === 'right';
    });
    if (checked.outcome !== 'right') return checked;
    return { outcome: 'done', ...(used && { amr: [credentialAmr(used)] }) };
  }

  if ('recoveryCode' in answer) {
    const stored = enrollments.find((e) => e.type === 'recovery-code');
    // Without a second factor enrolled there is nothing a recovery code stands in for.
    if (!enrolled && confirmedWebauthn(tenant, enrollments).length === 0) return { outcome: 'wrong', nowLocked: false };
    const checked = await checkFactorAnswer(services, tenant, challenge.userId, async () => stored !== undefined && recoveryCode.verify(context, stored, answer.recoveryCode));
    if (checked.outcome !== 'right') return checked;
    await issueRecoveryCode(services, challenge);
    return { outcome: 'show-recovery-code', enrolled: false };
  }

  const enrollment = enrolled ?? enrollments.find((e) => e.type === 'totp');
  if (!enrollment) return { outcome: 'wrong', nowLocked: false };
  const checked = await checkFactorAnswer(services, tenant, challenge.userId, () => totp.verify(context, enrollment, answer.code));
  if (checked.outcome !== 'right') return checked;
  if (enrolled) return { outcome: 'done', amr: ['otp'] };
  // The first code confirmed a new enrollment: the recovery code comes with it.
  await issueRecoveryCode(services, challenge, ['otp']);
  return { outcome: 'show-recovery-code', enrolled: true };
}

/**
 * Ends the challenge once the second factor was given (and any recovery code shown): the `amr` the session is
 * to record. Undefined when another request already ended it (a double submit).
 */
export async function finishSecondFactor(services: Services, challenge: MfaChallenge, factorAmr: string[] = []): Promise<string[] | undefined> {
  if (!(await deleteMfaChallenge(services.store.db, challenge.id))) return undefined;
  return [...new Set([...challenge.amr, ...factorAmr, 'mfa'])];
}
