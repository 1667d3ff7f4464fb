/**
 * What the passwordless endpoints share: the connection a client may use, the identifier it is for (an email
 * or an E.164 phone number), the one-time codes (6 digits from a CSPRNG, 5 minutes, 3 tries, single use) and
 * magic-link tokens, and the user a successful login resolves to (created on first login unless the
 * connection disables signup).
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { newUserId, randomAlphanumeric, randomSecret } from '../../crypto/ids.js';
import { emitEvent, type EventContext } from '../../events/outbox.js';
import { isDeliverableAddress } from '../../messaging/email-outbox.js';
import { userEventObject } from '../../management/event-objects.js';
import type { Services } from '../../services.js';
import { findConnectionByName, listEnabledClients, type Connection } from '../../store/connections.js';
import {
  claimPasswordlessAttempt,
  deletePasswordlessCode,
  findPasswordlessCode,
  type PasswordlessCode,
} from '../../store/passwordless-codes.js';
import type { Tenant } from '../../store/tenants.js';
import { findPrimaryUser, findUserInConnection, insertUser, newUser, recordLogin, type User } from '../../store/users.js';
import { isEmailAddress, normalizeEmail } from '../../connections/email-address.js';

export const CODE_LIFETIME_MS = 5 * 60_000;
export const MAX_CODE_ATTEMPTS = 3;
export const PASSWORDLESS_STRATEGIES = ['email', 'sms'] as const;
export type PasswordlessStrategy = (typeof PASSWORDLESS_STRATEGIES)[number];

const E164 = /^\+[1-9]\d{6,14}$/;

export function isPasswordless(connection: Connection): connection is Connection & { strategy: PasswordlessStrategy } {
  return (PASSWORDLESS_STRATEGIES as readonly string[]).includes(connection.strategy);
}

/** The passwordless connection of that name, when it exists and is enabled for the client (else undefined). */
export async function passwordlessConnectionFor(services: Services, tenant: Tenant, clientId: string, name: string): Promise<(Connection & { strategy: PasswordlessStrategy }) | undefined> {
  if (name.length === 0 || name.length > 128) return undefined;
  const connection = await findConnectionByName(services.store.db, tenant.id, name);
  if (!connection || !isPasswordless(connection)) return undefined;
  return (await listEnabledClients(services.store.db, connection.id)).includes(clientId) ? connection : undefined;
}

/**
 * The identifier in its stored form: emails normalised (connections/email-address.ts), phone numbers E.164 with spaces, dashes, dots and
 * brackets taken out. Undefined when it is not a valid one for the strategy.
 */
export function normalizeIdentifier(strategy: PasswordlessStrategy, raw: string): string | undefined {
  if (strategy === 'email') {
    const email = normalizeEmail(raw);
    // One plain address the mailer can deliver to: no display names, lists or header tricks.
    return isEmailAddress(email) && isDeliverableAddress(email) ? email : undefined;
  }
  const phone = raw.trim().replace(/[\s().-]/g, '');
  return E164.test(phone) ? phone : undefined;
}

/** Six decimal digits, uniform (crypto.randomInt is a CSPRNG with rejection sampling). */
export function newOneTimeCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}

export function newCodeId(): string {
  return randomAlphanumeric(24);
}

export function newLinkToken(): string {
  return randomSecret(32);
}

/** Codes are salted with their row id, so equal codes never share a hash. */
export function codeHash(id: string, code: string): string {
  return createHash('sha256').update(`${id}:${code}`, 'utf8').digest('hex');
}

export function linkTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export type CodeCheck = { outcome: 'ok'; code: PasswordlessCode } | { outcome: 'wrong_code' } | { outcome: 'expired' };

export interface CodeCheckOptions {
  now?: number;
  /** A code works only for the client that asked for it. */
  clientId?: string;
  /** Delete the code on success (a login); false keeps it, for /passwordless/verify. */
  consume: boolean;
}

