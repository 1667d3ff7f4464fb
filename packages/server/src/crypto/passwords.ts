/**
 * User password hashing: argon2id with the OWASP parameters (m = 19456 KiB, t = 2, p = 1) through
 * `@node-rs/argon2`, whose async `hash` and `verify` run on libuv's thread pool, so a hash never holds the
 * event loop. Hashes are PHC strings (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), which carry their own
 * parameters: raising the parameters later only makes `needsRehash` true for older hashes.
 *
 * Hashes imported from other systems (bcrypt, PBKDF2, salted SHA, Firebase's scrypt, …) are verified by their own
 * algorithm (jobs/password-hashes/), which the caller passes in; a right password then needs a rehash, so the
 * user's first login replaces the foreign hash with ours. A foreign check runs beside a decoy argon2id
 * verification, so it costs at least what ours costs (and brute force against a weak MD5 is no faster).
 */
import { availableParallelism } from 'node:os';
import { hash, parseOptions, verify, type Algorithm, type Options } from '@node-rs/argon2';

/** `Algorithm.Argon2id`; the enum is an ambient const enum, which isolatedModules cannot read. */
const ARGON2ID = 2 as Algorithm;

export const ARGON2_PARAMETERS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

const OPTIONS: Options = { algorithm: ARGON2ID, ...ARGON2_PARAMETERS };

export type PasswordHashScheme = 'argon2id' | 'argon2' | 'other';

export function hashScheme(stored: string): PasswordHashScheme {
  if (stored.startsWith('$argon2id$')) return 'argon2id';
  if (/^\$argon2(i|d)\$/.test(stored)) return 'argon2';
  return 'other';
}

/**
 * At most one argon2 computation per CPU at a time. libuv's pool has 4 threads whatever the core count; four
 * 19 MiB hashes on two cores thrash the caches and starve the token signatures queued behind them (measured:
 * 129 → 150 logins/s on 2 CPUs). Queued callers wait their turn in order.
 */
const ARGON2_SLOTS = Math.max(1, availableParallelism());
let argon2Running = 0;
const argon2Waiting: (() => void)[] = [];

/** Argon2 computations running or waiting: a background job backs off while logins are queued here. */
export function argon2Pressure(): number {
  return argon2Running + argon2Waiting.length;
}

/** The argon2 computations running and waiting for a slot (GET /metrics). */
export function argon2Queue(): { running: number; waiting: number } {
  return { running: argon2Running, waiting: argon2Waiting.length };
}

/**
 * How long a password check spent hashing, without the time it waited for a slot: the wait depends on the
 * load, not on whose password it was, so login-timing.ts leaves it out of the time failures are padded to.
 */
export interface HashWork {
  ms: number;
}

async function withArgon2Slot<T>(work: () => Promise<T>, spent?: HashWork): Promise<T> {
  if (argon2Running >= ARGON2_SLOTS) await new Promise<void>((resolve) => argon2Waiting.push(resolve));
  else argon2Running++;
  const started = performance.now();
  try {
    return await work();
  } finally {
    if (spent) spent.ms += performance.now() - started;
    // Hand the slot straight to the next waiter, or free it.
    const next = argon2Waiting.shift();
    if (next) next();
    else argon2Running--;
  }
}

export async function hashPassword(password: string): Promise<string> {
  return withArgon2Slot(() => hash(password, OPTIONS));
}

export interface PasswordVerification {
  valid: boolean;
  /** True when the password was right but the stored hash is weaker than today's parameters: store a new one. */
  needsRehash: boolean;
  /** The time the check itself took, without waiting for a hash slot (HashWork). */
  workMs: number;
}

/** True when `stored` is not an argon2id hash with at least today's parameters. */
export function needsRehash(stored: string): boolean {
  if (hashScheme(stored) !== 'argon2id') return true;
  try {
    const used = parseOptions(stored);
    return (
      used.memoryCost < ARGON2_PARAMETERS.memoryCost || used.timeCost < ARGON2_PARAMETERS.timeCost || used.parallelism < ARGON2_PARAMETERS.parallelism
    );
  } catch {
    return true;
  }
}

/** An argon2 PHC string (any variant, any parameters) against `password`; false for a malformed hash. */
export async function verifyArgon2(phc: string, password: string, spent?: HashWork): Promise<boolean> {
  try {
    return await withArgon2Slot(() => verify(phc, password), spent);
  } catch {
    return false;
  }
}

/** Verifies a hash this module does not know (an imported one); false when it does not match or cannot be read. */
export type ForeignVerifier = (stored: string, password: string) => Promise<boolean>;

export async function verifyPassword(stored: string, password: string, foreign?: ForeignVerifier): Promise<PasswordVerification> {
  const scheme = hashScheme(stored);
  const spent: HashWork = { ms: 0 };
  if (scheme === 'argon2id' || scheme === 'argon2') {
    const valid = await verifyArgon2(stored, password, spent);
    return { valid, needsRehash: valid && needsRehash(stored), workMs: spent.ms };
  }
  if (!foreign) {
    await verifyAgainstDecoy(password, spent);
    return { valid: false, needsRehash: false, workMs: spent.ms };
  }
  // Side by side: the time taken is the larger of the two, never less than an argon2id user's. The foreign
  // check's time is counted whole (its own waits included), which can only raise the floor of failures.
  const started = performance.now();
  let foreignMs = 0;
  const [valid] = await Promise.all([
    foreign(stored, password)
      .catch(() => false)
      .finally(() => (foreignMs = performance.now() - started)),
    verifyAgainstDecoy(password, spent),
  ]);
  return { valid, needsRehash: valid, workMs: Math.max(foreignMs, spent.ms) };
}

let decoy: Promise<string> | undefined;

/**
 * Spends as long as a real verification, against a hash nobody knows the password of. Login code calls it
 * when there is no such user (or no password), so response times do not tell which accounts exist.
 */
export async function verifyAgainstDecoy(password: string, spent?: HashWork): Promise<false> {
  decoy ??= hashPassword(`decoy:${crypto.randomUUID()}`);
  const known = await decoy;
  await withArgon2Slot(() => verify(known, password), spent).catch(() => false);
  return false;
}
