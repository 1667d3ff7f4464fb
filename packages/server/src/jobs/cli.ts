/**
 * `gatehouse users import FILE --connection NAME [--upsert]` and `gatehouse users export FILE [--format json|csv]
 * [--fields …]`: the same jobs as the Management API's, made and worked in this process, like the other commands
 * (`gatehouse export` / `import`) that work on the database directly. A server running on the same database does
 * not get in the way: the job is a row either may work on, each batch exactly once, and the progress shown is the
 * job's, whoever advances it.
 *
 *  - Progress: a bar on a terminal, plain lines otherwise (progress.ts).
 *  - Resuming: an import of the same file into the same connection (and the same --upsert), or an export with
 *    the same options, that did not finish (Ctrl-C, a crash, a kill) is picked up where it stopped instead of
 *    starting again. A server on the same database may finish such a job meanwhile: the job carries a mark that
 *    a CLI run took it on and has not reported it yet (cli_report_pending), so the same command finds it
 *    finished and reports it as if it had run it, then clears the mark (a later run is then a new job).
 *  - The summary names the file of refused users (FILE without .json, plus .errors.json), one entry per user
 *    with its errors, hashes as `*****`.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { closeServices, createServices, prepare, type Prepared } from '../server.js';
import type { Services } from '../services.js';
import { findConnectionByName, type Connection } from '../store/connections.js';
import { findJobById, findJobLeftByCli, findUnfinishedJob, markCliReportPending, type CliJobMatch, type Job } from '../store/jobs.js';
import { findDefaultTenant, findTenantById, type Tenant } from '../store/tenants.js';
import { fieldsProblem, type ExportField, type ExportFormat } from './export-fields.js';
import { jobErrorsDocument } from './job-errors.js';
import { createProgress } from './progress.js';
import { JobRunner } from './runner.js';
import { createExportJob, exportFileChunks, exportOptions } from './users-export.js';
import { importBatchSize, openImportJob, stageUsersFile } from './users-import.js';

export const USERS_USAGE = `  gatehouse users import FILE --connection NAME [--upsert] [--tenant NAME]
                                          import a users file (the reference's JSON schema) into a database connection
  gatehouse users export FILE [--format json|csv] [--fields NAME[=COLUMN],…] [--connection NAME] [--limit N] [--tenant NAME]
                                          export users (FILE ending in .gz stays compressed)`;

/** A job that failed as a whole (the file is not a JSON array, …): exit code 65. */
export class UsersJobError extends Error {
  override name = 'UsersJobError';
}

const POLL_MS = 250;

interface Flags {
  file: string;
  values: Map<string, string>;
  switches: Set<string>;
}

const VALUED = ['--connection', '--tenant', '--format', '--fields', '--limit'];

function parseFlags(args: string[], command: string): Flags {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (VALUED.includes(arg)) {
      const value = args[++i];
      if (value === undefined || value.startsWith('--')) throw new ConfigError(`${arg} needs a value\n${USERS_USAGE}`);
      values.set(arg, value);
    } else if (arg.startsWith('--')) {
      switches.add(arg);
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== 1) throw new ConfigError(`usage: gatehouse users ${command} FILE …\n${USERS_USAGE}`);
  return { file: positional[0]!, values, switches };
}

interface Session {
  config: Config;
  prepared: Prepared;
  services: Services;
  tenant: Tenant;
}

async function withSession(tenantName: string | undefined, work: (session: Session) => Promise<void>): Promise<void> {
  const config = loadConfig();
  // No bootstrap: the tenant is the server's, as its own start made it; this shell's PORT or public URL may differ.
  const prepared = await prepare(config, { bootstrap: false });
  const services = createServices(config, prepared);
  try {
    const db = prepared.store.db;
    const row = tenantName ? await db.selectFrom('tenants').select('id').where('name', '=', tenantName).executeTakeFirst() : await findDefaultTenant(db);
    const tenant = row && (await findTenantById(db, row.id));
    if (!tenant) throw new ConfigError(tenantName ? `no tenant named ${tenantName}` : 'no default tenant yet: run gatehouse start once');
    await work({ config, prepared, services, tenant });
  } finally {
    await closeServices(services);
    await prepared.store.close();
  }
}

