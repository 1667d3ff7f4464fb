/**
 * User imports (the reference's users-imports job).
 *
 * Staging: the uploaded file is read as a stream (flat memory, whatever its size) by a streaming JSON parser,
 * and its users are written in batches (importBatchSize) beside a new job row (status `uploading`, invisible to the
 * workers). A file that is not a JSON array, or not valid JSON, still makes a job: a failed one, whose
 * `status_details` says what is wrong, as the reference does. Once the request is complete the job is
 * `pending` and any process's runner may take it.
 *
 * Processing, a batch (or a few, batchesPerStep) per transaction: each batch row is deleted first (if another
 * worker already took it, nothing is deleted and it is not applied), then each user is checked on its own
 * (user-file.ts), compared with the users already there, and inserted, updated (upsert) or refused with its
 * errors; the `user.created` / `user.updated` events and the job's counters commit with it. A crash at any
 * point leaves each batch either whole or not applied, so a resumed job writes every user exactly once.
 *
 * Upsert (reference): a user whose email already exists in the connection is updated with the fields the file
 * gives among email_verified, given_name, family_name, name, nickname, picture, app_metadata and user_metadata
 * (metadata replaced whole, not merged). Its password is left alone unless the file carries a hash, and even
 * then only while the stored one is still an imported hash: a password the user has set or used here is newer
 * than any export. A TOTP secret in `mfa_factors` becomes a confirmed enrollment of a new user, and of an upserted
 * one who has no confirmed TOTP enrollment yet: one the user enrolled or used here is never replaced by the
 * file's. Without upsert an existing email, username or id refuses the user. A user that appears twice
 * in one batch is refused the second time (DUPLICATED_USER); across batches the later one meets the earlier one
 * in the database like any existing user.
 */
import { createHash } from 'node:crypto';
import { JSONParser } from '@streamparser/json';
import type { Kysely } from 'kysely';
import { newUserId } from '../crypto/ids.js';
import { emitEvents, type EventContext, type RaisedEvent } from '../events/outbox.js';
import { presentUser } from '../management/user-view.js';
import type { Services } from '../services.js';
import { findConnectionById, listConnections, type Connection } from '../store/connections.js';
import {
  countImportProgress,
  deleteJob,
  insertImportBatch,
  insertJob,
  insertJobErrors,
  newJobId,
  nextImportBatches,
  takeImportBatch,
  updateJob,
  type Job,
  type JobErrorRow,
} from '../store/jobs.js';
import type { Dialect } from '../store/db.js';
import type { Database } from '../store/schema.js';
import { findUsersByIdentifiers, insertUsers, listLinkedIdentities, newUser, takenUserIds, writeUsers, type User } from '../store/users.js';
import { importError, type ImportError } from './import-errors.js';
import { isForeignHash, redactUser, sealForeignHash } from './password-hashes/index.js';
import { readImportedUser, type ImportedUser } from './user-file.js';
import { importedTotpEnrollment } from '../mfa/totp.js';
import { insertMfaEnrollments, usersEnrolledIn, type MfaEnrollment } from '../store/mfa-enrollments.js';

/** Users per batch: one transaction each (PostgreSQL). */
export const BATCH_SIZE = 500;
/**
 * Users per batch on SQLite. Its one connection is the batch's until it commits, so every query a login makes
 * meanwhile waits for the rest of the batch: 500 users held it for about 200 ms of CPU (several times that in
 * wall time on a busy machine) at each of the login's queries. Smaller batches cost a little more per user.
 */
export const SQLITE_BATCH_SIZE = 100;

/** The batch size for a store's dialect (see SQLITE_BATCH_SIZE). */
export function importBatchSize(dialect: Dialect): number {
  return dialect === 'sqlite' ? SQLITE_BATCH_SIZE : BATCH_SIZE;
}

export interface ImportOptions {
  upsert: boolean;
  send_completion_email: boolean;
  /** Who asked, for the events the import raises. */
  context: EventContext;
}

export interface StagedFile {
  jobId: string;
  users: number;
  /** SHA-256 of the file (hex). */
  digest: string;
  bytes: number;
  /** Why the file cannot be imported (not a JSON array, not valid JSON), or undefined. */
  problem: string | undefined;
}

export class EmptyUsersFile extends Error {
  override name = 'EmptyUsersFile';
}

