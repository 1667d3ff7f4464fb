/**
 * The job runner: the background worker that claims jobs (store/jobs.ts) and works them one step at a time (an
 * import batch, an export part), as the event and email workers do with their rows.
 *
 *  - Durable: a claim is a lease (LEASE_MS), renewed after every step. A process that dies leaves its jobs to be
 *    claimed again when the lease runs out (at once on SQLite's restart, the only claimer), and each step is
 *    exactly-once by itself (see users-import.ts and users-export.ts), so a resumed job duplicates nothing.
 *  - Bounded: at most `concurrency` jobs at a time in a process, at most one per tenant, so one tenant's
 *    import cannot crowd out another's. Between steps the runner lets waiting requests run first, and while
 *    requests are being answered (or logins wait for password hashing) it rests as long as its step took, or
 *    until they are done: sign-ins keep their pace and the import slows down instead. Requests count, not only
 *    hashing: a login waits for the database before it hashes, and on SQLite every query it makes queues behind
 *    the batch holding the one connection, so a runner that rested only for hashing never let it get there.
 *  - Finished jobs are deleted 24 hours after they end (the reference keeps job data for 24 hours); an upload
 *    abandoned half-way, after an hour.
 */
import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { argon2Pressure } from '../crypto/passwords.js';
import { requestsInFlight, requestsReceived } from '../http/requests-in-flight.js';
import type { Services } from '../services.js';
import { claimJobs, findJobById, finishJob, purgeJobs, releaseJob, releaseJobLeases, renewLease, type Job, type Lease } from '../store/jobs.js';
import { batchesPerStep, ImportJobFailed, importNextBatch } from './users-import.js';
import { exportNextPart } from './users-export.js';

export const LEASE_MS = 30_000;
export const JOB_RETENTION_MS = 24 * 3_600_000;
const ABANDONED_UPLOAD_MS = 3_600_000;
const PURGE_EVERY_MS = 3_600_000;
/** Unexpected failures of one step in a row before the job is given up as failed. */
const MAX_STEP_FAILURES = 3;
const RETRY_DELAY_MS = 1000;
/** The longest rest between two steps while requests wait. */
const MAX_REST_MS = 2000;
/** While resting, how often to look whether the requests are done. */
const REST_SLICE_MS = 10;

const queued = new EventEmitter();
queued.setMaxListeners(0);

/** Wakes this process's runner: a job was just made (it may commit a moment later). */
export function jobQueued(): void {
  queued.emit('queued');
}

export interface JobRunnerOptions {
  /** Jobs worked at once in this process. */
  concurrency?: number;
  /** How often to look for jobs when nothing woke the runner. */
  pollMs?: number;
  /** On start, make jobs leased by a dead process due at once (only where this is the one claimer: SQLite, one process). */
  releaseLeasesOnStart?: boolean;
  /** Work on this job only (the CLI). */
  onlyJob?: string;
  /** Rest after each step as long as it took times this, while requests wait (default 1). */
  restFactor?: number;
}

type Logger = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

export class JobRunner {
  readonly #services: Services;
  readonly #log: Logger;
  readonly #concurrency: number;
  readonly #pollMs: number;
  readonly #releaseOnStart: boolean;
  readonly #onlyJob: string | undefined;
  readonly #restFactor: number;
  /** Jobs being worked, by id, with their tenant. */
  readonly #running = new Map<string, { tenantId: string; task: Promise<void> }>();
  #stopped = false;
  #loop: Promise<void> | undefined;
  #nudge: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;
  #purgedAt = 0;
  /** requestsReceived() when the last import step began. */
  #requestsSeen = 0;

  constructor(services: Services, log: Logger, options: JobRunnerOptions = {}) {
    this.#services = services;
    this.#log = log;
    this.#concurrency = options.concurrency ?? 2;
    this.#pollMs = options.pollMs ?? 1000;
    this.#releaseOnStart = options.releaseLeasesOnStart ?? false;
    this.#onlyJob = options.onlyJob;
    this.#restFactor = options.restFactor ?? 1;
  }

