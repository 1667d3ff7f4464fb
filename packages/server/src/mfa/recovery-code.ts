/**
 * Recovery codes: one per user at a time, 24 characters (120 random bits) from an alphabet without the
 * look-alikes 0/O and 1/I, shown once and kept as SHA-256 of `<enrollment id>:<code>` only. A plain hash is
 * enough here, unlike for passwords: the code is random and long, so there is nothing to guess from the hash.
 * Using the code deletes it (a conditional delete: of two uses at once one wins); the caller then issues the
 * next one, as the reference does, so the person is never left without one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { randomAlphanumeric } from '../crypto/ids.js';
import { consumeRecoveryCode, deleteMfaEnrollments, insertMfaEnrollment, type MfaEnrollment } from '../store/mfa-enrollments.js';
import type { Factor } from './factor.js';

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const LENGTH = 24;

export interface RecoveryCodeEnrollment {
  enrollment: MfaEnrollment;
  /** The code itself: shown to the person once, never stored. */
  code: string;
}

function newCode(): string {
  // 32 symbols: the low five bits of each byte pick one without bias.
  return [...randomBytes(LENGTH)].map((b) => ALPHABET[b & 31]).join('');
}

/** As typed: case, spaces and dashes do not matter. */
function normalise(answer: string): string {
  return answer.replace(/[\s-]/g, '').toUpperCase();
}

function hashOf(enrollmentId: string, code: string): string {
  return createHash('sha256').update(`${enrollmentId}:${code}`, 'utf8').digest('hex');
}

export const recoveryCode: Factor<RecoveryCodeEnrollment> = {
  name: 'recovery-code',
  type: 'recovery-code',

  /** Replaces the user's recovery code with a new one. */
  async enroll(context) {
    await deleteMfaEnrollments(context.db, context.tenantId, context.userId, 'recovery-code');
    const id = `recovery-code|dev_${randomAlphanumeric(16)}`;
    const code = newCode();
    const enrollment: MfaEnrollment = {
      id,
      tenantId: context.tenantId,
      userId: context.userId,
      type: 'recovery-code',
      // Nothing to prove: the person has just been shown it.
      confirmed: true,
      secretSealed: null,
      codeHash: hashOf(id, code),
      lastTimeStep: null,
      createdAt: context.now,
      confirmedAt: context.now,
      lastAuthAt: null,
    };
    await insertMfaEnrollment(context.db, enrollment);
    return { enrollment, code };
  },

  async verify(context, enrollment, answer) {
    const code = normalise(answer);
    if (enrollment.type !== 'recovery-code' || code.length !== LENGTH || enrollment.codeHash === null) return false;
    return consumeRecoveryCode(context.db, enrollment.id, hashOf(enrollment.id, code));
  },
};