/**
 * Reads the users file into batches under a new job in `uploading` state. Reads the file to its end even when
 * it is broken, so the request's other parts can still be read.
 */
export async function stageUsersFile(db: Kysely<Database>, tenantId: string, file: AsyncIterable<Buffer | string>, batchSize = BATCH_SIZE, now = Date.now()): Promise<StagedFile> {
  const jobId = newJobId();
  await insertJob(db, { id: jobId, tenant_id: tenantId, type: 'users_import', status: 'uploading', options: '{}', created_at: now });
  const digest = createHash('sha256');
  let bytes = 0;
  let users = 0;
  let seq = 0;
  let batch: unknown[] = [];
  let problem: string | undefined;
  let sawStart = false;
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  parser.onValue = ({ value }) => {
    batch.push(value);
  };
  parser.onError = (err) => {
    problem ??= parser.isEnded ? 'The users file is not valid JSON: there is more after the closing ]' : `The users file is not valid JSON: ${err.message}`;
  };
  const flush = async () => {
    const users = batch;
    batch = [];
    await insertImportBatch(db, { job_id: jobId, seq, first_index: seq * batchSize, users: JSON.stringify(users) });
    seq += 1;
  };
  try {
    for await (const chunk of file) {
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      digest.update(data);
      bytes += data.length;
      if (problem) continue;
      if (!sawStart) {
        // The root must be an array: look at its first character (after a BOM and whitespace).
        const text = data.toString('utf8').replace(/^\uFEFF/, '');
        const first = /\S/.exec(text)?.[0];
        if (first === undefined) continue;
        sawStart = true;
        if (first !== '[') {
          problem = 'The users file must contain a JSON array of user objects ([{…}, {…}]); it starts with something else';
          continue;
        }
      }
      if (parser.isEnded) {
        if (/\S/.test(data.toString('utf8'))) problem = 'The users file is not valid JSON: there is more after the closing ]';
        continue;
      }
      parser.write(data);
      while (!problem && batch.length >= batchSize) {
        users += batchSize;
        const rest = batch.splice(batchSize);
        await flush();
        batch = rest;
      }
    }
    if (bytes === 0 || !sawStart) throw new EmptyUsersFile('Users file must not be empty');
    if (!problem && !parser.isEnded) parser.end();
    if (!problem && batch.length > 0) {
      users += batch.length;
      await flush();
    }
  } catch (err) {
    await deleteJob(db, jobId);
    throw err;
  }
  return { jobId, users, digest: digest.digest('hex'), bytes, problem };
}

/** Makes a staged file a job the runners take (or a failed one, when the file was broken). */
export async function openImportJob(db: Kysely<Database>, staged: StagedFile, connection: Connection, options: ImportOptions & { external_id?: string | undefined }, now = Date.now()): Promise<void> {
  const { external_id, ...rest } = options;
  await updateJob(db, staged.jobId, {
    status: staged.problem ? 'failed' : 'pending',
    connection_id: connection.id,
    external_id: external_id ?? null,
    options: JSON.stringify(rest),
    source_digest: staged.digest,
    total: staged.problem ? 0 : staged.users,
    ...(staged.problem && { status_details: staged.problem, completed_at: now }),
  });
  if (staged.problem) await db.deleteFrom('job_import_batches').where('job_id', '=', staged.jobId).execute();
}

// --- processing ---------------------------------------------------------------------------------------------

export interface BatchOutcome {
  users: number;
  inserted: number;
  updated: number;
  failed: number;
}

export type ImportStep = { done: true } | { done: false; outcome: BatchOutcome | undefined };

interface Refusal {
  position: number;
  raw: unknown;
  errors: ImportError[];
}

interface Prepared {
  raw: unknown;
  user: ImportedUser;
  /** The sealed hash for the column, when the file gave one. */
  column: string | undefined;
  /** The TOTP enrollment of the file's `mfa_factors`, sealed, for the user it becomes. */
  totp: Omit<MfaEnrollment, 'userId'> | undefined;
}

/**
 * Batches applied in one step (one transaction), by dialect and by whether requests are coming: on SQLite a
 * commit costs about 13 ms of CPU whatever its size (every index's touched pages are written again), so while
 * no more than a progress poll comes, five of its small batches share one; while requests come, one, to hold the
 * connection briefly.
 */
export function batchesPerStep(dialect: Dialect, requestsComing: boolean): number {
  return dialect === 'sqlite' && !requestsComing ? Math.ceil(BATCH_SIZE / SQLITE_BATCH_SIZE) : 1;
}

