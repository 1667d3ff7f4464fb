/** A fresh PostgreSQL schema per bench run, so runs never see each other's rows. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * A fresh schema in the bench's PostgreSQL, or undefined when it does not answer.
 * @returns {Promise<{ url: string, drop: () => Promise<void> } | undefined>}
 */
export async function postgresSchema() {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch {
    return undefined;
  }
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.end();
  return {
    url: `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    drop: async () => {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
