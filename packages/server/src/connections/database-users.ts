/**
 * Database-connection users as the sign-in flows see them: authenticating an identifier and password (no
 * enumeration: an unknown user costs the same time as a wrong password), and signing up. Shared by the hosted
 * pages, the password grants and (#5) /dbconnections and /co/authenticate.
 */
import { newUserId } from '../crypto/ids.js';
import { emitEvent, type EventContext } from '../events/outbox.js';
import { logRow, type RequestOrigin } from '../logs/log-event.js';
import { userEventObject } from '../management/event-objects.js';
import { hashPassword, verifyAgainstDecoy, verifyPassword, type HashWork } from '../crypto/passwords.js';
import { isForeignHash, verifyForeignHash } from '../jobs/password-hashes/index.js';
import type { Services } from '../services.js';
import { findConnectionByName, listConnections, listEnabledClientsByConnection, type Connection } from '../store/connections.js';
import type { Tenant } from '../store/tenants.js';
import { findPrimaryUser, findUserInConnection, insertUser, newUser, recordLogin, replacePasswordHash, type User } from '../store/users.js';
import { checkPassword, passwordPolicyText, type PasswordCheck, type PasswordPolicyOptions } from './password-policy.js';
import { queueVerificationEmail } from '../messaging/account-emails.js';
import { checkBreachedPasswordAtSignup } from '../protection/checks.js';
import { isEmailAddress, normalizeEmail } from './email-address.js';
import { answerFailureInEqualTime, recordPasswordCheck } from './login-timing.js';

export interface DatabaseOptions extends PasswordPolicyOptions {
  requires_username?: boolean;
  disable_signup?: boolean;
  /** False: signups get no verification email (messaging/account-emails.ts). */
  send_verification_email?: boolean;
  validation?: { username?: { min?: number; max?: number } | null } | null;
}

export function databaseOptions(connection: Connection): DatabaseOptions {
  return connection.options as DatabaseOptions;
}

/**
 * The database connection a login for `client` uses: the one named, else the tenant's default directory when
 * the client may use it, else the first database connection enabled for the client.
 */
export function databaseConnectionFor(services: Services, tenant: Tenant, clientId: string, name?: string): Promise<Connection | undefined> {
  // Two reads per login before (the connection, the tenant's whole connection-client list): kept in the config
  // cache per client and name, which a Management API change to connections or clients drops on every node.
  const key = `login-connection\u0000${clientId}\u0000${name ?? ''}\u0000${tenant.settings.default_directory ?? ''}`;
  return services.configCache.remember(tenant.id, key, () => lookUpDatabaseConnection(services, tenant, clientId, name));
}

async function lookUpDatabaseConnection(services: Services, tenant: Tenant, clientId: string, name?: string): Promise<Connection | undefined> {
  const db = services.store.db;
  const enabled = await listEnabledClientsByConnection(db, tenant.id);
  const usable = (c: Connection | undefined): c is Connection => !!c && c.strategy === 'auth0' && (enabled.get(c.id) ?? []).includes(clientId);
  if (name) {
    const named = await findConnectionByName(db, tenant.id, name);
    return usable(named) ? named : undefined;
  }
  const preferred = tenant.settings.default_directory ? await findConnectionByName(db, tenant.id, tenant.settings.default_directory) : undefined;
  if (usable(preferred)) return preferred;
  return (await listConnections(db, tenant.id)).find(usable);
}

/**
 * The outcome of a password login. Attack protection (protection/, issue #5) adds the last two: an identifier
 * locked by brute-force protection or an IP throttled as suspicious (`too_many_attempts`), and a password known
 * from a breach (`password_leaked`). Every caller maps all of them to its own error shape.
 */