async function databaseConnection(session: Session, name: string | undefined): Promise<Connection> {
  if (!name) throw new ConfigError(`--connection NAME is required: the database connection to import into\n${USERS_USAGE}`);
  const connection = await findConnectionByName(session.prepared.store.db, session.tenant.id, name);
  if (!connection) throw new ConfigError(`no connection named ${name} in tenant ${session.tenant.name}`);
  if (connection.strategy !== 'auth0') throw new ConfigError(`${name} is not a database connection (strategy ${connection.strategy})`);
  return connection;
}

async function fileDigest(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A runner for this job alone, stopped (finishing its current step) on Ctrl-C, and the job polled for progress. */
async function runToEnd(session: Session, jobId: string, label: string, unit: string): Promise<Job> {
  const logger = {
    info: () => undefined,
    warn: (details: unknown, message?: string) => console.error(`warning: ${message ?? String(details)}`),
    error: (details: unknown, message?: string) => console.error(`error: ${message ?? String(details)}`),
  };
  const runner = new JobRunner(session.services, logger as never, { onlyJob: jobId, concurrency: 1, pollMs: POLL_MS });
  const progress = createProgress(label, unit);
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
  };
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  runner.start();
  try {
    for (;;) {
      const job = await findJobById(session.prepared.store.db, jobId);
      if (!job) throw new UsersJobError(`the job ${jobId} is gone`);
      progress.update(job.processed, job.total);
      if (job.status === 'completed' || job.status === 'failed') return job;
      if (interrupted) {
        progress.stop();
        await runner.stop();
        const now = (await findJobById(session.prepared.store.db, jobId))!;
        console.log(`\nInterrupted: job ${jobId} is at ${now.processed} of ${now.total} ${unit}. Run the same command again to resume it.`);
        process.exit(130);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    progress.stop();
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
    await runner.stop();
  }
}

const finished = (job: Job) => job.status === 'completed' || job.status === 'failed';

/**
 * The job an earlier run of the same command left: unfinished (resumed), or finished meanwhile by a server on
 * the same database (reported as is). Undefined when there is none: the command makes a new job.
 */
async function jobLeftBefore(session: Session, match: CliJobMatch, unit: string): Promise<Job | undefined> {
  const db = session.prepared.store.db;
  const unfinished = await findUnfinishedJob(db, session.tenant.id, match);
  if (unfinished) {
    console.log(`Resuming job ${unfinished.id}: ${count(unfinished.processed)} of ${count(unfinished.total)} ${unit}.`);
    return unfinished;
  }
  const left = await findJobLeftByCli(db, session.tenant.id, match);
  if (left) {
    const how = left.status === 'failed' ? 'failed meanwhile' : 'was finished meanwhile';
    console.log(`Job ${left.id}, which an earlier run of this command left, ${how} (a server on the same database works any job left unfinished).`);
  }
  return left;
}

/** Runs the job unless it is finished already; from here (or its making) until it is reported, a rerun of the command reports it. */
async function takeOn(session: Session, job: Job, label: string, unit: string): Promise<Job> {
  if (!job.cli_report_pending) await markCliReportPending(session.prepared.store.db, job.id, true);
  return finished(job) ? job : runToEnd(session, job.id, label, unit);
}

/** The user has seen the job's outcome: a later run of the same command is a new job. */
async function reported(session: Session, job: Job): Promise<void> {
  await markCliReportPending(session.prepared.store.db, job.id, false);
}

function seconds(job: Job): number {
  return Math.max(0.001, ((job.completed_at ?? Date.now()) - (job.started_at ?? job.created_at)) / 1000);
}

const count = (n: number) => n.toLocaleString('en-US');

export async function usersImportCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, 'import');
  await withSession(flags.values.get('--tenant'), async (session) => {
    const connection = await databaseConnection(session, flags.values.get('--connection'));
    const size = statSync(flags.file, { throwIfNoEntry: false });
    if (!size?.isFile()) throw new ConfigError(`${flags.file}: no such file`);
    if (size.size > session.config.importMaxBytes) {
      throw new ConfigError(`${flags.file} is ${count(size.size)} bytes, above GATEHOUSE_IMPORT_MAX_BYTES (${count(session.config.importMaxBytes)}): split it, or raise the limit`);
    }
    const db = session.prepared.store.db;
    const upsert = flags.switches.has('--upsert');
    const digest = await fileDigest(flags.file);
    const options = { upsert, send_completion_email: false, context: { tenant_id: session.tenant.id, user_agent: 'gatehouse-cli' } };
    // The options as openImportJob stores them, so that a run with another --upsert is another job.
    const match: CliJobMatch = { type: 'users_import', connectionId: connection.id, sourceDigest: digest, options: JSON.stringify(options) };
    let job = await jobLeftBefore(session, match, 'users done');
    if (!job) {
      const staged = await stageUsersFile(db, session.tenant.id, createReadStream(flags.file), importBatchSize(session.prepared.store.dialect));
      // Marked while no worker can see it yet: a Ctrl-C from the moment it is due still leaves it marked.
      await markCliReportPending(db, staged.jobId, true);
      await openImportJob(db, staged, connection, options);
      job = (await findJobById(db, staged.jobId))!;
      console.log(`Job ${job.id}: ${count(job.total)} users to import into ${connection.name}${upsert ? ' (upsert)' : ''}.`);
    }
    const done = await takeOn(session, job, 'import', 'users');
    if (done.status === 'failed') {
      await reported(session, done);
      throw new UsersJobError(`job ${done.id} failed: ${done.status_details ?? 'see the server log'}`);
    }
    console.log(
      `Imported ${flags.file} into ${connection.name} (job ${done.id}): ${count(done.inserted)} inserted, ${count(done.updated)} updated, ` +
        `${count(done.failed)} failed, of ${count(done.total)}, in ${seconds(done).toFixed(1)} s (${count(Math.round(done.processed / seconds(done)))} users/s).`,
    );
    if (done.failed > 0) {
      const errorsFile = path.resolve(path.dirname(flags.file), `${path.basename(flags.file).replace(/\.json$/i, '')}.errors.json`);
      await pipeline(Readable.from(jobErrorsDocument(db, done.id)), createWriteStream(errorsFile));
      console.log(`${count(done.failed)} ${done.failed === 1 ? 'user was' : 'users were'} refused; each one with its errors is in ${errorsFile}`);
    }
    await reported(session, done);
  });
}

