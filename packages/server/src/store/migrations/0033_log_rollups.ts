/**
 * Rollups of the tenant logs that /api/v2/stats reads, so that its cost follows the days asked for and not the
 * tenant's log rows (at 1,000,000 rows, counting from `logs` took 0.3–0.5 s):
 *
 *  - `log_daily_counts`: one row per (tenant, UTC day, event type) with the count and the first and last event's
 *    time. /stats/daily reads at most days × types rows.
 *  - `log_user_logins`: one row per (tenant, user) with the time of the user's last successful login (`s`,
 *    `sepft`). /stats/active-users counts a range of the (tenant_id, last_login) index.
 *
 * Both are maintained in the transaction that inserts the log rows (logs/rollups.ts), by upserts that add to a
 * count and keep the min/max (correct whatever the number of concurrent writers), and by retention pruning,
 * which takes off exactly the rows it deleted. Existing logs are counted here once.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('log_daily_counts')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    /** Days since the epoch (UTC). */
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    /** Epoch milliseconds of the day's first and last event of this type. */
    .addColumn('first_at', 'bigint', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_daily_counts_pk', ['tenant_id', 'day', 'type'])
    .execute();
  await db.schema
    .createTable('log_user_logins')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    /** Epoch milliseconds of the user's last successful login still in the logs. */
    .addColumn('last_login', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_user_logins_pk', ['tenant_id', 'user_id'])
    .execute();
  await db.schema.createIndex('log_user_logins_tenant_last').on('log_user_logins').columns(['tenant_id', 'last_login']).execute();
  // The logs already written (`date` is an integer on both dialects, so the division is an integer one).
  await sql`
    insert into log_daily_counts (tenant_id, day, type, n, first_at, last_at)
    select tenant_id, date / 86400000, type, count(*), min(date), max(date) from logs group by tenant_id, date / 86400000, type
  `.execute(db);
  await sql`
    insert into log_user_logins (tenant_id, user_id, last_login)
    select tenant_id, user_id, max(date) from logs where type in ('s', 'sepft') and user_id is not null group by tenant_id, user_id
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('log_user_logins').execute();
  await db.schema.dropTable('log_daily_counts').execute();
}