/**
 * Checks `code` against the pending one for the identifier. Each check spends one of the code's attempts
 * before comparing, so parallel guesses cannot share one; the code dies after the last wrong one. A code that
 * expired or has no attempt left answers `expired`.
 */
export async function checkOneTimeCode(services: Services, connection: Connection, identifier: string, code: string, options: CodeCheckOptions): Promise<CodeCheck> {
  const db = services.store.db;
  const now = options.now ?? Date.now();
  const pending = await findPasswordlessCode(db, connection.id, identifier);
  if (!pending?.code_hash) return { outcome: 'wrong_code' };
  if (pending.expires_at <= now) {
    await deletePasswordlessCode(db, pending.id);
    return { outcome: 'expired' };
  }
  if (!(await claimPasswordlessAttempt(db, pending.id, MAX_CODE_ATTEMPTS))) {
    await deletePasswordlessCode(db, pending.id);
    return { outcome: 'expired' };
  }
  const right = /^\d{6}$/.test(code) && hashesEqual(codeHash(pending.id, code), pending.code_hash);
  if (!right || (options.clientId !== undefined && pending.client_id !== options.clientId)) {
    if (pending.attempts + 1 >= MAX_CODE_ATTEMPTS) await deletePasswordlessCode(db, pending.id);
    return { outcome: 'wrong_code' };
  }
  // Single use: of two requests racing with the right code, only the one that deletes the row gets through.
  if (options.consume && !(await deletePasswordlessCode(db, pending.id))) return { outcome: 'wrong_code' };
  return { outcome: 'ok', code: pending };
}

export type PasswordlessUser = { outcome: 'ok'; user: User } | { outcome: 'blocked' } | { outcome: 'signup_disabled' };

/**
 * The user behind a proven identifier: the existing identity (its primary when linked), or a new
 * `email|…`/`sms|…` user with its `user.created` event in the same transaction. Records the login.
 */
export async function passwordlessUser(
  services: Services,
  connection: Connection & { strategy: PasswordlessStrategy },
  identifier: string,
  context: { ip?: string | null; event?: EventContext; now?: number } = {},
): Promise<PasswordlessUser> {
  const db = services.store.db;
  const now = context.now ?? Date.now();
  const by = connection.strategy === 'email' ? { email: identifier } : { phone_number: identifier };
  let identity = await findUserInConnection(db, connection.id, by);
  if (!identity) {
    if ((connection.options as { disable_signup?: boolean }).disable_signup === true) return { outcome: 'signup_disabled' };
    const user = newUser(
      {
        user_id: newUserId(connection.strategy),
        tenant_id: connection.tenant_id,
        connection_id: connection.id,
        email: connection.strategy === 'email' ? identifier : null,
        // Receiving the code proves the address or number.
        email_verified: connection.strategy === 'email',
        phone_number: connection.strategy === 'sms' ? identifier : null,
        phone_verified: connection.strategy === 'sms',
      },
      now,
    );
    try {
      await db.transaction().execute(async (trx) => {
        await insertUser(trx, user);
        await emitEvent(trx, {
          tenantId: user.tenant_id,
          type: 'user.created',
          object: await userEventObject(trx, user),
          context: { ...context.event, connection_id: connection.id },
        });
      });
      identity = user;
    } catch (error) {
      // Two first logins racing: the unique index keeps one user, and both log into it.
      identity = await findUserInConnection(db, connection.id, by);
      if (!identity) throw error;
    }
  }
  const user = identity.linked_to ? await findPrimaryUser(db, connection.tenant_id, identity.linked_to) : identity;
  if (!user || user.blocked || identity.blocked) return { outcome: 'blocked' };
  await recordLogin(db, connection.tenant_id, user.user_id, context.ip ?? null, now);
  return { outcome: 'ok', user: { ...user, logins_count: user.logins_count + 1, last_login: now } };
}
