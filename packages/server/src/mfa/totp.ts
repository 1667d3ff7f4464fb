/**
 * TOTP (RFC 6238) through otplib: SHA-1, 6 digits, 30 s steps (what authenticator apps expect), a code of the
 * step before or after also accepted (clock drift), and a step once accepted never again: the enrollment keeps
 * its last accepted step and only a conditional write that moves it forward accepts a code
 * (store/mfa-enrollments.ts advanceTimeStep), so a code seen over someone's shoulder, or sent twice at once,
 * works once. The secret is sealed at rest, bound to its enrollment's id.
 */
import { createGuardrails, generateSecret, generateURI, verify } from 'otplib';
import type { Sealer } from '../crypto/sealing.js';
import { randomAlphanumeric } from '../crypto/ids.js';
import { advanceTimeStep, insertPendingMfaEnrollment, listMfaEnrollments, type MfaEnrollment } from '../store/mfa-enrollments.js';
import type { Factor, FactorContext } from './factor.js';

const PERIOD_SECONDS = 30;
const CODE = /^\d{6}$/;

/**
 * The shortest secret accepted: 80 bits, what Google Authenticator long issued and what users of an imported
 * tenant's apps still hold (the reference imports them). Below RFC 4226's 128 bits, which our own secrets keep
 * (160 bits); otplib's default guardrail would throw on such a secret at login instead of checking the code.
 */
export const MIN_IMPORTED_SECRET_BYTES = 10;
const guardrails = createGuardrails({ MIN_SECRET_BYTES: MIN_IMPORTED_SECRET_BYTES });

export interface TotpEnrollment {
  enrollment: MfaEnrollment;
  /** Base32, for typing into an authenticator app. */
  secret: string;
  /** `otpauth://totp/…`, the QR code's content. */
  uri: string;
}

const sealContext = (tenantId: string, enrollmentId: string) => `mfa-totp:${tenantId}:${enrollmentId}`;

export function totpSecretOf(context: Pick<FactorContext, 'sealer' | 'tenantId'>, enrollment: MfaEnrollment): string {
  if (enrollment.type !== 'totp' || !enrollment.secretSealed) throw new Error(`enrollment ${enrollment.id} has no TOTP secret`);
  return context.sealer.unseal(enrollment.secretSealed, sealContext(context.tenantId, enrollment.id));
}

/**
 * A confirmed enrollment for a secret brought from elsewhere (a user import's `mfa_factors[].totp.secret`,
 * unpadded Base32), sealed like one enrolled here; the caller sets the user.
 */
export function importedTotpEnrollment(sealer: Sealer, tenantId: string, secret: string, now: number): Omit<MfaEnrollment, 'userId'> {
  const id = `totp|dev_${randomAlphanumeric(16)}`;
  return {
    id,
    tenantId,
    type: 'totp',
    confirmed: true,
    secretSealed: sealer.seal(secret, sealContext(tenantId, id)),
    codeHash: null,
    lastTimeStep: null,
    createdAt: now,
    confirmedAt: now,
    lastAuthAt: null,
  };
}

/** Bytes a secret of unpadded Base32 holds (5 bits a character, trailing bits dropped). */
export const base32Bytes = (secret: string): number => Math.floor((secret.length * 5) / 8);

/** Spaces and dashes people type between digit groups do not count. */
export function normaliseCode(answer: string): string {
  return answer.replace(/[\s-]/g, '');
}

export const totp: Factor<TotpEnrollment> = {
  name: 'otp',
  type: 'totp',

  async enroll(context, details) {
    // A pending enrollment is resumed, so a reload of the enrollment page, or another tab, shows the same secret.
    // The write is conditional (one pending per user and type, 0040): a request that loses the race to make it
    // resumes the winner's, and one whose winner was confirmed meanwhile makes a new one.
    for (;;) {
      const pending = (await listMfaEnrollments(context.db, context.tenantId, context.userId)).find((e) => e.type === 'totp' && !e.confirmed);
      if (pending) return started(pending, totpSecretOf(context, pending));
      const id = `totp|dev_${randomAlphanumeric(16)}`;
      // 20 bytes (160 bits), RFC 4226's recommended length for SHA-1.
      const secret = generateSecret({ length: 20 });
      const enrollment: MfaEnrollment = {
        id,
        tenantId: context.tenantId,
        userId: context.userId,
        type: 'totp',
        confirmed: false,
        secretSealed: context.sealer.seal(secret, sealContext(context.tenantId, id)),
        codeHash: null,
        lastTimeStep: null,
        createdAt: context.now,
        confirmedAt: null,
        lastAuthAt: null,
      };
      if (await insertPendingMfaEnrollment(context.db, enrollment)) return started(enrollment, secret);
    }
    function started(enrollment: MfaEnrollment, secret: string) {
      return { enrollment, secret, uri: generateURI({ issuer: details.issuer, label: details.label, secret, period: PERIOD_SECONDS }) };
    }
  },

  async verify(context, enrollment, answer) {
    const token = normaliseCode(answer);
    if (enrollment.type !== 'totp' || !CODE.test(token)) return false;
    const result = await verify({
      secret: totpSecretOf(context, enrollment),
      token,
      period: PERIOD_SECONDS,
      epoch: Math.floor(context.now / 1000),
      // One step either side.
      epochTolerance: PERIOD_SECONDS,
      guardrails,
      ...(enrollment.lastTimeStep !== null && { afterTimeStep: enrollment.lastTimeStep }),
    });
    // otplib's functional verify answers for HOTP and TOTP alike; a TOTP answer carries the step it matched.
    if (!result.valid || !('timeStep' in result)) return false;
    return advanceTimeStep(context.db, enrollment.id, result.timeStep, context.now);
  },
};