/** `--fields email,user_metadata.plan=plan` → [{name: 'email'}, {name: 'user_metadata.plan', export_as: 'plan'}]. */
function parseFields(raw: string | undefined): ExportField[] | undefined {
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
    .map((f) => {
      const eq = f.indexOf('=');
      return eq < 0 ? { name: f } : { name: f.slice(0, eq), export_as: f.slice(eq + 1) };
    });
}

export async function usersExportCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, 'export');
  const format = (flags.values.get('--format') ?? 'json') as ExportFormat;
  if (format !== 'json' && format !== 'csv') throw new ConfigError(`--format ${String(format)}: expected json or csv`);
  const fields = parseFields(flags.values.get('--fields'));
  const rawLimit = flags.values.get('--limit');
  if (rawLimit !== undefined && !/^[1-9]\d*$/.test(rawLimit)) throw new ConfigError(`--limit ${rawLimit}: expected a whole number above 0`);
  const limit = rawLimit === undefined ? undefined : Number(rawLimit);
  if (fields) {
    const problem = fieldsProblem(fields, format);
    if (problem) throw new ConfigError(`--fields: ${problem}`);
  }
  await withSession(flags.values.get('--tenant'), async (session) => {
    const connectionName = flags.values.get('--connection');
    const connection = connectionName ? await databaseConnection(session, connectionName) : undefined;
    const request = { format, ...(fields && { fields }), limit };
    const match: CliJobMatch = { type: 'users_export', connectionId: connection?.id ?? null, options: JSON.stringify(exportOptions(request)) };
    let job = await jobLeftBefore(session, match, 'users written');
    if (!job) {
      job = await createExportJob(session.services, session.tenant, connection, request, Date.now(), true);
      console.log(`Job ${job.id}: ${count(job.total)} users to export.`);
    }
    const done = await takeOn(session, job, 'export', 'users');
    if (done.status === 'failed') {
      await reported(session, done);
      throw new UsersJobError(`job ${done.id} failed: ${done.status_details ?? 'see the server log'}`);
    }
    const chunks = Readable.from(exportFileChunks(session.services, done.id));
    if (flags.file.endsWith('.gz')) await pipeline(chunks, createWriteStream(flags.file));
    else await pipeline(chunks, createGunzip(), createWriteStream(flags.file));
    console.log(`Exported ${count(done.processed)} users (${format}) to ${flags.file} (job ${done.id}, ${seconds(done).toFixed(1)} s). Password hashes are never exported.`);
    await reported(session, done);
  });
}