/**
 * Applies the job's next batches (at most `maxBatches`, in one transaction, each batch on its own as if alone);
 * `done` when none is left. `outcome` is undefined when another worker had the first one.
 */
export async function importNextBatch(services: Services, job: Job, maxBatches = 1): Promise<ImportStep> {
  const db = services.store.db;
  const batches = await nextImportBatches(db, job.id, maxBatches);
  if (batches.length === 0) return { done: true };
  const connection = job.connection_id ? await findConnectionById(db, job.tenant_id, job.connection_id) : undefined;
  if (!connection) throw new ImportJobFailed('The connection of this import no longer exists');
  const options = JSON.parse(job.options) as ImportOptions;
  // Checking and sealing need no transaction: done first, so the transaction holds the database briefly.
  const parts = batches.map((batch) => ({ seq: batch.seq, ...prepareBatch(services, job, connection, batch) }));

  const outcome = await db.transaction().execute(async (trx) => {
    const done: BatchOutcome = { users: 0, inserted: 0, updated: 0, failed: 0 };
    for (const { seq, users, prepared, refusals } of parts) {
      // Another worker has this one (and those after it): what this step applied so far commits, counted.
      if (!(await takeImportBatch(trx, job.id, seq))) break;
      const result = await applyUsers(trx, job, connection, options, prepared, refusals);
      const errorRows: JobErrorRow[] = refusals
        .sort((a, b) => a.position - b.position)
        .map((r) => ({ position: r.position, user: JSON.stringify(redactUser(r.raw) ?? null), errors: JSON.stringify(r.errors) }));
      await insertJobErrors(trx, job.id, errorRows);
      done.users += users;
      done.inserted += result.inserted;
      done.updated += result.updated;
      done.failed += refusals.length;
    }
    if (done.users === 0) return undefined;
    await countImportProgress(trx, job.id, { processed: done.users, inserted: done.inserted, updated: done.updated, failed: done.failed });
    return done;
  });
  return { done: false, outcome };
}

/** A batch's users read and checked, hashes sealed: those to apply and those refused already. */
function prepareBatch(services: Services, job: Job, connection: Connection, batch: { first_index: number; users: string }): { users: number; prepared: Prepared[]; refusals: Refusal[] } {
  const raws = JSON.parse(batch.users) as unknown[];
  const refusals: Refusal[] = [];
  const prepared: Prepared[] = [];
  raws.forEach((raw, i) => {
    const position = batch.first_index + i;
    const read = readImportedUser(raw, position, connection);
    if (!read.ok) refusals.push({ position, raw, errors: read.errors });
    else
      prepared.push({
        raw,
        user: read.user,
        column: read.user.hash && sealForeignHash(services.sealer, job.tenant_id, read.user.hash),
        totp: read.user.totpSecret === undefined ? undefined : importedTotpEnrollment(services.sealer, job.tenant_id, read.user.totpSecret, Date.now()),
      });
  });
  return { users: raws.length, prepared, refusals };
}

export class ImportJobFailed extends Error {
  override name = 'ImportJobFailed';
}

