/**
 * The mailer: how the server sends email. `send` only writes the message to the outbox (email-outbox.ts), so a
 * slow or failing mail server never holds up a request; the worker here delivers it over SMTP (nodemailer)
 * with retries (through the tenant's own SMTP provider when it has one enabled, email-provider.ts), or, when no
 * SMTP is configured, keeps it in the dev mailbox (GET /dev/mailbox) and logs that.
 *
 * Retry schedule: after a failed attempt, again 2 s, 10 s, 1 min, 5 min, 30 min and 2 h later (7 attempts); an
 * SMTP 5xx answer (the server refuses the message for good) fails at once. Delivery is at least once: a row is
 * leased while it is being sent, and a process that dies holding it leaves it to be sent again.
 */
import { observe } from '../metrics/registry.js';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { Sealer } from '../crypto/sealing.js';
import type { Store } from '../store/db.js';
import type { Tenant } from '../store/tenants.js';
import { findEmailProvider } from '../store/email-settings.js';
import { openCredentials, smtpOptions } from './email-provider.js';
import { claimDueEmails, enqueueEmail, onEmailQueued, openBody, purgeOldEmails, releaseEmailLeases, settleEmail, type ClaimedEmail } from './email-outbox.js';

export interface OutgoingEmail {
  tenant: Tenant;
  to: string;
  subject: string;
  /** Plain-text alternative; every link in it absolute. */
  text: string;
  html: string;
}

export interface Mailer {
  send(message: OutgoingEmail): Promise<void>;
  /** Drops what the mailer remembers of the tenant's own email provider (it changed). */
  providerChanged?(tenantId: string): void;
}

export const EMAIL_RETRY_DELAYS_MS = [2_000, 10_000, 60_000, 300_000, 1_800_000, 7_200_000] as const;
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;
/** Longer than one SMTP attempt can take, so a live sender never loses its rows. */
const LEASE_MS = CONNECTION_TIMEOUT_MS + SOCKET_TIMEOUT_MS + 20_000;
const POLL_MS = 1000;
const WAKE_WINDOW_MS = 250;
const WAKE_POLL_MS = 5;
const CONCURRENCY = 4;
const STOP_GRACE_MS = 3000;
const PURGE_EVERY_MS = 3_600_000;
/** How long a tenant's provider settings are reused before they are read again (other nodes' changes). */
const PROVIDER_CACHE_MS = 5_000;

interface SmtpFailure {
  message?: string;
  code?: string;
  responseCode?: number;
}

/** What is safe to store and log of an SMTP error: its code and the server's answer, never the URL or credentials. */
function describeFailure(err: unknown): { text: string; permanent: boolean } {
  const failure = (err ?? {}) as SmtpFailure;
  const responseCode = typeof failure.responseCode === 'number' ? failure.responseCode : undefined;
  const message = typeof failure.message === 'string' ? failure.message : 'unknown error';
  const text = [failure.code, responseCode, message].filter((part) => part !== undefined).join(' ').slice(0, 500);
  return { text, permanent: responseCode !== undefined && responseCode >= 500 && responseCode < 600 };
}

export class EmailQueue implements Mailer {
  readonly #store: Store;
  readonly #sealer: Sealer;
  readonly #config: Config;
  #transport: Transporter | undefined;
  #log: FastifyBaseLogger | undefined;
  #stopped = false;
  #loop: Promise<void> | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #wakeUntil = 0;
  #nudge: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;
  #purgedAt = 0;
  /** Tenants' own providers (email-provider.ts): looked up for a few seconds, a transport per saved version. */
  readonly #providers = new Map<string, { at: number; route: { key: string; transport: Transporter } | undefined }>();
  readonly #tenantTransports = new Map<string, Transporter>();

  constructor(config: Config, store: Store, sealer: Sealer) {
    this.#config = config;
    this.#store = store;
    this.#sealer = sealer;
  }

  /** Whether mail really leaves the server (SMTP configured) or stays in the dev mailbox. */
  get delivers(): boolean {
    return this.#config.smtpUrl !== undefined;
  }

