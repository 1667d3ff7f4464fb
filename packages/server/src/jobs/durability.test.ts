/**
 * An import survives SIGKILL: the built `gatehouse start` runs as a child process (SQLite, then PostgreSQL), a
 * file of 100,000 users is imported through the Management API, the process is killed with SIGKILL while the job
 * is part-way, and restarted on the same data. The job must complete with every user exactly once: 100,000
 * users inserted, none refused (a batch applied twice would meet its own users as conflicts), one user.created
 * event each, and the counts of the job equal to what the database holds.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliProcess } from '../test-support/cli.js';
import { freePort, freshPostgresSchema, postgresAvailable } from '../test-support/services.js';

const USERS = 100_000;
const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

/** A users file in the reference's schema, each user with a precomputed (shared) MD5 hash. */
function usersFile(count: number): string {
  const hash = { algorithm: 'md5', hash: { value: '5f4dcc3b5aa765d61d8327deb882cf99', encoding: 'hex' } };
  const users = Array.from({ length: count }, (_, i) => ({ email: `durable-${i}@example.com`, user_metadata: { n: i }, custom_password_hash: hash }));
  return JSON.stringify(users);
}

describe.each(dialects)('an import job survives SIGKILL on %s', (dialect) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-durability-'));
  const postgres = dialect === 'postgres' ? freshPostgresSchema() : undefined;
  let run: CliProcess | undefined;

  afterAll(async () => {
    if (run && run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    await postgres?.drop();
  });

  /** Counts in the database itself, not through the server. */
  async function databaseCounts(jobId: string): Promise<{ users: number; distinct: number; events: number; job: { inserted: number; failed: number; processed: number } }> {
    const queries = {
      users: "select count(*) as n from users where email like 'durable-%'",
      distinct: "select count(distinct email) as n from users where email like 'durable-%'",
      events: "select count(*) as n from events where type = 'user.created' and data like '%durable-%'",
    };
    if (dialect === 'sqlite') {
      const db = new Database(path.join(dataDir, 'gatehouse.sqlite'), { readonly: true });
      try {
        const n = (q: string) => Number((db.prepare(q).get() as { n: number }).n);
        const job = db.prepare('select inserted, failed, processed from jobs where id = ?').get(jobId) as { inserted: number; failed: number; processed: number };
        return { users: n(queries.users), distinct: n(queries.distinct), events: n(queries.events), job };
      } finally {
        db.close();
      }
    }
    const url = new URL(postgres!.url);
    const schema = url.searchParams.get('schema')!;
    url.searchParams.delete('schema');
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(`set search_path to "${schema}"`);
      const n = async (q: string) => Number((await client.query<{ n: string }>(q)).rows[0]!.n);
      const job = (await client.query<{ inserted: number; failed: number; processed: number }>('select inserted, failed, processed from jobs where id = $1', [jobId])).rows[0]!;
      return { users: await n(queries.users), distinct: await n(queries.distinct), events: await n(queries.events), job };
    } finally {
      await client.end();
    }
  }

  it(`imports ${USERS} users exactly once across a SIGKILL and a restart`, { timeout: 900_000 }, async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ...(postgres && { DATABASE_URL: postgres.url }) };
    const base = `http://localhost:${port}`;
    const start = async () => {
      const child = runCli(['start'], env);
      await child.waitFor(/Management API token/, 120_000);
      return child;
    };
    run = await start();

    const admin = JSON.parse(readFileSync(path.join(dataDir, 'admin-credentials.json'), 'utf8')) as { client_id: string; client_secret: string };
    const tokenResponse = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: admin.client_id, client_secret: admin.client_secret, audience: `${base}/api/v2/` }),
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const api = async (p: string) => (await fetch(`${base}/api/v2${p}`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<Record<string, unknown>>;
    const connections = (await api('/connections')) as unknown as { id: string; name: string }[];
    const connectionId = connections.find((c) => c.name === 'Username-Password-Authentication')!.id;

    const form = new FormData();
    form.append('users', new Blob([usersFile(USERS)], { type: 'application/json' }), 'users.json');
    form.append('connection_id', connectionId);
    const created = await fetch(`${base}/api/v2/jobs/users-imports`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(created.status).toBe(202);
    const jobId = ((await created.json()) as { id: string }).id;

    // Kill it part-way: once some batches are in, and before the last.
    for (;;) {
      const before = await api(`/jobs/${jobId}`);
      const { inserted } = before.summary as { inserted: number };
      if (inserted >= USERS / 20 || before.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    run.child.kill('SIGKILL');
    await run.exited;
    const atKill = await databaseCounts(jobId);
    expect(atKill.users).toBeLessThan(USERS);
    expect(atKill.users).toBe(atKill.job.inserted);

    run = await start();
    let job: Record<string, unknown>;
    for (;;) {
      job = await api(`/jobs/${jobId}`);
      if (job.status === 'completed' || job.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(job).toMatchObject({ status: 'completed', summary: { total: USERS, inserted: USERS, updated: 0, failed: 0 } });
    const after = await databaseCounts(jobId);
    expect(after).toEqual({ users: USERS, distinct: USERS, events: USERS, job: { inserted: USERS, failed: 0, processed: USERS } });
    // The restart really resumed the job rather than running it from the start: the first run's users stayed.
    expect(atKill.users).toBeGreaterThan(0);
  });
});
