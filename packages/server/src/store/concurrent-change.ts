/**
 * Optimistic writes for read-merge-write changes (a PATCH that merges metadata into what it read). The write is
 * conditional on the row's `updated_at` being what was read, and moves it strictly forward, so of two requests
 * that read the same row one writes and the other reads again and merges into the winner's result: no change is
 * lost, on one node or many, on either database, without holding a lock across the request's slow parts
 * (a password hash in a user PATCH).
 */
import type { Kysely, Selectable, Updateable } from 'kysely';
import { Conflict } from '../http/errors.js';
import type { Database } from './schema.js';

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

/** The tables whose rows carry the version (`updated_at`) a conditional write names; all are per tenant. */
export type VersionedTable = { [T in keyof Database]: Database[T] extends { tenant_id: string; updated_at: number } ? T : never }[keyof Database];

/**
 * Writes `changes` to the one row of `table` at `key` only while it is still at the version `readAt`; false, and
 * nothing written, when it changed since (the caller throws ConcurrentChange). `changes.updated_at` is the new
 * version, from nextVersion, so that a writer that read the row before this write cannot write after it. The key
 * names the tenant, so a conditional write never reaches past it.
 */
export async function updateAsRead<T extends VersionedTable, K extends keyof Selectable<Database[T]> = never>(
  db: Kysely<Database>,
  table: T,
  key: Pick<Selectable<Database[T]>, K> & { tenant_id: string },
  readAt: number,
  changes: Updateable<Database[T]> & { updated_at: number },
): Promise<boolean> {
  // Kysely cannot check a column of a table that is itself a type parameter; the signature above does instead.
  let update = (db as unknown as Kysely<Record<string, Record<string, unknown>>>).updateTable(table as string).set(changes);
  for (const [column, value] of Object.entries(key)) update = update.where(column, '=', value);
  const result = await update.where('updated_at', '=', readAt).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

const ATTEMPTS = 30;

/** The 409 a route that retries its conditional writes documents (after its own 409s, if any). */
export function concurrentChangeConflict(own?: string): string {
  const lost = `conflict: other requests changed it at the same time, ${ATTEMPTS} times in a row; send the change again`;
  return own ? `${own}; or ${lost}` : lost;
}

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
