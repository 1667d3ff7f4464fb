/**
 * Cost that does not grow with the tenant (#18.5). With 300,000 users, reads by id, lookups by email, searches,
 * totals and sorted lists walked the tenant's `users_tenant_created` index whole. From here:
 *  - every list order the API offers has a tenant-scoped partial index over primary users (`linked_to IS NULL`,
 *    the condition every list carries), ending in `user_id` (the tie-break), so a page is read in order and the
 *    read stops at the page;
 *  - linked identities are found by `linked_to` (that index also serves the foreign key's cascade);
 *  - searches read `user_search_terms`, one row per searchable value (store/user-search-terms.ts says why a
 *    table and not expression indexes); `value` compares byte-wise on both databases (PostgreSQL: collation
 *    "C"), so a prefix is one index range;
 *  - totals read `user_counts`, kept by triggers on `users` (so every writer, imports and direct inserts
 *    included, keeps them right) over 8 shards per connection, so concurrent signups do not queue on one row.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { insertSearchTerms } from '../user-search-terms.js';
import type { Database, UsersTable } from '../schema.js';

// The migration runs against the schema as it is at 0019, not the application's types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDatabase = Kysely<any>;

const COUNT_SHARDS = 8;
const BATCH = 1000;

/** Sort fields of GET /users other than user_id (which has users_tenant_user_id_primary). */
const SORTED = ['created_at', 'updated_at', 'last_login', 'logins_count', 'email', 'username'] as const;

function isPostgres(db: AnyDatabase): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

async function createCountTriggers(db: AnyDatabase): Promise<void> {
  if (isPostgres(db)) {
    const bump = (row: 'NEW' | 'OLD', by: 1 | -1) =>
      `INSERT INTO user_counts (tenant_id, connection_id, shard, primaries) VALUES (${row}.tenant_id, ${row}.connection_id, floor(random() * ${COUNT_SHARDS})::int, ${by})
       ON CONFLICT (tenant_id, connection_id, shard) DO UPDATE SET primaries = user_counts.primaries + (${by});`;
    // SET search_path FROM CURRENT: the function finds user_counts in the schema it was created in, whatever the
    // session's search path (tests and shared deployments use one schema per installation).
    await sql
      .raw(
        `CREATE FUNCTION users_count_primaries() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
         BEGIN
           IF TG_OP <> 'INSERT' AND OLD.linked_to IS NULL THEN ${bump('OLD', -1)} END IF;
           IF TG_OP <> 'DELETE' AND NEW.linked_to IS NULL THEN ${bump('NEW', 1)} END IF;
           RETURN NULL;
         END $$`,
      )
      .execute(db);
    await sql.raw(`CREATE TRIGGER users_count_insert AFTER INSERT ON users FOR EACH ROW EXECUTE FUNCTION users_count_primaries()`).execute(db);
    await sql.raw(`CREATE TRIGGER users_count_delete AFTER DELETE ON users FOR EACH ROW EXECUTE FUNCTION users_count_primaries()`).execute(db);
    await sql
      .raw(
        `CREATE TRIGGER users_count_update AFTER UPDATE OF linked_to, connection_id ON users FOR EACH ROW
         WHEN (OLD.linked_to IS DISTINCT FROM NEW.linked_to OR OLD.connection_id IS DISTINCT FROM NEW.connection_id)
         EXECUTE FUNCTION users_count_primaries()`,
      )
      .execute(db);
    return;
  }
  const bump = (row: 'NEW' | 'OLD', by: 1 | -1) =>
    `INSERT INTO user_counts (tenant_id, connection_id, shard, primaries) VALUES (${row}.tenant_id, ${row}.connection_id, abs(random()) % ${COUNT_SHARDS}, ${by})
     ON CONFLICT (tenant_id, connection_id, shard) DO UPDATE SET primaries = primaries + (${by});`;
  await sql.raw(`CREATE TRIGGER users_count_insert AFTER INSERT ON users WHEN NEW.linked_to IS NULL BEGIN ${bump('NEW', 1)} END`).execute(db);
  await sql.raw(`CREATE TRIGGER users_count_delete AFTER DELETE ON users WHEN OLD.linked_to IS NULL BEGIN ${bump('OLD', -1)} END`).execute(db);
  await sql
    .raw(
      `CREATE TRIGGER users_count_unlinked AFTER UPDATE OF linked_to, connection_id ON users
       WHEN OLD.linked_to IS NULL AND (NEW.linked_to IS NOT NULL OR NEW.connection_id IS NOT OLD.connection_id) BEGIN ${bump('OLD', -1)} END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER users_count_relinked AFTER UPDATE OF linked_to, connection_id ON users
       WHEN NEW.linked_to IS NULL AND (OLD.linked_to IS NOT NULL OR NEW.connection_id IS NOT OLD.connection_id) BEGIN ${bump('NEW', 1)} END`,
    )
    .execute(db);
}

