/**
 * The values user search can find, kept beside each user in `user_search_terms` (migration 0019) so that a
 * search reads an index range, never the tenant's users.
 *
 * Why a table of terms rather than expression indexes or the database's own full-text search: the same table
 * and the same B-tree range queries run unchanged on SQLite and PostgreSQL (one compiler, one set of plans to
 * check), it serves derived values that no column holds (the display name and nickname fall back to the email,
 * the email's domain, words inside names), and it serves metadata fields of any name, which a fixed set of
 * expression indexes or generated columns cannot. The cost is a few rows per user, rewritten with the user.
 *
 * Every value is matched whole or by prefix (`field:value`, `field:prefix*`): lower case, NFKC, and cut to
 * SEARCH_VALUE_LENGTH characters, on both sides. A bare term (no field) matches the start of any word of the
 * email, name, nickname or username (`lid` finds "Alice Liddell"; `search.test` finds `alice@search.test`):
 * the words after the first are `_any` rows, the first is the value's own row (BARE_TERM_FIELDS), since a copy
 * of it under `_any` cost an import about three more rows per user for nothing.
 */
import type { Kysely } from 'kysely';
import { insertRows, type BulkTable } from './bulk-insert.js';
import type { Database, UserSearchTermsTable } from './schema.js';
import { displayName, displayNickname } from './user-names.js';
import type { User } from './users.js';

/** Characters of a value kept (and compared): longer values match by their first this many. */
export const SEARCH_VALUE_LENGTH = 128;
/** Metadata leaves kept per user, user_metadata first; past this, further fields are not searchable. */
export const METADATA_TERMS_PER_USER = 64;
/** Word starts kept per value for bare terms. */
const WORDS_PER_VALUE = 8;
/** The field of bare terms. */
export const ANY_FIELD = '_any';
/** The fields a bare term reads: `_any` (inner word starts) and those whose whole value is a word start too. */
const WHOLE_VALUE_FIELDS = ['email', 'name', 'nickname', 'username'] as const;
export const BARE_TERM_FIELDS: readonly string[] = [ANY_FIELD, ...WHOLE_VALUE_FIELDS];

/** The stored fields a search term of `field` reads. */
export function storedFields(field: string): readonly string[] {
  return field === ANY_FIELD ? BARE_TERM_FIELDS : [field];
}

/** The form values are stored and compared in. */
export function searchValue(text: string): string {
  return text.normalize('NFKC').toLowerCase().normalize('NFKC').slice(0, SEARCH_VALUE_LENGTH);
}

/** The value and each of its suffixes that starts a word (after a space, `@`, `.`, `-`, `_`, `+` or `,`). */
function wordStarts(value: string): string[] {
  const starts = [value];
  for (const match of value.matchAll(/[\s@.\-_+,]+(?=[^\s@.\-_+,])/g)) {
    if (starts.length >= WORDS_PER_VALUE) break;
    starts.push(value.slice(match.index + match[0].length));
  }
  return starts;
}

/** Scalar leaves of a metadata object, as `<root>.<path>` and their text; arrays give each element the same path. */
function metadataLeaves(root: string, value: unknown, into: [string, string][]): void {
  if (into.length >= METADATA_TERMS_PER_USER) return;
  if (Array.isArray(value)) {
    for (const item of value) metadataLeaves(root, item, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) metadataLeaves(`${root}.${key}`, child, into);
  } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    into.push([root, String(value)]);
  }
}

/** Every (field, value) a search can find the user by; no duplicates. */
export function searchTermsOf(user: User): { field: string; value: string }[] {
  const terms = new Map<string, { field: string; value: string }>();
  const add = (field: string, text: string | null | undefined) => {
    if (text === null || text === undefined || text === '') return;
    const value = searchValue(text);
    terms.set(`${field}\u0000${value}`, { field, value });
  };
  const name = displayName(user);
  const nickname = displayNickname(user);
  add('email', user.email);
  if (user.email?.includes('@')) add('email.domain', user.email.slice(user.email.lastIndexOf('@') + 1));
  add('name', name);
  add('nickname', nickname);
  add('given_name', user.profile.given_name);
  add('family_name', user.profile.family_name);
  add('username', user.username);
  add('phone_number', user.phone_number);
  // The first word start is the whole value, stored above under its own field (WHOLE_VALUE_FIELDS).
  for (const text of [user.email, name, nickname, user.username]) {
    if (text) for (const start of wordStarts(searchValue(text)).slice(1)) add(ANY_FIELD, start);
  }
  const leaves: [string, string][] = [];
  metadataLeaves('user_metadata', user.user_metadata, leaves);
  metadataLeaves('app_metadata', user.app_metadata, leaves);
  for (const [field, text] of leaves.slice(0, METADATA_TERMS_PER_USER)) add(field, text);
  return [...terms.values()];
}

const SEARCH_TERMS_TABLE: BulkTable<'user_search_terms'> = { table: 'user_search_terms', columns: { tenant_id: 'text', field: 'text', value: 'text', user_id: 'text' } };

/** Writes the search terms of users just inserted. */
export async function insertSearchTerms(db: Kysely<Database>, users: readonly User[]): Promise<void> {
  const rows: UserSearchTermsTable[] = [];
  for (const user of users) for (const { field, value } of searchTermsOf(user)) rows.push({ tenant_id: user.tenant_id, field, value, user_id: user.user_id });
  await insertRows(db, SEARCH_TERMS_TABLE, rows);
}

/** Replaces the search terms of users just updated. */
export async function replaceSearchTerms(db: Kysely<Database>, users: readonly User[]): Promise<void> {
  if (users.length === 0) return;
  await db
    .deleteFrom('user_search_terms')
    .where(
      'user_id',
      'in',
      users.map((u) => u.user_id),
    )
    .execute();
  await insertSearchTerms(db, users);
}