  start(): void {
    if (this.#loop) return;
    const wake = () => this.wake();
    queued.on('queued', wake);
    this.#unsubscribe = () => queued.off('queued', wake);
    this.#loop = this.#run();
  }

  wake(): void {
    this.#nudge?.();
  }

  /** Stops claiming, lets each job finish its current step, and gives the jobs back for others to take. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#nudge?.();
    await this.#loop;
    await Promise.allSettled([...this.#running.values()].map((r) => r.task));
  }

  /** Whether any job is being worked on in this process. */
  get busy(): boolean {
    return this.#running.size > 0;
  }

  async #run(): Promise<void> {
    const db = this.#services.store.db;
    if (this.#releaseOnStart) {
      try {
        const released = await releaseJobLeases(db);
        if (released > 0) this.#log.info({ released }, 'jobs left by a previous process are due again');
      } catch (err) {
        this.#log.error({ err }, 'could not release job leases');
      }
    }
    while (!this.#stopped) {
      if (!this.#onlyJob && Date.now() - this.#purgedAt > PURGE_EVERY_MS) {
        this.#purgedAt = Date.now();
        await purgeJobs(db, Date.now() - JOB_RETENTION_MS, Date.now() - ABANDONED_UPLOAD_MS).catch((err: unknown) => this.#log.error({ err }, 'purging old jobs failed'));
      }
      const room = this.#concurrency - this.#running.size;
      if (room > 0) {
        try {
          const busyTenants = [...new Set([...this.#running.values()].map((r) => r.tenantId))];
          const { jobs, lease } = await claimJobs(db, this.#services.store.dialect, {
            limit: room,
            leaseMs: LEASE_MS,
            busyTenants,
            ...(this.#onlyJob && { onlyJob: this.#onlyJob }),
          });
          // Two jobs of one tenant may come in one claim: keep the first, give the other back.
          const taken = new Set(busyTenants);
          for (const job of jobs) {
            if (taken.has(job.tenant_id)) {
              await releaseJob(db, job.id, lease.id);
              continue;
            }
            taken.add(job.tenant_id);
            this.#begin(job, lease);
          }
        } catch (err) {
          if (this.#stopped) break;
          this.#log.error({ err }, 'claiming jobs failed');
        }
      }
      await this.#idle();
    }
  }

  #idle(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#nudge = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.#pollMs);
      this.#nudge = done;
    });
  }

  #begin(job: Job, lease: Lease): void {
    const task = this.#work(job, lease).finally(() => {
      this.#running.delete(job.id);
      this.wake();
    });
    this.#running.set(job.id, { tenantId: job.tenant_id, task });
  }

  async #work(claimed: Job, lease: Lease): Promise<void> {
    const db = this.#services.store.db;
    let job = claimed;
    let failures = 0;
    let renewedAt = Date.now();
    this.#log.info({ job: job.id, type: job.type, tenant: job.tenant_id }, 'job started');
    while (!this.#stopped) {
      const started = performance.now();
      try {
        const done = await this.#step(job);
        failures = 0;
        if (done) {
          await finishJob(db, job.id, 'completed');
          const final = await findJobById(db, job.id);
          this.#log.info({ job: job.id, type: job.type, processed: final?.processed, inserted: final?.inserted, updated: final?.updated, failed: final?.failed }, 'job completed');
          return;
        }
      } catch (err) {
        if (err instanceof ImportJobFailed) {
          await finishJob(db, job.id, 'failed', err.message);
          this.#log.warn({ job: job.id, reason: err.message }, 'job failed');
          return;
        }
        failures += 1;
        this.#log.error({ err, job: job.id, failures }, 'job step failed');
        if (failures >= MAX_STEP_FAILURES) {
          await finishJob(db, job.id, 'failed', 'The job stopped on an unexpected error; the server log has the details').catch(() => undefined);
          return;
        }
        await sleep(RETRY_DELAY_MS * failures);
      }
      // The lease is renewed a few times per lease period rather than per step: it only keeps others away.
      if (Date.now() - renewedAt > LEASE_MS / 4) {
        if (!(await renewLease(db, job.id, lease.id, Date.now() + LEASE_MS).catch(() => false))) {
          this.#log.warn({ job: job.id }, 'job taken over by another process');
          return;
        }
        renewedAt = Date.now();
      }
      // An export goes on from the cursor its last part moved; an import's next batch is found afresh anyway.
      if (job.type === 'users_export') {
        const reloaded = await findJobById(db, job.id);
        if (!reloaded || reloaded.status !== 'processing') return;
        job = reloaded;
      }
      await this.#rest(performance.now() - started);
    }
    await releaseJob(db, job.id, lease.id).catch(() => undefined);
  }

  /** One step of the job; true when the job has nothing left to do. */
  async #step(job: Job): Promise<boolean> {
    switch (job.type) {
      case 'users_import':
        return (await importNextBatch(this.#services, job, batchesPerStep(this.#services.store.dialect, this.#trafficSinceLastStep()))).done;
      case 'users_export':
        return (await exportNextPart(this.#services, job)).done;
      default:
        // Other jobs (verification emails) are done when they are made.
        return true;
    }
  }

  /**
   * Whether more than a lone request (a client polling the job's progress) arrived since the last step, or logins
   * wait for hashing: then the next step is small, since the requests' queries queue behind it.
   */
  #trafficSinceLastStep(): boolean {
    const received = requestsReceived();
    const arrived = received - this.#requestsSeen;
    this.#requestsSeen = received;
    return arrived > 1 || argon2Pressure() > 0;
  }

  /** Requests that are waiting go first; while any are being answered, rest as long as the step took (or until they are done). */
  async #rest(stepMs: number): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const until = performance.now() + Math.min(stepMs * this.#restFactor, MAX_REST_MS);
    while (!this.#stopped && requestsWaiting() && performance.now() < until) await sleep(REST_SLICE_MS);
  }
}

/** Requests being answered, or logins waiting for password hashing, in this process. */
function requestsWaiting(): boolean {
  return requestsInFlight() + argon2Pressure() > 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
