/**
 * Optimistic writes for read-merge-write changes (a PATCH that merges metadata into what it read). The write is
 * conditional on the row's `updated_at` being what was read, and moves it strictly forward, so of two requests
 * that read the same row one writes and the other reads again and merges into the winner's result: no change is
 * lost, on one node or many, on either database, without holding a lock across the request's slow parts
 * (a password hash in a user PATCH).
 */
import { Conflict } from '../http/errors.js';

/** A conditional write found the row changed since it was read. */
export class ConcurrentChange extends Error {
  constructor() {
    super('the row changed since it was read');
  }
}

/** The `updated_at` a conditional write sets: now, or just past the version it replaces when clocks tie. */
export function nextVersion(previous: number, now: number): number {
  return Math.max(now, previous + 1);
}

const ATTEMPTS = 30;

/**
 * Runs `attempt` (read, merge, conditional write) until it writes. Past 30 lost races in a row (a burst of
 * writers to one row), the caller gets a 409 to retry rather than a change silently dropped.
 */
export async function retryOnConcurrentChange<T>(what: string, attempt: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ConcurrentChange)) throw error;
      if (round >= ATTEMPTS) throw new Conflict(`The ${what} was changed by other requests at the same time; send the change again`);
      // A little jitter, so that the losers of one round do not all meet again in the next.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(round, 10)));
    }
  }
}
