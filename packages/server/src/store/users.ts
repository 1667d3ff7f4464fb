/**
 * Users and their identities, and the blocks attack protection puts on them.
 *
 * One row is one identity: a user of one connection (`auth0|…`, `email|…`, `sms|…`). Linking (library rule 8)
 * sets `linked_to` on the secondary's row: it then stops existing on its own (never listed, never found by its
 * own id through `findPrimaryUser`) and shows up only in its primary's identities, its own fields and metadata
 * left untouched, so unlinking brings it back exactly as it was. Emails are stored and looked up normalised
 * (connections/email-address.ts: NFKC, lower case) and usernames lower case, so the unique indexes on
 * (connection, email) and (connection, username) hold one account per address however it is spelled.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { normalizeEmail } from '../connections/email-address.js';
import { ConcurrentChange, nextVersion } from './concurrent-change.js';
import type { Database, UserBlocksTable, UsersTable } from './schema.js';
import { insertRows, type BulkTable } from './bulk-insert.js';
import { compiledOnce } from './compiled-once.js';
import { insertSearchTerms, replaceSearchTerms, searchValue, storedFields } from './user-search-terms.js';

/** Root profile fields kept in the `profile` JSON column; unset ones fall back to defaults when shown. */
export interface UserProfile {
  name?: string;
  given_name?: string;
  family_name?: string;
  nickname?: string;
  picture?: string;
}

export interface User {
  user_id: string;
  tenant_id: string;
  connection_id: string;
  /** Normalised (normalizeEmail). */
  email: string | null;
  email_verified: boolean;
  username: string | null;
  phone_number: string | null;
  phone_verified: boolean;
  /** A PHC string (argon2id), or an imported hash; null for passwordless users. Never leaves the server. */
  password_hash: string | null;
  blocked: boolean;
  profile: UserProfile;
  user_metadata: Record<string, unknown>;
  app_metadata: Record<string, unknown>;
  /** Set on a linked secondary identity: its primary user. */
  linked_to: string | null;
  logins_count: number;
  last_login: number | null;
  last_ip: string | null;
  last_password_reset: number | null;
  created_at: number;
  updated_at: number;
}

/** Every column of a user row, for statements that carry a user as one JSON value (SQLite's json_object needs the names). */
const USER_COLUMN_SET: Record<keyof UsersTable, true> = {
  user_id: true,
  tenant_id: true,
  connection_id: true,
  email: true,
  email_verified: true,
  username: true,
  phone_number: true,
  phone_verified: true,
  password_hash: true,
  blocked: true,
  profile: true,
  user_metadata: true,
  app_metadata: true,
  linked_to: true,
  logins_count: true,
  last_login: true,
  last_ip: true,
  last_password_reset: true,
  created_at: true,
  updated_at: true,
};
export const USER_COLUMNS = Object.keys(USER_COLUMN_SET) as (keyof UsersTable)[];

export function userFromRow(row: UsersTable): User {
  return {
    ...row,
    email_verified: row.email_verified === 1,
    phone_verified: row.phone_verified === 1,
    blocked: row.blocked === 1,
    profile: JSON.parse(row.profile) as UserProfile,
    user_metadata: JSON.parse(row.user_metadata) as Record<string, unknown>,
    app_metadata: JSON.parse(row.app_metadata) as Record<string, unknown>,
  };
}

function toRow(user: User): UsersTable {
  return {
    ...user,
    email: user.email === null ? null : normalizeEmail(user.email),
    username: user.username?.toLowerCase() ?? null,
    email_verified: user.email_verified ? 1 : 0,
    phone_verified: user.phone_verified ? 1 : 0,
    blocked: user.blocked ? 1 : 0,
    profile: JSON.stringify(user.profile),
    user_metadata: JSON.stringify(user.user_metadata),
    app_metadata: JSON.stringify(user.app_metadata),
  };
}

/**
 * A user as it is first stored: never logged in, no metadata, not linked, not blocked; the caller gives its
 * identity (ids, connection, identifiers) and whatever else it knows.
 */