/** Inserts, updates or refuses each prepared user against what the database holds now (inside the batch's transaction). */
async function applyUsers(trx: Kysely<Database>, job: Job, connection: Connection, options: ImportOptions, prepared: Prepared[], refusals: Refusal[]): Promise<{ inserted: number; updated: number }> {
  const emails = [...new Set(prepared.map((p) => p.user.email))];
  const usernames = [...new Set(prepared.flatMap((p) => (p.user.username ? [p.user.username] : [])))];
  const ids = [...new Set(prepared.flatMap((p) => (p.user.user_id ? [`auth0|${p.user.user_id}`] : [])))];
  const existing = await findUsersByIdentifiers(trx, connection.id, { emails, usernames });
  const takenIds = await takenUserIds(trx, ids);
  const byEmail = new Map(existing.filter((u) => u.email !== null).map((u) => [u.email!, u]));
  const byUsername = new Map(existing.filter((u) => u.username !== null).map((u) => [u.username!, u]));
  const connections = new Map((await listConnections(trx, job.tenant_id)).map((c) => [c.id, c]));
  const context = { ...options.context, connection_id: connection.id };
  const now = Date.now();

  const seen = { emails: new Set<string>(), usernames: new Set<string>(), ids: new Set<string>() };
  const inserts: User[] = [];
  const updates: { before: User; after: User }[] = [];
  const enrollments: MfaEnrollment[] = [];
  /** TOTP enrollments for upserted users, added only where the user has none (see the module comment). */
  const upsertedTotp: MfaEnrollment[] = [];
  for (const { raw, user, column, totp } of prepared) {
    const refuse = (error: ImportError) => refusals.push({ position: user.position, raw, errors: [error] });
    const id = user.user_id === undefined ? undefined : `auth0|${user.user_id}`;
    if (seen.emails.has(user.email) || (user.username && seen.usernames.has(user.username)) || (id && seen.ids.has(id))) {
      refuse(importError('DUPLICATED_USER', 'email', `The user ${user.email} appears more than once in the file`));
      continue;
    }
    seen.emails.add(user.email);
    if (user.username) seen.usernames.add(user.username);
    if (id) seen.ids.add(id);

    const match = byEmail.get(user.email);
    if (match && options.upsert) {
      if (id && id !== match.user_id) {
        refuse(importError('CONFLICT', 'user_id', `The user with email ${user.email} has the id ${match.user_id}, not ${id}`));
        continue;
      }
      const after = upserted(match, user, column, now);
      updates.push({ before: match, after });
      if (totp) upsertedTotp.push({ ...totp, userId: match.user_id });
      byEmail.set(user.email, after);
      continue;
    }
    if (match) {
      refuse(importError('CONFLICT_EMAIL', 'email', `A user with email ${user.email} already exists in the connection`));
      continue;
    }
    if (user.username && byUsername.has(user.username)) {
      refuse(importError('CONFLICT_USERNAME', 'username', `A user with username ${user.username} already exists in the connection`));
      continue;
    }
    if (id && takenIds.has(id)) {
      refuse(importError('DUPLICATED_USER', 'user_id', `The user id ${id} is already taken`));
      continue;
    }
    const userId = id ?? newUserId('auth0', now);
    if (totp) enrollments.push({ ...totp, userId });
    inserts.push(
      newUser(
        {
          user_id: userId,
          tenant_id: job.tenant_id,
          connection_id: connection.id,
          email: user.email,
          email_verified: user.email_verified ?? false,
          username: user.username ?? null,
          password_hash: column ?? null,
          blocked: user.blocked ?? false,
          profile: user.profile,
          user_metadata: user.user_metadata ?? {},
          app_metadata: user.app_metadata ?? {},
        },
        now,
      ),
    );
  }
  await insertUsers(trx, inserts);
  await writeUsers(
    trx,
    updates.map((u) => u.after),
    now,
  );
  const enrolled = await usersEnrolledIn(trx, job.tenant_id, [...new Set(upsertedTotp.map((e) => e.userId))], 'totp');
  await insertMfaEnrollments(trx, [...enrollments, ...upsertedTotp.filter((e) => !enrolled.has(e.userId))]);

  const linked = updates.length === 0 ? new Map<string, User[]>() : await listLinkedIdentities(trx, job.tenant_id, updates.map((u) => u.after.user_id));
  const events: RaisedEvent[] = [
    ...inserts.map((user) => ({ tenantId: job.tenant_id, type: 'user.created' as const, object: presentUser(user, [], { connections }), context })),
    ...updates.map(({ before, after }) => ({
      tenantId: job.tenant_id,
      type: 'user.updated' as const,
      object: presentUser(after, linked.get(after.user_id) ?? [], { connections }),
      previousObject: presentUser(before, linked.get(before.user_id) ?? [], { connections }),
      context,
    })),
  ];
  await emitEvents(trx, events);
  return { inserted: inserts.length, updated: updates.length };
}

/** The existing user with the file's upsertable fields (see the module comment). */
function upserted(existing: User, user: ImportedUser, column: string | undefined, now: number): User {
  const keepsPassword = existing.password_hash !== null && !isForeignHash(existing.password_hash);
  return {
    ...existing,
    ...(user.email_verified !== undefined && { email_verified: user.email_verified }),
    profile: { ...existing.profile, ...user.profile },
    ...(user.app_metadata !== undefined && { app_metadata: user.app_metadata }),
    ...(user.user_metadata !== undefined && { user_metadata: user.user_metadata }),
    ...(column !== undefined && !keepsPassword && { password_hash: column }),
    updated_at: now,
  };
}
