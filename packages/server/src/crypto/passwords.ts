/**
 * User password hashing: argon2id with the OWASP parameters (m = 19456 KiB, t = 2, p = 1) through
 * `@node-rs/argon2`, whose async `hash` and `verify` run on libuv's thread pool, so a hash never holds the
 * event loop. Hashes are PHC strings (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), which carry their own
 * parameters: raising the parameters later only makes `needsRehash` true for older hashes.
 *
 * Imported bcrypt hashes (`$2a$`, `$2b$`, `$2y$`) are recognised but cannot be verified yet: no bcrypt
 * implementation is installed (`@node-rs/bcrypt` would be the one to add). Until then they never verify.
 */
import { availableParallelism } from 'node:os';
import { hash, parseOptions, verify, type Algorithm, type Options } from '@node-rs/argon2';

/** `Algorithm.Argon2id`; the enum is an ambient const enum, which isolatedModules cannot read. */
const ARGON2ID = 2 as Algorithm;

export const ARGON2_PARAMETERS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

const OPTIONS: Options = { algorithm: ARGON2ID, ...ARGON2_PARAMETERS };

export type PasswordHashScheme = 'argon2id' | 'argon2' | 'bcrypt' | 'unknown';

export function hashScheme(stored: string): PasswordHashScheme {
  if (stored.startsWith('$argon2id$')) return 'argon2id';
  if (/^\$argon2(i|d)\$/.test(stored)) return 'argon2';
  if (/^\$2[aby]\$\d{2}\$/.test(stored)) return 'bcrypt';
  return 'unknown';
}

/**
 * At most one argon2 computation per CPU at a time. libuv's pool has 4 threads whatever the core count; four
 * 19 MiB hashes on two cores thrash the caches and starve the token signatures queued behind them (measured:
 * 129 → 150 logins/s on 2 CPUs). Queued callers wait their turn in order.
 */
const ARGON2_SLOTS = Math.max(1, availableParallelism());
let argon2Running = 0;
const argon2Waiting: (() => void)[] = [];

async function withArgon2Slot<T>(work: () => Promise<T>): Promise<T> {
  if (argon2Running >= ARGON2_SLOTS) await new Promise<void>((resolve) => argon2Waiting.push(resolve));
  else argon2Running++;
  try {
    return await work();
  } finally {
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

export async function verifyPassword(stored: string, password: string): Promise<PasswordVerification> {
  const scheme = hashScheme(stored);
  if (scheme !== 'argon2id' && scheme !== 'argon2') return { valid: false, needsRehash: false };
  let valid: boolean;
  try {
    valid = await withArgon2Slot(() => verify(stored, password));
  } catch {
    // A malformed stored hash: nobody can log in with it.
    valid = false;
  }
  return { valid, needsRehash: valid && needsRehash(stored) };
}

let decoy: Promise<string> | undefined;

/**
 * Spends as long as a real verification, against a hash nobody knows the password of. Login code calls it
 * when there is no such user (or no password), so response times do not tell which accounts exist.
 */
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(`decoy:${crypto.randomUUID()}`);
  const known = await decoy;
  await withArgon2Slot(() => verify(known, password)).catch(() => false);
  return false;
}
