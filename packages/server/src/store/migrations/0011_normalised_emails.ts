/**
 * Emails in their normalised form (#19: full-width `ｕｓｅｒ@example.com` had signed up beside `user@example.com`).
 * Until now addresses were stored lower case only; from here on they are stored NFKC and lower case
 * (connections/email-address.ts), in the same `email` column, so that the existing unique index on
 * (connection_id, email) holds one account per normalised address. This rewrites what is already stored:
 * users' emails, user blocks' identifiers, pending passwordless codes' identifiers and tickets' emails.
 *
 * Two users of one connection whose addresses become the same: the account that already holds the normalised
 * form keeps it (logins by that address have always reached it), or else the oldest account gets it; the
 * others keep their address exactly as stored, so that nothing is lost or merged behind anyone's back. Each is
 * reported in a process warning (`GatehouseEmailCollision`) with both user ids, for an admin to resolve
 * (change one address, link the accounts, or delete one) through the Management API.
 */
import type { Kysely } from 'kysely';

/**
 * The normalisation as it was when this migration shipped: a copy on purpose, since a migration must go on
 * doing what it did even if the application's rule changes later.
 */
function normalize(address: string): string {
  return address.normalize('NFKC').toLowerCase().normalize('NFKC').trim();
}

const BATCH = 1000;

// The migration runs against the schema as it was at 0011, not the application's types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDatabase = Kysely<any>;

interface StoredUser {
  user_id: string;
  connection_id: string;
  email: string;
  created_at: number;
}

/** Users whose stored email changes under normalisation, read in batches (a large table is never held whole). */
async function usersToNormalise(db: AnyDatabase): Promise<(StoredUser & { normalised: string })[]> {
  const found: (StoredUser & { normalised: string })[] = [];
  let after = '';
  for (;;) {
    const rows = (await db
      .selectFrom('users')
      .select(['user_id', 'connection_id', 'email', 'created_at'])
      .where('email', 'is not', null)
      .where('user_id', '>', after)
      .orderBy('user_id')
      .limit(BATCH)
      .execute()) as StoredUser[];
    for (const row of rows) {
      const normalised = normalize(row.email);
      if (normalised !== row.email) found.push({ ...row, created_at: Number(row.created_at), normalised });
    }
    if (rows.length < BATCH) return found;
    after = rows[rows.length - 1]!.user_id;
  }
}

export async function up(db: AnyDatabase): Promise<void> {
  const changes = await usersToNormalise(db);
  // Oldest first, so that of several accounts none of which holds the normalised form yet, the oldest gets it.
  changes.sort((a, b) => a.created_at - b.created_at || (a.user_id < b.user_id ? -1 : 1));
  for (const change of changes) {
    const holder = await db
      .selectFrom('users')
      .select('user_id')
      .where('connection_id', '=', change.connection_id)
      .where('email', '=', change.normalised)
      .executeTakeFirst();
    if (holder) {
      process.emitWarning(
        `${change.user_id} keeps its email as stored: it is the same address as ${holder.user_id}'s (${change.normalised}) once normalised. ` +
          'Change one of the two addresses, link the accounts, or delete one (Management API).',
        'GatehouseEmailCollision',
      );
      continue;
    }
    await db.updateTable('users').set({ email: change.normalised }).where('user_id', '=', change.user_id).execute();
  }

  // No uniqueness on these: every row takes the normalised form.
  for (const [table, key, column] of [
    ['user_blocks', 'id', 'identifier'],
    ['user_tickets', 'token_hash', 'email'],
  ] as const) {
    const rows = (await db.selectFrom(table).select([key, column]).execute()) as Record<string, string>[];
    for (const row of rows) {
      const normalised = normalize(row[column]!);
      if (normalised !== row[column]) await db.updateTable(table).set({ [column]: normalised }).where(key, '=', row[key]!).execute();
    }
  }

  // Pending passwordless codes (five minutes at most): one per connection and identifier, so a code whose
  // normalised identifier already has one is dropped; its recipient asks for a new code.
  const codes = (await db.selectFrom('passwordless_codes').select(['id', 'connection_id', 'identifier']).execute()) as { id: string; connection_id: string; identifier: string }[];
  for (const code of codes) {
    const normalised = normalize(code.identifier);
    if (normalised === code.identifier) continue;
    const taken = await db
      .selectFrom('passwordless_codes')
      .select('id')
      .where('connection_id', '=', code.connection_id)
      .where('identifier', '=', normalised)
      .executeTakeFirst();
    if (taken) await db.deleteFrom('passwordless_codes').where('id', '=', code.id).execute();
    else await db.updateTable('passwordless_codes').set({ identifier: normalised }).where('id', '=', code.id).execute();
  }
}

/** Nothing to undo: the normalised addresses are valid lower-case addresses for the code before this one. */
export async function down(): Promise<void> {}
