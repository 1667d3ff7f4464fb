/**
 * Access tokens revoked before their expiry (those a replayed authorization code had issued), by `jti`, kept
 * until the token would have expired. Endpoints that serve users' access tokens read the list together with the
 * token's user, in one query.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { Database, UsersTable } from './schema.js';

export async function revokeAccessToken(db: Kysely<Database>, tenantId: string, jti: string, expiresAt: number, now = Date.now()): Promise<void> {
  await db.deleteFrom('revoked_access_tokens').where('expires_at', '<', now).execute();
  await db
    .insertInto('revoked_access_tokens')
    .values({ tenant_id: tenantId, jti, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['tenant_id', 'jti']).doNothing())
    .execute();
}

/** What /userinfo needs of an access token's user. */
export type AccessTokenSubject = Pick<
  UsersTable,
  'user_id' | 'email' | 'email_verified' | 'username' | 'phone_number' | 'blocked' | 'linked_to' | 'profile' | 'updated_at'
> & { revoked: boolean };

function subjectQuery(db: Kysely<Database>, tenantId: string, userId: string, jti: string) {
  return db
    .selectFrom('users')
    .select(['user_id', 'email', 'email_verified', 'username', 'phone_number', 'blocked', 'linked_to', 'profile', 'updated_at'])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('revoked_access_tokens')
            .select('revoked_access_tokens.jti')
            .where('revoked_access_tokens.tenant_id', '=', tenantId)
            .where('revoked_access_tokens.jti', '=', jti),
        )
        .as('revoked'),
    )
    .where('users.tenant_id', '=', tenantId)
    .where('users.user_id', '=', userId);
}

type SubjectRow = Omit<AccessTokenSubject, 'revoked'> & { revoked: unknown };

/**
 * The query compiled once per database with placeholder values, then run with the real ones: /userinfo runs it
 * on every request, and building it through Kysely cost about as much as running it.
 */
const PLACEHOLDERS = { tenantId: '\u0000tenant', userId: '\u0000user', jti: '\u0000jti' } as const;
const compiled = new WeakMap<Kysely<Database>, CompiledQuery<SubjectRow>>();

/** The token's user (undefined when there is none) and whether the token's `jti` was revoked, in one round trip. */
export async function findAccessTokenSubject(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  jti: string,
): Promise<AccessTokenSubject | undefined> {
  let query = compiled.get(db);
  if (!query) {
    query = subjectQuery(db, PLACEHOLDERS.tenantId, PLACEHOLDERS.userId, PLACEHOLDERS.jti).compile() as CompiledQuery<SubjectRow>;
    compiled.set(db, query);
  }
  const values: Record<string, string> = { [PLACEHOLDERS.tenantId]: tenantId, [PLACEHOLDERS.userId]: userId, [PLACEHOLDERS.jti]: jti };
  const parameters = query.parameters.map((p) => (typeof p === 'string' && p in values ? values[p] : p));
  const { rows } = await db.executeQuery<SubjectRow>({ ...query, parameters });
  const row = rows[0];
  // SQLite answers EXISTS with 0/1, PostgreSQL with a boolean.
  return row ? { ...row, revoked: Boolean(row.revoked) } : undefined;
}