export type PasswordLogin =
  | { outcome: 'ok'; user: User }
  /** `userId` when the identifier is a user's and the password was wrong (the log tells `fp` from `fu`). */
  | { outcome: 'wrong_credentials'; userId?: string }
  | { outcome: 'blocked'; userId: string }
  | { outcome: 'too_many_attempts'; reason: 'brute_force' | 'suspicious_ip' }
  | { outcome: 'password_leaked' };

/**
 * Checks `identifier` (email, or username where the connection has them) and `password`. On success returns
 * the primary user (a linked identity logs its primary in), records the login and upgrades a weak stored hash:
 * an imported (foreign) hash, or an argon2id one with weaker parameters than today's, is replaced by a new
 * argon2id hash in this same request. A wrong password costs the same time for an unknown identifier, an
 * imported hash and an argon2id one (login-timing.ts), and counts towards brute-force protection alike.
 */
export async function authenticateWithPassword(services: Services, connection: Connection, identifier: string, password: string, ip: string | null): Promise<PasswordLogin> {
  const db = services.store.db;
  const value = normalizeEmail(identifier);
  // Attack protection looks at the identifier and IP only, before any user is looked up, and counts this attempt
  // before its password is checked (#19): a blocked identifier is refused even with the right password, known and
  // unknown identifiers are refused alike and as fast, and parallel guesses cannot outrun the count.
  const admission = await services.attackProtection.admitLogin({ connection, identifier: value, ip });
  if (admission.refused) return { outcome: 'too_many_attempts', reason: admission.refused };
  const identity = value.includes('@')
    ? await findUserInConnection(db, connection.id, { email: value })
    : databaseOptions(connection).requires_username
      ? await findUserInConnection(db, connection.id, { username: value })
      : undefined;
  const started = performance.now();
  if (!identity?.password_hash) {
    const spent: HashWork = { ms: 0 };
    await verifyAgainstDecoy(password, spent);
    recordPasswordCheck(connection.id, spent.ms);
    await answerFailureInEqualTime(connection.id, started);
    // Unknown identifiers count like wrong passwords, so a block says nothing about whether the user exists.
    await admission.failed(null);
    return { outcome: 'wrong_credentials' };
  }
  const stored = identity.password_hash;
  const verification = await verifyPassword(stored, password, (column, given) =>
    isForeignHash(column) ? verifyForeignHash(services.sealer, connection.tenant_id, column, given) : Promise.resolve(false),
  );
  recordPasswordCheck(connection.id, verification.workMs);
  if (!verification.valid) {
    await answerFailureInEqualTime(connection.id, started);
    await admission.failed({ userId: identity.linked_to ?? identity.user_id, email: identity.email });
    return { outcome: 'wrong_credentials', userId: identity.linked_to ?? identity.user_id };
  }
  await admission.succeeded();
  const user = identity.linked_to ? await findPrimaryUser(db, connection.tenant_id, identity.linked_to) : identity;
  if (!user) return { outcome: 'wrong_credentials' };
  if (user.blocked || identity.blocked) return { outcome: 'blocked', userId: user.user_id };
  // Only a correct password is checked against the breach corpus: a wrong one tells nobody anything.
  if (await services.attackProtection.passwordLeaked(connection.tenant_id, password, 'login')) return { outcome: 'password_leaked' };
  // Only the hash that was verified is replaced: a password changed meanwhile by another request stays.
  if (verification.needsRehash) await replacePasswordHash(db, identity.tenant_id, identity.user_id, stored, await hashPassword(password));
  await recordLogin(db, connection.tenant_id, user.user_id, ip);
  return { outcome: 'ok', user };
}

export type SignupResult =
  | { outcome: 'ok'; user: User }
  | { outcome: 'invalid'; message: string }
  | { outcome: 'password_rejected'; message: string; policy: string; check: Extract<PasswordCheck, { ok: false }> }
  | { outcome: 'exists'; by: 'email' | 'username' }
  | { outcome: 'password_leaked' }
  | { outcome: 'disabled' };