  async send(message: OutgoingEmail): Promise<void> {
    await enqueueEmail(this.#store.db, this.#sealer, {
      tenantId: message.tenant.id,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  }

  /** Starts delivering. `releaseLeasesOnStart` only where this is the one claimer (SQLite, one process). */
  start(log: FastifyBaseLogger, options: { releaseLeasesOnStart?: boolean } = {}): void {
    if (this.#loop) return;
    this.#log = log;
    if (this.#config.smtpUrl) {
      this.#transport = nodemailer.createTransport(
        { url: this.#config.smtpUrl, connectionTimeout: CONNECTION_TIMEOUT_MS, greetingTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS },
        { from: this.#config.emailFrom },
      );
    } else {
      log.warn(
        this.#config.devMailbox
          ? 'No GATEHOUSE_SMTP_URL: emails are kept in the dev mailbox (GET /dev/mailbox on the default tenant), not sent'
          : 'No GATEHOUSE_SMTP_URL: emails are kept in the database, not sent (GATEHOUSE_DEV_MAILBOX=1 shows them)',
      );
    }
    this.#unsubscribe = onEmailQueued(() => this.wake());
    this.#loop = this.#run(options.releaseLeasesOnStart ?? false);
  }

  wake(): void {
    this.#wakeUntil = Date.now() + WAKE_WINDOW_MS;
    this.#nudge?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#nudge?.();
    await this.#loop;
    await Promise.race([Promise.allSettled([...this.#inFlight]), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
    this.#transport?.close();
    for (const transport of this.#tenantTransports.values()) transport.close();
  }

  /** Forget cached providers (after a change through the Management API in this process). */
  providerChanged(tenantId: string): void {
    this.#providers.delete(tenantId);
  }

  async #run(releaseOnStart: boolean): Promise<void> {
    const db = this.#store.db;
    if (releaseOnStart) {
      try {
        await releaseEmailLeases(db);
      } catch (err) {
        this.#log?.error({ err }, 'could not release email leases');
      }
    }
    while (!this.#stopped) {
      if (Date.now() - this.#purgedAt > PURGE_EVERY_MS) {
        this.#purgedAt = Date.now();
        await purgeOldEmails(db).catch((err: unknown) => this.#log?.error({ err }, 'purging old emails failed'));
      }
      const room = CONCURRENCY - this.#inFlight.size;
      if (room > 0) {
        let claimed: ClaimedEmail[] = [];
        try {
          claimed = await claimDueEmails(db, this.#store.dialect, room, LEASE_MS);
        } catch (err) {
          if (this.#stopped) break;
          this.#log?.error({ err }, 'claiming emails failed');
        }
        if (claimed.length > 0) {
          for (const row of claimed) {
            const attempt = this.#deliver(row).finally(() => {
              this.#inFlight.delete(attempt);
              this.#nudge?.();
            });
            this.#inFlight.add(attempt);
          }
          continue;
        }
      }
      await new Promise<void>((resolve) => {
        const wait = room > 0 && Date.now() < this.#wakeUntil ? WAKE_POLL_MS : POLL_MS;
        const timer = setTimeout(done, wait);
        const nudge = () => done();
        this.#nudge = nudge;
        function done() {
          clearTimeout(timer);
          resolve();
        }
      });
      this.#nudge = undefined;
    }
  }

  /** The tenant's own SMTP while it is enabled, else the server's (undefined: no SMTP, the dev mailbox keeps it). */
  async #transportFor(tenantId: string): Promise<Transporter | undefined> {
    const cached = this.#providers.get(tenantId);
    if (cached && Date.now() - cached.at < PROVIDER_CACHE_MS) return cached.route?.transport ?? this.#transport;
    const provider = await findEmailProvider(this.#store.db, tenantId);
    let route: { key: string; transport: Transporter } | undefined;
    if (provider?.enabled) {
      const key = `${tenantId}:${provider.updated_at}`;
      let transport = this.#tenantTransports.get(key);
      if (!transport) {
        for (const [old, previous] of this.#tenantTransports) {
          if (!old.startsWith(`${tenantId}:`)) continue;
          previous.close();
          this.#tenantTransports.delete(old);
        }
        transport = nodemailer.createTransport(
          { ...smtpOptions(openCredentials(this.#sealer, provider)), connectionTimeout: CONNECTION_TIMEOUT_MS, greetingTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS },
          { from: provider.default_from_address ?? this.#config.emailFrom },
        );
        this.#tenantTransports.set(key, transport);
      }
      route = { key, transport };
    }
    this.#providers.set(tenantId, { at: Date.now(), route });
    return route?.transport ?? this.#transport;
  }

  async #deliver(row: ClaimedEmail): Promise<void> {
    const db = this.#store.db;
    const log = this.#log;
    try {
      const body = openBody(this.#sealer, row);
      if (!body) {
        await settleEmail(db, row, { status: 'failed', error: 'the message body is missing' });
        return;
      }
      const transport = await this.#transportFor(row.tenant_id);
      if (!transport) {
        await settleEmail(db, row, { status: 'kept' });
        log?.info({ emailId: row.id, to: row.recipient, subject: row.subject }, 'email kept in the dev mailbox');
        return;
      }
      try {
        await transport.sendMail({ to: row.recipient, subject: row.subject, text: body.text, html: body.html, ...(body.from && { from: body.from }) });
        await settleEmail(db, row, { status: 'sent' });
        log?.info({ emailId: row.id, attempt: row.attempt_count + 1 }, 'email sent');
      } catch (err) {
        observe.emailFailed();
        const failure = describeFailure(err);
        const delay = EMAIL_RETRY_DELAYS_MS[row.attempt_count];
        if (failure.permanent || delay === undefined) {
          await settleEmail(db, row, { status: 'failed', error: failure.text });
          log?.error({ emailId: row.id, attempt: row.attempt_count + 1, error: failure.text }, 'email could not be delivered; given up');
        } else {
          await settleEmail(db, row, { status: 'retry', error: failure.text, at: Date.now() + delay });
          log?.warn({ emailId: row.id, attempt: row.attempt_count + 1, retryInMs: delay, error: failure.text }, 'email delivery failed; will retry');
        }
      }
    } catch (err) {
      // Storage trouble: the lease runs out and the row is tried again.
      log?.error({ err, emailId: row.id }, 'email delivery bookkeeping failed');
    }
  }
}
