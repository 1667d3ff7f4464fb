/**
 * Guesses at a secret (a password; the MFA code lockout of #11 is meant to use it for codes), counted *before*
 * the secret is checked: a guess first claims a place in its streak, atomically in the counter store, and only a
 * guess that got one is checked. However many guesses arrive at once, on however many nodes share the store, no
 * more than `maxGuesses` are ever checked in a streak (#19). Settling afterwards:
 *  - a wrong guess keeps its place (it is already counted; a process that dies mid-check counts as wrong too);
 *    the one that took the last place (`last`) is where the caller locks out;
 *  - a right guess ends the streak (`reset`: consecutive failures, as brute-force protection counts them) or
 *    gives back only its own place (`refund`: a budget of attempts).
 */
import type { AttackCounterStore } from './counter-store.js';

export interface GuessLimit {
  maxGuesses: number;
  /** How long a streak is remembered after its latest guess. */
  windowMs: number;
  onRight: 'reset' | 'refund';
}

export type ClaimedGuess =
  | { allowed: false }
  | {
      allowed: true;
      /** This guess took the streak's last place: if it is wrong, the limit is reached. */
      last: boolean;
      /** The secret was right. */
      right(): Promise<void>;
    };

export async function claimGuess(store: AttackCounterStore, key: string, limit: GuessLimit): Promise<ClaimedGuess> {
  const { allowed, count } = await store.reserve(key, limit.maxGuesses, limit.windowMs);
  if (!allowed) return { allowed: false };
  return {
    allowed: true,
    last: count >= limit.maxGuesses,
    right: async () => {
      if (limit.onRight === 'reset') await store.reset(key);
      else await store.refund(key);
    },
  };
}