export function newUser(
  identity: Pick<User, 'user_id' | 'tenant_id' | 'connection_id'> & Partial<Omit<User, 'user_id' | 'tenant_id' | 'connection_id'>>,
  now = Date.now(),
): User {
  return {
    email: null,
    email_verified: false,
    username: null,
    phone_number: null,
    phone_verified: false,
    password_hash: null,
    blocked: false,
    profile: {},
    user_metadata: {},
    app_metadata: {},
    linked_to: null,
    logins_count: 0,
    last_login: null,
    last_ip: null,
    last_password_reset: null,
    created_at: now,
    updated_at: now,
    ...identity,
  };
}

/** Inserts the user with its search terms (in a transaction when the caller needs the two together). */
export async function insertUser(db: Kysely<Database>, user: User): Promise<void> {
  await db.insertInto('users').values(toRow(user)).execute();
  await insertSearchTerms(db, [user]);
}

const USERS_TABLE: BulkTable<'users'> = {
  table: 'users',
  columns: {
    user_id: 'text',
    tenant_id: 'text',
    connection_id: 'text',
    email: 'text',
    email_verified: 'integer',
    username: 'text',
    phone_number: 'text',
    phone_verified: 'integer',
    password_hash: 'text',
    blocked: 'integer',
    profile: 'text',
    user_metadata: 'text',
    app_metadata: 'text',
    linked_to: 'text',
    logins_count: 'integer',
    last_login: 'bigint',
    last_ip: 'text',
    last_password_reset: 'bigint',
    created_at: 'bigint',
    updated_at: 'bigint',
  },
};

/** Inserts many users with their search terms (an import's batch, inside its transaction). */
export async function insertUsers(db: Kysely<Database>, users: readonly User[]): Promise<void> {
  await insertRows(db, USERS_TABLE, users.map(toRow));
  await insertSearchTerms(db, users);
}

/** The identities of a connection holding any of these emails or usernames (lower case). */
export async function findUsersByIdentifiers(db: Kysely<Database>, connectionId: string, by: { emails: readonly string[]; usernames: readonly string[] }): Promise<User[]> {
  const { emails, usernames } = by;
  if (emails.length === 0 && usernames.length === 0) return [];
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where('connection_id', '=', connectionId)
    .where((eb) => eb.or([...(emails.length > 0 ? [eb('email', 'in', [...emails])] : []), ...(usernames.length > 0 ? [eb('username', 'in', [...usernames])] : [])]))
    .execute();
  return rows.map(userFromRow);
}

/** Which of these user ids are taken, in any tenant. */
export async function takenUserIds(db: Kysely<Database>, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('user_id').where('user_id', 'in', [...userIds]).execute();
  return new Set(rows.map((r) => r.user_id));
}

/** The row of this id in the tenant, primary or linked secondary. */
export async function findUser(db: Kysely<Database>, tenantId: string, userId: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  return row ? userFromRow(row) : undefined;
}

/** A user as the outside sees it: a linked secondary is not a user of its own (library rule 8). */
export async function findPrimaryUser(db: Kysely<Database>, tenantId: string, userId: string): Promise<User | undefined> {
  const user = await findUser(db, tenantId, userId);
  return user && user.linked_to === null ? user : undefined;
}

/** Whether the id is taken in any tenant (user ids are unique server-wide). */
export async function userIdExists(db: Kysely<Database>, userId: string): Promise<boolean> {
  return (await db.selectFrom('users').select('user_id').where('user_id', '=', userId).executeTakeFirst()) !== undefined;
}

export interface LoginIdentifier {
  email?: string | null;
  username?: string | null;
  phone_number?: string | null;
}

/**
 * The identity of a connection holding any of the given email, username or phone number (linked or not),
 * other than `exceptUserId`. Used for logins and for the one-account-per-identifier rule.
 */
const userByEmail = compiledOnce(['connectionId', 'email'], (db, slot) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('connection_id', '=', slot('connectionId'))
    .where((eb) => eb.or([eb('email', '=', slot('email'))])),
);

