/**
 * Attack protection (reference C.10) as the sign-in flows use it:
 *  - brute force: failed logins counted per identifier and IP (or per identifier in `count_per_identifier`
 *    mode); the failure that reaches `max_attempts` writes a user block (30 days, lifted by the Management API's
 *    user-blocks routes or the notice's link), and any later attempt from that IP (from any IP in identifier
 *    mode) is refused, even with the right password. A success resets the count. Applies only where the
 *    connection's `options.brute_force_protection` is true and the `block` shield is on. With the
 *    `user_notification` shield a known user is emailed a notice with a link that lifts the block (block-notice.ts).
 *  - suspicious IPs: every failed login takes a token from the IP's pre-login bucket (100, one back per 14.4 min
 *    by default), every signup attempt one from its pre-registration bucket (50); an empty bucket refuses.
 *  - breached passwords: a correct password found in the local corpus (breached-passwords.ts) is refused at
 *    login, and at signup and password change where those stages' shields say `block`.
 * Every count is taken *before* the password is checked (#19) and settled after it (`admitLogin`): the
 * identifier's guess claims its place in the streak (guesses.ts), the IP's token is taken and given back when
 * the password was right. So no burst of parallel guesses, on one node or many sharing Redis, gets more
 * passwords checked than the thresholds allow.
 * Allowlisted IPs are never counted nor refused. Counters live in an AttackCounterStore (Redis or memory); a
 * store that fails is skipped (fail open, as the rate limiter does) rather than failing every login.
 */
import type { Kysely } from 'kysely';
import type { Sealer } from '../crypto/sealing.js';
import type { Connection } from '../store/connections.js';
import type { Database } from '../store/schema.js';
import { findTenantById, type Tenant } from '../store/tenants.js';
import { deleteUserBlocks, insertUserBlock, listUserBlocks, type BlockSelector, type UserBlock } from '../store/users.js';
import type { BucketLimit } from '../http/rate-limit/token-bucket.js';
import { queueBlockNotice } from './block-notice.js';
import { isBreachedPassword } from './breached-passwords.js';
import type { AttackCounterStore } from './counter-store.js';
import { claimGuess, type ClaimedGuess } from './guesses.js';
import { IpAllowlist, normalizeIp } from './ip-allowlist.js';
import { effectiveSettings, type BruteForceSettings, type EffectiveAttackProtection, type ThrottleStage } from './settings.js';

/** How long a brute-force block lasts unless an admin lifts it (C.10), and how long a failure streak is remembered. */
export const BRUTE_FORCE_BLOCK_MS = 30 * 24 * 3600 * 1000;
const SETTINGS_CACHE_MS = 5_000;
/** The block row's `ip` and the counter key when a request has no known address. */
const UNKNOWN_IP = 'unknown';
/** Where a `count_per_identifier` streak counts: every IP at once. */
const IDENTIFIER_MODE = '*';

/** The counter of an identifier's failure streak from `where` (an IP, UNKNOWN_IP or IDENTIFIER_MODE). */
function streakKey(tenantId: string, where: string, identifier: string): string {
  return `bf:${tenantId}:${where}:${identifier}`;
}

export type LoginRefusal = 'brute_force' | 'suspicious_ip';
export type BreachStage = 'login' | 'pre-user-registration' | 'pre-change-password';

/** One password login attempt, as attack protection sees it. */
export interface PasswordAttempt {
  connection: Connection;
  /** The identifier as typed, normalised (connections/email-address.ts: email or username alike). */
  identifier: string;
  ip: string | null;
}

/** The account behind a failed login, when there is one: whom a block is recorded against and notified. */
export interface FailedAccount {
  userId: string;
  email: string | null;
}

/** A login attack protection let through: check the password, then say how that went. */
export interface AdmittedLogin {
  refused?: undefined;
  /** The password was right: the identifier's streak ends and the IP's token is given back. */
  succeeded(): Promise<void>;
  /** Wrong password or unknown identifier: the counts stand; the guess that took the streak's last place blocks. */
  failed(account: FailedAccount | null): Promise<void>;
}

export type LoginAdmission = { refused: LoginRefusal } | AdmittedLogin;

export interface AttackProtectionOptions {
  /** Seals the unblock links of block notices; without it no notice is sent. */
  sealer?: Sealer;
  clock?: () => number;
}

function bucketLimit(stage: ThrottleStage): BucketLimit {
  return { capacity: stage.max_attempts, perSecond: 1000 / stage.rate };
}

