/**
 * Wrong second-factor answers lock the user's MFA: 10 in a row (the reference's figure) and every further
 * answer is refused unchecked until an administrator lifts it (DELETE /api/v2/user-blocks/{id}) or the streak
 * lapses (30 days, as a password block). Counted as password guesses are (protection/guesses.ts): a place is
 * claimed in the counter store *before* the answer is checked, so a burst of parallel guesses, on however many
 * nodes share the store, gets no more than 10 checked. A right answer ends the streak. Counters per user (not
 * per IP): the second factor is what stands when the password is already known, from anywhere.
 * Unlike password brute-force protection, a failing counter store is not skipped: the check fails closed.
 */
import type { AttackCounterStore } from '../protection/counter-store.js';
import { claimGuess } from '../protection/guesses.js';

export const MFA_MAX_WRONG_ANSWERS = 10;
const STREAK_MS = 30 * 24 * 3600 * 1000;

export const mfaStreakKey = (tenantId: string, userId: string) => `mfa:${tenantId}:${userId}`;

export type CheckedAnswer = { outcome: 'right' } | { outcome: 'wrong'; nowLocked: boolean } | { outcome: 'locked' };

/** Runs `check` (a factor's verify) within the user's streak of wrong answers. */
export async function checkAnswer(counters: AttackCounterStore, tenantId: string, userId: string, check: () => Promise<boolean>): Promise<CheckedAnswer> {
  const guess = await claimGuess(counters, mfaStreakKey(tenantId, userId), { maxGuesses: MFA_MAX_WRONG_ANSWERS, windowMs: STREAK_MS, onRight: 'reset' });
  if (!guess.allowed) return { outcome: 'locked' };
  if (await check()) {
    await guess.right();
    return { outcome: 'right' };
  }
  return { outcome: 'wrong', nowLocked: guess.last };
}

/** Lifts the lock (an administrator's unblock). */
export async function liftMfaLock(counters: AttackCounterStore, tenantId: string, userId: string): Promise<void> {
  await counters.reset(mfaStreakKey(tenantId, userId));
}