export async function findUserInConnection(
  db: Kysely<Database>,
  connectionId: string,
  by: LoginIdentifier,
  exceptUserId?: string,
): Promise<User | undefined> {
  const email = by.email ? normalizeEmail(by.email) : undefined;
  const username = by.username?.toLowerCase();
  const { phone_number } = by;
  if (!email && !username && !phone_number) return undefined;
  // A login by email, the common case, runs the statement compiled once (compiled-once.ts).
  if (email && !username && !phone_number && !exceptUserId) {
    const { rows } = await userByEmail.execute(db, { connectionId, email });
    return rows[0] ? userFromRow(rows[0]) : undefined;
  }
  let query = db
    .selectFrom('users')
    .selectAll()
    .where('connection_id', '=', connectionId)
    .where((eb) => {
      const any: Expression<SqlBool>[] = [];
      if (email) any.push(eb('email', '=', email));
      if (username) any.push(eb('username', '=', username));
      if (phone_number) any.push(eb('phone_number', '=', phone_number));
      return eb.or(any);
    });
  if (exceptUserId) query = query.where('user_id', '!=', exceptUserId);
  const row = await query.executeTakeFirst();
  return row ? userFromRow(row) : undefined;
}

/**
 * The oldest first of users, then by id: done here rather than in SQL, so that a query for a few rows is planned
 * by its filter (SQLite without statistics would walk an index in this order over the whole tenant instead).
 */
function byCreation(a: UsersTable, b: UsersTable): number {
  return Number(a.created_at) - Number(b.created_at) || (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0);
}

/** Primary users with this email (normalised here), across the tenant's connections. */
export async function findUsersByEmail(db: Kysely<Database>, tenantId: string, email: string): Promise<User[]> {
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('email', '=', normalizeEmail(email))
    .where('linked_to', 'is', null)
    .execute();
  return rows.sort(byCreation).map(userFromRow);
}

/** The secondary identities linked to each of the given primaries, oldest identity first (a stable order). */
export async function listLinkedIdentities(db: Kysely<Database>, tenantId: string, primaryIds: readonly string[]): Promise<Map<string, User[]>> {
  const byPrimary = new Map<string, User[]>();
  if (primaryIds.length === 0) return byPrimary;
  // By `linked_to` alone (user ids are unique server-wide), so that the planner reads that index; the tenant is
  // checked on the rows found.
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where('linked_to', 'in', [...primaryIds])
    .execute();
  for (const row of rows.filter((r) => r.tenant_id === tenantId).sort(byCreation)) {
    const user = userFromRow(row);
    byPrimary.set(user.linked_to!, [...(byPrimary.get(user.linked_to!) ?? []), user]);
  }
  return byPrimary;
}

export const USER_SORT_FIELDS = ['created_at', 'updated_at', 'last_login', 'logins_count', 'email', 'user_id', 'username'] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

/** One searched value: a field's whole value, or its start (`prefix`); see user-search-terms.ts. */
export interface SearchTermCriterion {
  field: string;
  value: string;
  prefix: boolean;
}

/** What a user list is narrowed by; every part is answered from an index. */
export interface UserCriteria {
  /** The primary identity's connection is one of these. */
  connectionIds?: string[];
  /** Exact email (normalised here). */
  email?: string;
  userId?: string;
  userIdPrefix?: string;
  /** Each must be among the user's search terms (store/user-search-terms.ts). */
  terms?: SearchTermCriterion[];
  emailVerified?: boolean;
  blocked?: boolean;
  /** The query contradicts itself (two different exact values of one field): nothing matches. */
  nothing?: boolean;
  sort?: { field: UserSortField; descending: boolean };
}

/** Above every character: `value < prefix + TOP` bounds a prefix range in byte order (UTF-8, both dialects). */
const TOP = '\u{10FFFF}';

const NUMERIC_SORT_FIELDS = new Set<UserSortField>(['created_at', 'updated_at', 'last_login', 'logins_count']);

function hasFilter(criteria: UserCriteria): boolean {
  return (
    criteria.email !== undefined ||
    criteria.userId !== undefined ||
    criteria.userIdPrefix !== undefined ||
    (criteria.terms?.length ?? 0) > 0 ||
    criteria.emailVerified !== undefined ||
    criteria.blocked !== undefined
  );
}

/**
 * Primary users of the tenant that meet the criteria, in the requested order (oldest first by default), the
 * page in `window`; `total` counts every match when asked for. Without a search the page is read in the order
 * of an index and the total comes from `user_counts`; with one, the matches come from index ranges of the
 * search terms, so either way the cost follows the page and the matches, not the tenant.
 */
