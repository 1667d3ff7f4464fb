/**
 * Foreign password hashes: the hashes users bring from another system, kept until their first login here
 * replaces them with our argon2id (connections/database-users.ts).
 *
 * An import accepts a `custom_password_hash` (or a bcrypt `password_hash`) through the algorithm it names (one
 * file per algorithm beside this one), and stores the checked form sealed with the master key in the user's
 * `password_hash` column as `$import$<sealed JSON>`: HMAC keys and Firebase signer keys are secrets, and
 * a database leak should not hand out crackable MD5s either. A foreign hash never leaves the server: it is
 * not in any response, export, event or log, and an import's error list shows it as `*****`.
 */
import type { Sealer } from '../../crypto/sealing.js';
import type { ImportError } from '../import-errors.js';
import type { Accepted, CustomPasswordHash, ForeignHashAlgorithm, StoredHash } from './algorithm.js';
import { argon2 } from './argon2.js';
import { acceptBcryptPasswordHash, bcrypt } from './bcrypt.js';
import { firebaseScryptAlgorithm } from './firebase-scrypt.js';
import { hmac } from './hmac.js';
import { ldap } from './ldap.js';
import { md4 } from './md4.js';
import { md5 } from './md5.js';
import { pbkdf2 } from './pbkdf2.js';
import { scrypt } from './scrypt.js';
import { sha1 } from './sha1.js';
import { sha256 } from './sha256.js';
import { sha512 } from './sha512.js';

export type { CustomPasswordHash } from './algorithm.js';

const ALGORITHMS: ReadonlyMap<string, ForeignHashAlgorithm> = new Map(
  ([argon2, bcrypt, firebaseScryptAlgorithm, hmac, ldap, md4, md5, pbkdf2, scrypt, sha1, sha256, sha512] as unknown as ForeignHashAlgorithm[]).map((a) => [a.name, a]),
);

/** The algorithm names an import file may use (the reference's, plus firebase_scrypt). */
export const FOREIGN_ALGORITHMS: readonly string[] = [...ALGORITHMS.keys()].sort();

const PREFIX = '$import$';

function sealContext(tenantId: string): string {
  return `imported_password_hash:${tenantId}`;
}

export function acceptCustomPasswordHash(input: CustomPasswordHash): Accepted<StoredHash> {
  const algorithm = ALGORITHMS.get(input.algorithm);
  if (!algorithm) {
    return {
      ok: false,
      error: { code: 'ENUM_MISMATCH', path: 'custom_password_hash.algorithm', message: `algorithm must be one of ${FOREIGN_ALGORITHMS.join(', ')}` },
    };
  }
  return algorithm.accept(input);
}

export { acceptBcryptPasswordHash };

/** The `password_hash` column value for an accepted foreign hash of a user of `tenantId`. */
export function sealForeignHash(sealer: Sealer, tenantId: string, stored: StoredHash): string {
  return PREFIX + sealer.seal(JSON.stringify(stored), sealContext(tenantId));
}

/** Whether a stored `password_hash` is a foreign one (not yet replaced by our argon2id). */
export function isForeignHash(column: string): boolean {
  return column.startsWith(PREFIX);
}

/**
 * Checks `password` against a sealed foreign hash. False for a wrong password, and for anything that cannot be
 * opened or verified (another tenant's value, a tampered one, an algorithm no longer known): nobody logs in with it.
 */
export async function verifyForeignHash(sealer: Sealer, tenantId: string, column: string, password: string): Promise<boolean> {
  let stored: StoredHash;
  try {
    stored = JSON.parse(sealer.unseal(column.slice(PREFIX.length), sealContext(tenantId))) as StoredHash;
  } catch {
    return false;
  }
  const algorithm = ALGORITHMS.get(stored.algorithm);
  if (!algorithm) return false;
  try {
    return await algorithm.verify(stored, password);
  } catch {
    return false;
  }
}

/** The algorithm of a sealed foreign hash, for tests and diagnostics (never the hash itself). */
export function foreignAlgorithmOf(sealer: Sealer, tenantId: string, column: string): string | undefined {
  if (!isForeignHash(column)) return undefined;
  try {
    return (JSON.parse(sealer.unseal(column.slice(PREFIX.length), sealContext(tenantId))) as StoredHash).algorithm;
  } catch {
    return undefined;
  }
}

const REDACTED = '*****';

/**
 * A user object of an import file as the job's error list shows it: password hashes, keys, salts and TOTP secrets replaced by
 * `*****`, whatever their shape (the user may be malformed).
 */
export function redactUser(user: unknown): unknown {
  if (typeof user !== 'object' || user === null || Array.isArray(user)) return user;
  const copy: Record<string, unknown> = { ...(user as Record<string, unknown>) };
  if ('password_hash' in copy) copy.password_hash = REDACTED;
  const custom = copy.custom_password_hash;
  if (typeof custom === 'object' && custom !== null && !Array.isArray(custom)) {
    const hidden: Record<string, unknown> = { ...(custom as Record<string, unknown>) };
    for (const part of ['hash', 'salt', 'salt_separator'] as const) {
      const value = hidden[part];
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        if (value !== undefined) hidden[part] = REDACTED;
        continue;
      }
      const inner: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      if ('value' in inner) inner.value = REDACTED;
      if ('key' in inner) inner.key = REDACTED;
      hidden[part] = inner;
    }
    copy.custom_password_hash = hidden;
  }
  // A TOTP secret is a credential too: whoever reads the job's errors could compute the person's codes.
  if (Array.isArray(copy.mfa_factors)) {
    copy.mfa_factors = copy.mfa_factors.map((factor: unknown) => {
      if (typeof factor !== 'object' || factor === null || !('totp' in factor)) return factor;
      const totp = (factor as { totp: unknown }).totp;
      return { ...factor, totp: typeof totp === 'object' && totp !== null && 'secret' in totp ? { ...totp, secret: REDACTED } : REDACTED };
    });
  }
  return copy;
}

export type { ImportError };