export class AttackProtection {
  readonly #tenants = new Map<string, { value: Promise<Tenant | undefined>; at: number }>();
  readonly #allowlists = new Map<string, IpAllowlist>();
  readonly #sealer: Sealer | undefined;
  readonly #clock: () => number;
  /** Block notices still being queued (tests and shutdown wait for them). */
  readonly #notices = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    readonly counters: AttackCounterStore,
    options: AttackProtectionOptions = {},
  ) {
    this.#sealer = options.sealer;
    this.#clock = options.clock ?? Date.now;
  }

  /** The tenant, read at most every few seconds (other nodes see a settings change within that time). */
  #tenant(tenantId: string): Promise<Tenant | undefined> {
    const hit = this.#tenants.get(tenantId);
    if (hit && this.#clock() - hit.at < SETTINGS_CACHE_MS) return hit.value;
    const value = findTenantById(this.db, tenantId);
    value.catch(() => this.#tenants.delete(tenantId));
    if (this.#tenants.size >= 10_000) this.#tenants.clear();
    this.#tenants.set(tenantId, { value, at: this.#clock() });
    return value;
  }

  async settings(tenantId: string): Promise<EffectiveAttackProtection> {
    return effectiveSettings((await this.#tenant(tenantId))?.settings.attack_protection);
  }

  /** Drops this process's copy of a tenant's settings, after the Management API changed them. */
  forget(tenantId?: string): void {
    if (tenantId === undefined) this.#tenants.clear();
    else this.#tenants.delete(tenantId);
  }

  /**
   * Admits one password login, or refuses it before its password is checked: an IP out of pre-login tokens, an
   * identifier already blocked, or one whose streak has no place left. Known and unknown identifiers are
   * treated alike and as fast. An admitted login has taken its counts; settle it with `succeeded` or `failed`.
   */
  async admitLogin(attempt: PasswordAttempt): Promise<LoginAdmission> {
    const tenantId = attempt.connection.tenant_id;
    const settings = await this.settings(tenantId);
    const ip = attempt.ip === null ? null : normalizeIp(attempt.ip);
    const throttling = settings.suspicious_ip_throttling;
    let ipToken: (() => Promise<void>) | undefined;
    if (ip && throttling.enabled && !this.#allowlist(throttling.allowlist).has(ip)) {
      const key = `sip:login:${tenantId}:${ip}`;
      const limit = bucketLimit(throttling.stage['pre-login']);
      const bucket = await this.#tolerate(() => this.counters.take(key, limit));
      if (bucket?.allowed) ipToken = async () => void (await this.#tolerate(() => this.counters.giveBack(key, limit)));
      else if (bucket && throttling.shields.includes('block')) return { refused: 'suspicious_ip' };
    }
    const bruteForce = settings.brute_force_protection;
    let guess: ClaimedGuess | undefined;
    if (this.#bruteForceApplies(bruteForce, attempt)) {
      // A block written earlier (by this streak, another mode's, or another node) holds whatever the counter says.
      const blocks = await listUserBlocks(this.db, tenantId, { identifier: attempt.identifier }, this.#clock());
      // A block without IP (identifier mode) holds everywhere; one with an IP holds from that IP only.
      const blocked = blocks.some((b) => b.ip === null || b.ip === (ip ?? UNKNOWN_IP));
      if (!blocked) {
        const key = this.#streakKey(tenantId, bruteForce, attempt.identifier, ip);
        guess = await this.#tolerate(() => claimGuess(this.counters, key, { maxGuesses: bruteForce.max_attempts, windowMs: BRUTE_FORCE_BLOCK_MS, onRight: 'reset' }));
      }
      if (blocked || guess?.allowed === false) {
        // Not checked, so not counted against the IP either.
        await ipToken?.();
        return { refused: 'brute_force' };
      }
    }
    const claimed = guess?.allowed ? guess : undefined;
    return {
      succeeded: async () => {
        await Promise.all([ipToken?.(), claimed && this.#tolerate(() => claimed.right())]);
      },
      failed: async (account) => {
        if (claimed?.last) await this.#block(attempt, ip, bruteForce, account);
      },
    };
  }

  /** The failure that took a streak's last place: records the block and sends the notice. */
  async #block(attempt: PasswordAttempt, ip: string | null, bruteForce: BruteForceSettings, account: FailedAccount | null): Promise<void> {
    const tenantId = attempt.connection.tenant_id;
    const now = this.#clock();
    const blockIp = bruteForce.mode === 'count_per_identifier' ? null : (ip ?? UNKNOWN_IP);
    // A block already there (an earlier streak's, still in force) is enough.
    const existing = await listUserBlocks(this.db, tenantId, { identifier: attempt.identifier }, now);
    if (existing.some((b) => b.ip === blockIp)) return;
    const block = await insertUserBlock(this.db, {
      tenant_id: tenantId,
      user_id: account?.userId ?? null,
      identifier: attempt.identifier,
      ip: blockIp,
      created_at: now,
      expires_at: now + BRUTE_FORCE_BLOCK_MS,
    });
    if (!bruteForce.shields.includes('user_notification') || !account?.email || !this.#sealer) return;
    // Not awaited: the notice must not make a known user's failure slower than an unknown identifier's.
    const sealer = this.#sealer;
    const email = account.email;
    const notice = this.#tenant(tenantId)
      .then((tenant) => (tenant ? queueBlockNotice(this.db, sealer, tenant, block, email) : undefined))
      .catch(() => undefined)
      .finally(() => this.#notices.delete(notice));
    this.#notices.add(notice);
  }

  /**
   * Lifts blocks (the Management API's user-blocks routes, a notice's unblock link, a raised threshold) and
   * forgets the streaks that wrote them: the streak stays full while its block stands, so that no guess slips
   * in between the block and the refusals it causes, and must start afresh once the block is gone.
   */
  async liftBlocks(tenantId: string, selector: BlockSelector): Promise<UserBlock[]> {
    const lifted = await deleteUserBlocks(this.db, tenantId, selector);
    await Promise.all(lifted.map((b) => this.#tolerate(() => this.counters.reset(streakKey(tenantId, b.ip ?? IDENTIFIER_MODE, b.identifier)))));
    return lifted;
  }

  /** Resolves once every block notice started so far is queued (or given up). */
  async settled(): Promise<void> {
    await Promise.all([...this.#notices]);
  }

  /** Whether `password` must be refused at `stage` as breached: detection on, the stage's shields blocking, and the password in the corpus. */
  async passwordLeaked(tenantId: string, password: string, stage: BreachStage): Promise<boolean> {
    const settings = (await this.settings(tenantId)).breached_password_detection;
    if (!settings.enabled) return false;
    const shields = stage === 'login' ? settings.shields : settings.stage[stage].shields;
    return (shields as readonly string[]).includes('block') && isBreachedPassword(password);
  }

  /** Takes a signup attempt from the IP's pre-registration bucket; `suspicious_ip` when the IP has none left. */
  async checkSignup(tenantId: string, ipAddress: string | null): Promise<'suspicious_ip' | undefined> {
    const throttling = (await this.settings(tenantId)).suspicious_ip_throttling;
    const ip = ipAddress === null ? null : normalizeIp(ipAddress);
    if (!ip || !throttling.enabled || this.#allowlist(throttling.allowlist).has(ip)) return undefined;
    const bucket = await this.#tolerate(() => this.counters.take(`sip:signup:${tenantId}:${ip}`, bucketLimit(throttling.stage['pre-user-registration'])));
    return bucket && !bucket.allowed && throttling.shields.includes('block') ? 'suspicious_ip' : undefined;
  }

  async close(): Promise<void> {
    await this.settled();
    await this.counters.close();
  }

  /** Brute-force protection counts and refuses only where it would block (without the `block` shield a full streak does nothing). */
  #bruteForceApplies(settings: BruteForceSettings, attempt: PasswordAttempt): boolean {
    return (
      settings.enabled &&
      settings.shields.includes('block') &&
      attempt.connection.options.brute_force_protection === true &&
      !this.#allowlist(settings.allowlist).has(attempt.ip)
    );
  }

  #streakKey(tenantId: string, settings: BruteForceSettings, identifier: string, ip: string | null): string {
    return streakKey(tenantId, settings.mode === 'count_per_identifier' ? IDENTIFIER_MODE : (ip ?? UNKNOWN_IP), identifier);
  }

  #allowlist(entries: readonly string[]): IpAllowlist {
    const key = entries.join(',');
    let list = this.#allowlists.get(key);
    if (!list) {
      if (this.#allowlists.size >= 1_000) this.#allowlists.clear();
      list = new IpAllowlist(entries);
      this.#allowlists.set(key, list);
    }
    return list;
  }

  async #tolerate<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch {
      // The counter store is down or slow: let the login proceed uncounted rather than refuse everyone.
      return undefined;
    }
  }
}