export async function listUsers(
  db: Kysely<Database>,
  tenantId: string,
  criteria: UserCriteria,
  window: { offset: number; limit: number },
  options: { total?: boolean } = {},
): Promise<{ users: User[]; total: number }> {
  if (criteria.nothing || criteria.connectionIds?.length === 0) return { users: [], total: 0 };
  let base = db.selectFrom('users').where('tenant_id', '=', tenantId).where('linked_to', 'is', null);
  if (criteria.connectionIds) base = base.where('connection_id', 'in', criteria.connectionIds);
  if (criteria.email !== undefined) base = base.where('email', '=', normalizeEmail(criteria.email));
  if (criteria.userId !== undefined) base = base.where('user_id', '=', criteria.userId);
  if (criteria.userIdPrefix !== undefined) {
    base = base.where('user_id', '>=', criteria.userIdPrefix).where('user_id', '<', `${criteria.userIdPrefix}${TOP}`);
  }
  if (criteria.emailVerified !== undefined) base = base.where('email_verified', '=', criteria.emailVerified ? 1 : 0);
  if (criteria.blocked !== undefined) base = base.where('blocked', '=', criteria.blocked ? 1 : 0);
  for (const term of criteria.terms ?? []) {
    const value = searchValue(term.value);
    const fields = storedFields(term.field);
    let matching = db
      .selectFrom('user_search_terms')
      .select('user_search_terms.user_id')
      .where('user_search_terms.tenant_id', '=', tenantId)
      .where('field', 'in', fields);
    if (!term.prefix) matching = matching.where('value', '=', value);
    else if (value !== '') matching = matching.where('value', '>=', value).where('value', '<', `${value}${TOP}`);
    base = base.where('users.user_id', 'in', matching);
  }

  const sort = criteria.sort ?? { field: 'created_at', descending: false };
  const direction = sort.descending ? 'desc' : 'asc';
  // With a filter, the order is by an expression of the column, not the column: SQLite (no statistics) would
  // otherwise walk the order's index over the whole tenant to skip a sort, checking each row against the
  // filter; this way it reads the filter's index and sorts the matches.
  const filtered = hasFilter(criteria);
  const key = (field: UserSortField) =>
    !filtered ? sql.ref(field) : NUMERIC_SORT_FIELDS.has(field) ? sql`${sql.ref(field)} + 0` : sql`${sql.ref(field)} || ''`;
  let ordered = base.selectAll('users').orderBy(key(sort.field), direction);
  if (sort.field !== 'user_id') ordered = ordered.orderBy(key('user_id'), direction);
  const rows = await ordered.limit(window.limit).offset(window.offset).execute();
  const users = rows.map(userFromRow);
  if (!options.total) return { users, total: users.length };
  if (!hasFilter(criteria)) return { users, total: await countUsers(db, tenantId, criteria.connectionIds) };
  const count = await base.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow();
  return { users, total: Number(count.total) };
}

/**
 * Primary users of the tenant (of one connection, when given) after `afterUserId` in user id order, `limit` of
 * them: an export's pages, read by key so that each page costs the same however far in it is.
 */
export async function listUsersAfter(db: Kysely<Database>, tenantId: string, page: { connectionId?: string | undefined; afterUserId: string | null; limit: number }): Promise<User[]> {
  let query = db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('linked_to', 'is', null);
  if (page.connectionId) query = query.where('connection_id', '=', page.connectionId);
  if (page.afterUserId !== null) query = query.where('user_id', '>', page.afterUserId);
  const rows = await query.orderBy('user_id').limit(page.limit).execute();
  return rows.map(userFromRow);
}

/** How many primary users the tenant has (in the given connections, when given): a sum of kept counts (0019). */
export async function countUsers(db: Kysely<Database>, tenantId: string, connectionIds?: string | readonly string[]): Promise<number> {
  let query = db
    .selectFrom('user_counts')
    .select((eb) => eb.fn.sum<number | string | null>('primaries').as('n'))
    .where('tenant_id', '=', tenantId);
  if (connectionIds !== undefined) {
    const ids = typeof connectionIds === 'string' ? [connectionIds] : [...connectionIds];
    if (ids.length === 0) return 0;
    query = query.where('connection_id', 'in', ids);
  }
  return Number((await query.executeTakeFirstOrThrow()).n ?? 0);
}

/**
 * Runs in the transaction of a write, after it (or, for deletes, before the rows go), so that what belongs with
 * the change, such as its event (outbox), commits or rolls back with it. It must use the transaction it is given.
 */
export type OnWrite = (trx: Kysely<Database>) => Promise<void>;

