/**
 * `gatehouse users import` and `gatehouse users export` as a user runs them (the built CLI in a child process,
 * stdout a pipe), on the SQLite file of a server that is running meanwhile: plain progress lines, a summary
 * naming the errors file, a job interrupted with Ctrl-C (SIGINT) picked up by the same command, a job the server
 * finished after the command left it reported by the same command as if it had run it, exports in CSV and gzip,
 * and usage errors.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJobById, finishJob } from '../store/jobs.js';
import { runCli, runCliToEnd } from '../test-support/cli.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { exportNextPart } from './users-export.js';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

describe('gatehouse users import / export', () => {
  let server: TestServer;
  let work: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    work = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-users-cli-'));
    env = { GATEHOUSE_DATA_DIR: server.dataDir, GATEHOUSE_LOG_LEVEL: 'warn' };
  });
  afterAll(async () => {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const byEmail = async (email: string) => {
    const res = await fetch(`${server.url}/api/v2/users-by-email?email=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${await managementToken(server)}` } });
    return (await res.json()) as { email: string; user_metadata: Record<string, unknown> }[];
  };
  const primaryUsers = async () =>
    Number((await server.server.prepared.store.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('linked_to', 'is', null).executeTakeFirstOrThrow()).n);

  // Each test runs the CLI several times; a loaded machine makes each start slow, so the time allowed is generous.
  it('imports a file beside the running server, with progress lines, a summary and the errors file', { timeout: 300_000 }, async () => {
    const file = path.join(work, 'people.json');
    const people = Array.from({ length: 1200 }, (_, i) => ({
      email: `cli-${i}@example.com`,
      user_metadata: { i },
      custom_password_hash: { algorithm: 'md5', hash: { value: md5(`pw-${i}`), encoding: 'hex' } },
    }));
    people.splice(7, 0, { email: 'cli-broken', user_metadata: { i: -1 }, custom_password_hash: { algorithm: 'md5', hash: { value: 'nope', encoding: 'hex' } } });
    writeFileSync(file, JSON.stringify(people));
    const { code, output } = await runCliToEnd(['users', 'import', file, '--connection', 'Username-Password-Authentication'], env);
    expect(output, output).toMatch(/Job job_[A-Za-z0-9]{16}: 1,201 users to import into Username-Password-Authentication\./);
    expect(output).toMatch(/^import: \d+\/1201 users \(\d+%\), \d+ users\/s$/m);
    expect(output).toMatch(/Imported .*people\.json into Username-Password-Authentication \(job job_\w+\): 1,200 inserted, 0 updated, 1 failed, of 1,201/);
    const errorsFile = path.join(work, 'people.errors.json');
    expect(output).toContain(`1 user was refused; each one with its errors is in ${errorsFile}`);
    expect(code).toBe(0);
    const errors = JSON.parse(readFileSync(errorsFile, 'utf8')) as unknown[];
    expect(errors).toEqual([
      {
        user: { email: 'cli-broken', user_metadata: { i: -1 }, custom_password_hash: { algorithm: 'md5', hash: { value: '*****', encoding: 'hex' } } },
        errors: [{ code: 'FORMAT', path: 'email', message: expect.any(String) }],
      },
    ]);
    // The running server sees them at once.
    expect(await byEmail('cli-1199@example.com')).toEqual([expect.objectContaining({ email: 'cli-1199@example.com', user_metadata: { i: 1199 } })]);
  });

  it('resumes an import interrupted with Ctrl-C when the same command runs again', { timeout: 300_000 }, async () => {
    const file = path.join(work, 'many.json');
    // Large enough that the running server, which helps with any unfinished job, cannot finish it between the
    // Ctrl-C and the second command (40,000 once could, after imports got faster).
    const count = 200_000;
    writeFileSync(file, JSON.stringify(Array.from({ length: count }, (_, i) => ({ email: `resume-${i}@example.com` }))));
    const args = ['users', 'import', file, '--connection', 'Username-Password-Authentication'];
    const first = runCli(args, env);
    await first.waitFor(/^import: [1-9]\d*\/200000 users/m, 240_000);
    first.child.kill('SIGINT');
    const stopped = await first.exited;
    const interrupted = /Interrupted: job (job_\w+) is at (\d+) of 200000 users\. Run the same command again to resume it\./.exec(first.output());
    expect(interrupted, first.output()).not.toBeNull();
    expect(stopped.code).toBe(130);
    const atStop = Number(interrupted![2]);

    const second = await runCliToEnd(args, env);
    expect(second.output).toMatch(new RegExp(`Resuming job ${interrupted![1]}: [\\d,]+ of 200,000 users done\\.`));
    expect(second.output).toMatch(/200,000 inserted, 0 updated, 0 failed, of 200,000/);
    expect(second.code).toBe(0);
    const db = server.server.prepared.store.db;
    const stored = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('email', 'like', 'resume-%').executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(count);
    // The server may have helped, but the first run's users were not redone: no job ran the file twice.
    expect(atStop).toBeGreaterThan(0);
  });

  /** Waits (a bound for a hang, not a speed) until the running server has finished the job, and gives its status. */
  const finishedByServer = async (jobId: string): Promise<string> => {
    const token = await managementToken(server);
    for (let waited = 0; waited < 240_000; waited += 200) {
      const job = (await (await fetch(`${server.url}/api/v2/jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { status: string };
      if (job.status === 'completed' || job.status === 'failed') return job.status;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the server did not finish ${jobId}`);
  };

  it('reports an import the server finished after a Ctrl-C as if it had run it, and a later run is a new job', { timeout: 300_000 }, async () => {
    const file = path.join(work, 'left.json');
    const count = 10_000;
    const people: object[] = Array.from({ length: count }, (_, i) => ({ email: `left-${i}@example.com`, user_metadata: { i } }));
    people.splice(3, 0, { email: 'left-broken', user_metadata: { i: -1 } });
    writeFileSync(file, JSON.stringify(people));
    const args = ['users', 'import', file, '--connection', 'Username-Password-Authentication'];
    const first = runCli(args, env);
    const [, jobId] = await first.waitFor(/Job (job_\w+): 10,001 users to import/, 240_000);
    // Ctrl-C once it works on the job (its first progress line).
    await first.waitFor(/^import: \d+\/10001 users/m, 240_000);
    first.child.kill('SIGINT');
    expect((await first.exited).code, first.output()).toBe(130);
    expect(first.output()).toMatch(new RegExp(`Interrupted: job ${jobId} is at \\d+ of 10001 users\\.`));
    // The server on the same database carries on with the job the command left, to its end.
    expect(await finishedByServer(jobId!)).toBe('completed');

    const second = await runCliToEnd(args, env);
    expect(second.output).toContain(`Job ${jobId}, which an earlier run of this command left, was finished meanwhile (a server on the same database works any job left unfinished).`);
    expect(second.output).toMatch(new RegExp(`Imported .*left\\.json into Username-Password-Authentication \\(job ${jobId}\\): 10,000 inserted, 0 updated, 1 failed, of 10,001`));
    const errorsFile = path.join(work, 'left.errors.json');
    expect(second.output).toContain(`1 user was refused; each one with its errors is in ${errorsFile}`);
    expect(second.output).not.toContain('users to import');
    expect(second.code).toBe(0);
    expect(JSON.parse(readFileSync(errorsFile, 'utf8'))).toEqual([{ user: { email: 'left-broken', user_metadata: { i: -1 } }, errors: [{ code: 'FORMAT', path: 'email', message: expect.any(String) }] }]);
    const db = server.server.prepared.store.db;
    const stored = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('email', 'like', 'left-%').executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(count);

    // Reported once: running the command again on purpose is a new job, which finds every user there already.
    const third = await runCliToEnd(args, env);
    const again = /Job (job_\w+): 10,001 users to import/.exec(third.output);
    expect(again, third.output).not.toBeNull();
    expect(again![1]).not.toBe(jobId);
    expect(third.output).toMatch(/0 inserted, 0 updated, 10,001 failed, of 10,001/);
    expect(third.code).toBe(0);
  });

  it('reports an export finished after the command was killed as if it had run it', { timeout: 300_000 }, async () => {
    const file = path.join(work, 'left.ndjson');
    const args = ['users', 'export', file, '--connection', 'Username-Password-Authentication'];
    const first = runCli(args, env);
    const [, jobId] = await first.waitFor(/Job (job_\w+): [\d,]+ users to export\./, 240_000);
    // Killed outright: whether it wrote some parts or all of them, it reported nothing.
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // Another process works it to its end (the dead one's lease would keep the server away for a while).
    const services = server.server.services;
    let job = (await findJobById(services.store.db, jobId!))!;
    while (job.status !== 'completed') {
      if ((await exportNextPart(services, job)).done) await finishJob(services.store.db, job.id, 'completed');
      job = (await findJobById(services.store.db, jobId!))!;
    }

    const second = await runCliToEnd(args, env);
    expect(second.output).toContain(`Job ${jobId}, which an earlier run of this command left, was finished meanwhile`);
    expect(second.output).toMatch(new RegExp(`Exported ${job.processed.toLocaleString('en-US')} users \\(json\\) to .*left\\.ndjson \\(job ${jobId}`));
    expect(second.output).not.toContain('users to export');
    expect(second.code).toBe(0);
    const exported = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(exported.length).toBe(job.processed);
    const db = services.store.db;
    const inConnection = await db
      .selectFrom('users')
      .innerJoin('connections', 'connections.id', 'users.connection_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('connections.name', '=', 'Username-Password-Authentication')
      .where('users.linked_to', 'is', null)
      .executeTakeFirstOrThrow();
    expect(exported.length).toBe(Number(inConnection.n));
    expect((await findJobById(services.store.db, jobId!))!.cli_report_pending).toBe(0);
  });

  it('exports CSV with chosen fields, and gzip NDJSON as is', { timeout: 300_000 }, async () => {
    const csv = path.join(work, 'people.csv');
    const out = await runCliToEnd(['users', 'export', csv, '--format', 'csv', '--fields', 'email,user_metadata.i=number', '--limit', '3'], env);
    expect(out.output).toMatch(/Exported 3 users \(csv\) to .*people\.csv \(job job_\w+/);
    expect(out.code).toBe(0);
    const lines = readFileSync(csv, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('"email","number"');
    expect(lines.slice(1)).toHaveLength(3);
    for (const line of lines.slice(1)) expect(line).toMatch(/^"'[^"]+@example\.com",(\d+)?$/);

    const gz = path.join(work, 'all.ndjson.gz');
    expect((await runCliToEnd(['users', 'export', gz], env)).code).toBe(0);
    const exported = gunzipSync(readFileSync(gz)).toString('utf8').trimEnd().split('\n');
    expect(exported.length).toBe(await primaryUsers());
    expect(exported.join('\n')).not.toMatch(/\$import\$|password_hash/);
  });

  it('explains usage errors with the configuration exit code', { timeout: 300_000 }, async () => {
    const missing = await runCliToEnd(['users', 'import', path.join(work, 'people.json')], env);
    expect(missing.output).toContain('--connection NAME is required');
    expect(missing.code).toBe(78);
    const nothing = await runCliToEnd(['users', 'import', path.join(work, 'none.json'), '--connection', 'Username-Password-Authentication'], env);
    expect(nothing.output).toContain('no such file');
    const wrongConnection = await runCliToEnd(['users', 'import', path.join(work, 'people.json'), '--connection', 'email'], env);
    expect(wrongConnection.output).toContain('not a database connection');
    const format = await runCliToEnd(['users', 'export', path.join(work, 'x'), '--format', 'xml'], env);
    expect(format.output).toContain('expected json or csv');
    expect(format.code).toBe(78);
    const notArray = path.join(work, 'object.json');
    writeFileSync(notArray, '{"users": []}');
    const failed = await runCliToEnd(['users', 'import', notArray, '--connection', 'Username-Password-Authentication'], env);
    expect(failed.output).toMatch(/Users job failed: job job_\w+ failed: The users file must contain a JSON array/);
    expect(failed.code).toBe(65);
  });
});