/** Optional profile fields a signup may carry (/dbconnections/signup); the caller has checked their limits. */
export interface SignupProfile {
  given_name?: string | undefined;
  family_name?: string | undefined;
  name?: string | undefined;
  nickname?: string | undefined;
  picture?: string | undefined;
  user_metadata?: Record<string, string> | undefined;
}

/** Which identifier of a new user is taken: the email wins when both are. */
async function takenIdentifier(services: Services, connection: Connection, email: string, username: string | null): Promise<'email' | 'username' | undefined> {
  const existing = await findUserInConnection(services.store.db, connection.id, { email, username });
  if (!existing) return undefined;
  return existing.email === email ? 'email' : 'username';
}

const USERNAME_CHARACTERS = /^[A-Za-z0-9_+\-.!#$'^`~@]+$/;

/**
 * Creates a database user from a signup form (hosted page or /dbconnections/signup). Of several problems the
 * one reported is the one to act on first (#19): the address and username as typed, then an account that
 * already exists (log in instead: nothing else matters then), then the password policy, then a breached password.
 * `tenant` is the tenant as the request sees it (request.tenant), so the verification email's link goes to the
 * host the signup came on (a custom domain, say).
 */
export async function signUpWithPassword(
  services: Services,
  tenant: Tenant,
  connection: Connection,
  input: { email: string; password: string; username?: string | undefined } & SignupProfile,
  context: EventContext,
  now = Date.now(),
): Promise<SignupResult> {
  const result = await createDatabaseUser(services, tenant, connection, input, context, now);
  recordSignupFailure(services, connection, input, context, result);
  return result;
}

/** `fs` (or `signup_pwd_leak`) for a refused signup; a success is logged in the transaction that creates the user. */
function recordSignupFailure(services: Services, connection: Connection, input: { email: string; username?: string | undefined }, context: EventContext, result: SignupResult): void {
  if (result.outcome === 'ok') return;
  const description: Record<Exclude<SignupResult['outcome'], 'ok'>, string> = {
    invalid: result.outcome === 'invalid' ? result.message : '',
    password_rejected: 'Password is too weak',
    exists: 'The user already exists.',
    password_leaked: 'Signup blocked: the password was found in a data breach',
    disabled: 'Public signup is disabled',
  };
  services.tenantLogs.record(
    connection.tenant_id,
    {
      type: result.outcome === 'password_leaked' ? 'signup_pwd_leak' : 'fs',
      description: description[result.outcome],
      ...(context.client_id && { client: { client_id: context.client_id } }),
      connection: { id: connection.id, name: connection.name, strategy: connection.strategy },
      user_name: normalizeEmail(input.email).slice(0, 320),
      details: { error: result.outcome },
    },
    originOf(context),
  );
}

function originOf(context: EventContext): RequestOrigin {
  return { ip: context.ip ?? null, user_agent: context.user_agent ?? null, hostname: context.hostname ?? null };
}

export function newDatabaseUserId(): string {
  return newUserId('auth0');
}

/**
 * Whether `email` could sign up on `connection` (a valid address, no account with it yet): asked before a
 * passkey is made for the account, so the person is not sent through that for nothing.
 */
export async function passkeySignupRefusal(services: Services, connection: Connection, email: string): Promise<Exclude<SignupResult, { outcome: 'ok' }> | undefined> {
  if (databaseOptions(connection).disable_signup) return { outcome: 'disabled' };
  const normalized = normalizeEmail(email);
  if (!isEmailAddress(normalized)) return { outcome: 'invalid', message: 'Enter a valid email address, such as name@example.com.' };
  const taken = await takenIdentifier(services, connection, normalized, null);
  return taken ? { outcome: 'exists', by: taken } : undefined;
}

/**
 * Creates a database user without a password, whose first credential is a passkey (`userId` chosen ahead);
 * `tenant` as the request sees it (the verification link's host).
 */
export async function signUpWithPasskey(services: Services, tenant: Tenant, connection: Connection, input: { email: string; userId: string }, context: EventContext, now = Date.now()): Promise<SignupResult> {
  const result = await createDatabaseUser(services, tenant, connection, input, context, now);
  recordSignupFailure(services, connection, input, context, result);
  return result;
}

/** `tenant` as the signup's request sees it: the verification link goes to the host the user signed up on. */
async function createDatabaseUser(
  services: Services,
  tenant: Tenant,
  connection: Connection,
  /** No password: a passkey signup, whose user id was chosen before the passkey was made for it. */
  input: ({ email: string; password: string; username?: string | undefined } | { email: string; password?: undefined; username?: undefined; userId: string }) & SignupProfile,
  context: EventContext,
  now: number,
): Promise<SignupResult> {
  const options = databaseOptions(connection);
  if (options.disable_signup) return { outcome: 'disabled' };
  const email = normalizeEmail(input.email);
  if (!isEmailAddress(email)) return { outcome: 'invalid', message: 'Enter a valid email address, such as name@example.com.' };
  let username: string | null = null;
  if (options.requires_username) {
    const bounds = { min: 1, max: 15, ...options.validation?.username };
    const candidate = (input.username ?? '').trim();
    if ([...candidate].length < bounds.min || [...candidate].length > bounds.max || !USERNAME_CHARACTERS.test(candidate)) {
      return { outcome: 'invalid', message: `Choose a username of ${bounds.min} to ${bounds.max} letters, digits or _ + - . characters.` };
    }
    username = candidate.toLowerCase();
  }
  const { user_metadata, ...names } = input;
  const profile = Object.fromEntries(
    (['given_name', 'family_name', 'name', 'nickname', 'picture'] as const).flatMap((key) => (names[key] !== undefined ? [[key, names[key]]] : [])),
  );
  const taken = await takenIdentifier(services, connection, email, username);
  if (taken) return { outcome: 'exists', by: taken };
  if (input.password !== undefined) {
    const check = checkPassword(input.password, options, { email, username, ...profile, user_metadata: user_metadata ?? null });
    if (!check.ok) return { outcome: 'password_rejected', message: check.message, policy: passwordPolicyText(options), check };
    if ((await checkBreachedPasswordAtSignup(services, connection, input.password)) === 'password_leaked') return { outcome: 'password_leaked' };
  }
  const db = services.store.db;
  const user = newUser(
    {
      user_id: 'userId' in input ? input.userId : newDatabaseUserId(),
      tenant_id: connection.tenant_id,
      connection_id: connection.id,
      email,
      username,
      password_hash: input.password === undefined ? null : await hashPassword(input.password),
      profile,
      user_metadata: user_metadata ?? {},
    },
    now,
  );
  try {
    // The user and its user.created event commit together (outbox).
    await db.transaction().execute(async (trx) => {
      await insertUser(trx, user);
      await emitEvent(trx, { tenantId: user.tenant_id, type: 'user.created', object: await userEventObject(trx, user), context: { ...context, connection_id: connection.id } });
      // `ss` commits with the user: a signup that rolls back leaves no success in the logs.
      await services.tenantLogs.writeWith(trx, () => [
        logRow(
          user.tenant_id,
          {
            type: 'ss',
            ...(context.client_id && { client: { client_id: context.client_id } }),
            connection: { id: connection.id, name: connection.name, strategy: connection.strategy },
            user_id: user.user_id,
            user_name: email,
          },
          originOf(context),
          now,
        ),
      ]);
      // The verification email commits with the user (a connection may opt out with send_verification_email: false).
      if (options.send_verification_email !== false) await queueVerificationEmail(trx, services, tenant, user, context.client_id);
    });
  } catch (error) {
    // Two signups racing for one email: the unique index decides, the loser is told the user exists.
    const raced = await takenIdentifier(services, connection, email, username);
    if (raced) return { outcome: 'exists', by: raced };
    throw error;
  }
  return { outcome: 'ok', user };
}