/** Inserts the user; `onWrite` runs in the same transaction. */
export async function insertUserWith(db: Kysely<Database>, user: User, onWrite: OnWrite): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await insertUser(trx, user);
    await onWrite(trx);
  });
}

/** Writes the given users as they are now (one transaction when several change together). */
export async function updateUsers(db: Kysely<Database>, users: readonly User[], now = Date.now(), onWrite?: OnWrite): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await writeUsers(trx, users, now);
    await onWrite?.(trx);
  });
}

/**
 * Writes each change as a conditional write of the columns it changes (store/concurrent-change.ts): `after` is
 * `before` with the change applied, and the row must still be at `before`'s version, else ConcurrentChange and
 * nothing of the transaction is kept. Columns the change did not touch (a login's count, a hash upgrade made
 * meanwhile) are left as they are.
 */
export async function updateUsersAsRead(db: Kysely<Database>, changes: readonly { before: User; after: User }[], now = Date.now(), onWrite?: OnWrite): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const { before, after } of changes) {
      const previous = toRow(before);
      const next = toRow({ ...after, updated_at: nextVersion(before.updated_at, now) });
      const fields = Object.fromEntries(
        (Object.keys(next) as (keyof UsersTable)[]).filter((column) => column !== 'user_id' && column !== 'tenant_id' && column !== 'created_at' && next[column] !== previous[column]).map((column) => [column, next[column]]),
      );
      const result = await trx
        .updateTable('users')
        .set(fields)
        .where('tenant_id', '=', before.tenant_id)
        .where('user_id', '=', before.user_id)
        .where('updated_at', '=', before.updated_at)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) throw new ConcurrentChange();
    }
    await replaceSearchTerms(trx, changes.map((c) => c.after));
    await onWrite?.(trx);
  });
}

/** Writes the given users as they are now, with the caller's transaction (or none). */
export async function writeUsers(db: Kysely<Database>, users: readonly User[], now = Date.now()): Promise<void> {
  for (const user of users) {
    const { user_id, tenant_id, created_at: _created, ...fields } = toRow({ ...user, updated_at: now });
    await db.updateTable('users').set(fields).where('tenant_id', '=', tenant_id).where('user_id', '=', user_id).execute();
  }
  await replaceSearchTerms(db, users);
}

/**
 * Deletes the user, with the identities linked to it. Returns false when there was no such user.
 * `beforeDelete` runs in the same transaction while the rows still exist, when there is a user to delete.
 */
export async function deleteUser(db: Kysely<Database>, tenantId: string, userId: string, beforeDelete?: OnWrite): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (beforeDelete) {
      const exists = await trx.selectFrom('users').select('user_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
      if (!exists) return false;
      await beforeDelete(trx);
    }
    await trx.deleteFrom('users').where('tenant_id', '=', tenantId).where('linked_to', '=', userId).execute();
    const result = await trx.deleteFrom('users').where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  });
}

/**
 * Links `secondaryId` to `primaryId`, only while the secondary is unlinked and has no identities of its own, and
 * the primary is not itself linked. Returns false when another request changed either in the meantime.
 */