/** Search terms for the users already stored, a batch at a time in user id order. */
async function backfillSearchTerms(db: AnyDatabase): Promise<void> {
  let after = '';
  for (;;) {
    const rows = (await db.selectFrom('users').selectAll().where('user_id', '>', after).orderBy('user_id').limit(BATCH).execute()) as UsersTable[];
    const users = rows.map((row) => ({
      ...row,
      email_verified: Number(row.email_verified) === 1,
      phone_verified: Number(row.phone_verified) === 1,
      blocked: Number(row.blocked) === 1,
      profile: JSON.parse(row.profile) as Record<string, string>,
      user_metadata: JSON.parse(row.user_metadata) as Record<string, unknown>,
      app_metadata: JSON.parse(row.app_metadata) as Record<string, unknown>,
    }));
    // The terms are derived data the application owns: written with its current rule (a later change to the
    // rule ships with a migration that rebuilds them).
    await insertSearchTerms(db as Kysely<Database>, users);
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.user_id;
  }
}

export async function up(db: AnyDatabase): Promise<void> {
  await db.schema.dropIndex('users_tenant_created').execute();
  for (const field of SORTED) {
    await db.schema
      .createIndex(`users_tenant_${field}_primary`)
      .on('users')
      .columns(['tenant_id', field, 'user_id'])
      .where(sql.ref('linked_to'), 'is', null)
      .execute();
  }
  await db.schema.createIndex('users_tenant_user_id_primary').on('users').columns(['tenant_id', 'user_id']).where(sql.ref('linked_to'), 'is', null).execute();
  // GET /users?connection=…: the connection's primaries in the default order.
  await db.schema
    .createIndex('users_connection_created_primary')
    .on('users')
    .columns(['tenant_id', 'connection_id', 'created_at', 'user_id'])
    .where(sql.ref('linked_to'), 'is', null)
    .execute();
  await db.schema.dropIndex('users_linked_to').execute();
  await db.schema.createIndex('users_linked_to_created').on('users').columns(['linked_to', 'created_at', 'user_id']).execute();
  // Deleting a user finds its refresh tokens (the foreign key's cascade) by user id, which the index on
  // (tenant_id, user_id, client_id) cannot serve: without this, every user deleted read every refresh token.
  await db.schema.createIndex('refresh_tokens_user_id').on('refresh_tokens').column('user_id').execute();

  const postgres = isPostgres(db);
  await db.schema
    .createTable('user_search_terms')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('value', postgres ? sql`text collate "C"` : 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
    .addPrimaryKeyConstraint('user_search_terms_pk', ['tenant_id', 'field', 'value', 'user_id'])
    .execute();
  // Rewriting or deleting a user's terms (and the foreign key's cascade) finds them by user.
  await db.schema.createIndex('user_search_terms_user').on('user_search_terms').column('user_id').execute();
  await backfillSearchTerms(db);

  await db.schema
    .createTable('user_counts')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull())
    .addColumn('primaries', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_counts_pk', ['tenant_id', 'connection_id', 'shard'])
    .execute();
  await sql`insert into user_counts (tenant_id, connection_id, shard, primaries)
    select tenant_id, connection_id, 0, count(*) from users where linked_to is null group by tenant_id, connection_id`.execute(db);
  await createCountTriggers(db);
}

export async function down(db: AnyDatabase): Promise<void> {
  for (const trigger of ['users_count_insert', 'users_count_delete', 'users_count_update', 'users_count_unlinked', 'users_count_relinked']) {
    await sql.raw(isPostgres(db) ? `DROP TRIGGER IF EXISTS ${trigger} ON users` : `DROP TRIGGER IF EXISTS ${trigger}`).execute(db);
  }
  if (isPostgres(db)) await sql`DROP FUNCTION IF EXISTS users_count_primaries()`.execute(db);
  await db.schema.dropTable('user_counts').execute();
  await db.schema.dropTable('user_search_terms').execute();
  await db.schema.dropIndex('refresh_tokens_user_id').execute();
  await db.schema.dropIndex('users_tenant_user_id_primary').execute();
  await db.schema.dropIndex('users_linked_to_created').execute();
  await db.schema.createIndex('users_linked_to').on('users').column('linked_to').execute();
  await db.schema.dropIndex('users_connection_created_primary').execute();
  for (const field of SORTED) await db.schema.dropIndex(`users_tenant_${field}_primary`).execute();
  await db.schema.createIndex('users_tenant_created').on('users').columns(['tenant_id', 'created_at']).execute();
}