export async function linkUser(
  db: Kysely<Database>,
  tenantId: string,
  primaryId: string,
  secondaryId: string,
  now = Date.now(),
  onWrite?: OnWrite,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const primary = await trx
      .selectFrom('users')
      .select('user_id')
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', primaryId)
      .where('linked_to', 'is', null)
      .executeTakeFirst();
    const dependants = await trx.selectFrom('users').select('user_id').where('tenant_id', '=', tenantId).where('linked_to', '=', secondaryId).executeTakeFirst();
    if (!primary || dependants) return false;
    const result = await trx
      .updateTable('users')
      .set({ linked_to: primaryId, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', secondaryId)
      .where('linked_to', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await trx.updateTable('users').set({ updated_at: now }).where('tenant_id', '=', tenantId).where('user_id', '=', primaryId).execute();
    await onWrite?.(trx);
    return true;
  });
}

/** Makes a linked secondary a user of its own again, as it was before the link. */
export async function unlinkUser(
  db: Kysely<Database>,
  tenantId: string,
  primaryId: string,
  secondaryId: string,
  now = Date.now(),
  onWrite?: OnWrite,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('users')
      .set({ linked_to: null, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', secondaryId)
      .where('linked_to', '=', primaryId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await trx.updateTable('users').set({ updated_at: now }).where('tenant_id', '=', tenantId).where('user_id', '=', primaryId).execute();
    await onWrite?.(trx);
    return true;
  });
}

/**
 * Replaces the user's password hash by `next` only while it is still `current` (a login upgrading an imported or
 * weaker hash must not undo a password change that happened meanwhile). Returns whether it was replaced.
 */
export async function replacePasswordHash(db: Kysely<Database>, tenantId: string, userId: string, current: string, next: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: next })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('password_hash', '=', current)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Counts a successful login. */
export async function recordLogin(db: Kysely<Database>, tenantId: string, userId: string, ip: string | null, now = Date.now()): Promise<void> {
  await loginRecord.execute(db, { now, ip, tenantId, userId });
}

/** Every successful login runs it: compiled once (compiled-once.ts). */
const loginRecord = compiledOnce(['now', 'ip', 'tenantId', 'userId'], (db, slot) =>
  db
    .updateTable('users')
    .set((eb) => ({ logins_count: eb('logins_count', '+', 1), last_login: slot<number>('now'), last_ip: slot<string | null>('ip') }))
    .where('tenant_id', '=', slot('tenantId'))
    .where('user_id', '=', slot('userId')),
);

// ---- user blocks (attack protection writes them; the Management API reads and lifts them) ----

export type UserBlock = UserBlocksTable;

export async function insertUserBlock(
  db: Kysely<Database>,
  block: Omit<UserBlock, 'id' | 'identifier'> & { id?: string; identifier: string },
): Promise<UserBlock> {
  const row: UserBlock = { ...block, id: block.id ?? `ubk_${randomUUID().replace(/-/g, '')}`, identifier: normalizeEmail(block.identifier) };
  await db.insertInto('user_blocks').values(row).execute();
  return row;
}

/**
 * Which blocks: those of a user (by id, or by its identifiers when attack protection did not know the user), of
 * an identifier, one block by its id, or every block of the tenant.
 */
export type BlockSelector = { userId: string; identifiers: readonly string[] } | { identifier: string } | { id: string } | { all: true };

function selectBlocks(eb: ExpressionBuilder<Database, 'user_blocks'>, selector: BlockSelector): Expression<SqlBool> {
  if ('all' in selector) return sql<SqlBool>`true`;
  if ('id' in selector) return eb('id', '=', selector.id);
  if ('identifier' in selector) return eb('identifier', '=', normalizeEmail(selector.identifier));
  const identifiers = selector.identifiers.filter(Boolean).map(normalizeEmail);
  const byUser = eb('user_id', '=', selector.userId);
  if (identifiers.length === 0) return byUser;
  return eb.or([byUser, eb.and([eb('user_id', 'is', null), eb('identifier', 'in', identifiers)])]);
}

/** Blocks in force (not expired), oldest first. */
export async function listUserBlocks(db: Kysely<Database>, tenantId: string, selector: BlockSelector, now = Date.now()): Promise<UserBlock[]> {
  // Attack protection asks this of every password login: that shape runs compiled once (compiled-once.ts).
  if ('identifier' in selector) return (await blocksOfIdentifier.execute(db, { tenantId, now, identifier: normalizeEmail(selector.identifier) })).rows;
  return db
    .selectFrom('user_blocks')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('expires_at', '>', now)
    .where((eb) => selectBlocks(eb, selector))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

const blocksOfIdentifier = compiledOnce(['tenantId', 'now', 'identifier'], (db, slot) =>
  db
    .selectFrom('user_blocks')
    .selectAll()
    .where('tenant_id', '=', slot('tenantId'))
    .where('expires_at', '>', slot<number>('now'))
    .where('identifier', '=', slot('identifier'))
    .orderBy('created_at')
    .orderBy('id'),
);

/** Lifts every block the selector names (expired ones go too). Returns the rows removed. */
export async function deleteUserBlocks(db: Kysely<Database>, tenantId: string, selector: BlockSelector): Promise<UserBlock[]> {
  const rows = await db
    .deleteFrom('user_blocks')
    .where('tenant_id', '=', tenantId)
    .where((eb) => selectBlocks(eb, selector))
    .returningAll()
    .execute();
  return rows.map((row) => ({ ...row, created_at: Number(row.created_at), expires_at: Number(row.expires_at) }));
}
