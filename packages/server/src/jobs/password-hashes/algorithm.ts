/**
 * One verify interface for every foreign algorithm (one file each beside this one). An algorithm
 *  - `accept`s the `custom_password_hash` of an import file: it checks what the reference's rules for that
 *    algorithm demand and returns the hash in a stored form of its own (bytes decoded, defaults applied), or
 *    the first thing wrong with it as an import error;
 *  - `verify`s a password against that stored form at login.
 * Stored forms are plain JSON; index.ts seals them at rest.
 */
import { importError, type ImportError, type ImportErrorCode } from '../import-errors.js';
import { decodeBytes, type ByteEncoding, type PasswordEncoding, type SaltPosition } from './bytes.js';

/** `custom_password_hash` as an import file gives it (the reference's schema, plus Firebase's parameters). */
export interface CustomPasswordHash {
  algorithm: string;
  hash: {
    value: string;
    encoding?: ByteEncoding;
    digest?: string;
    key?: { value: string; encoding?: ByteEncoding };
  };
  salt?: { value: string; encoding?: ByteEncoding; position?: SaltPosition };
  password?: { encoding?: PasswordEncoding };
  keylen?: number;
  cost?: number;
  blockSize?: number;
  parallelization?: number;
  /** firebase_scrypt: the project's hash parameters, as `firebase auth:export` and the console give them. */
  salt_separator?: { value: string; encoding?: ByteEncoding };
  rounds?: number;
  mem_cost?: number;
}

export interface StoredHash {
  algorithm: string;
}

export type Accepted<S extends StoredHash> = { ok: true; stored: S } | { ok: false; error: ImportError };

export interface ForeignHashAlgorithm<S extends StoredHash = StoredHash> {
  readonly name: string;
  accept(input: CustomPasswordHash): Accepted<S>;
  verify(stored: S, password: string): Promise<boolean>;
}

const ROOT = 'custom_password_hash';

export function accepted<S extends StoredHash>(stored: S): Accepted<S> {
  return { ok: true, stored };
}

export function refused(code: ImportErrorCode, path: string, message: string): { ok: false; error: ImportError } {
  return { ok: false, error: importError(code, `${ROOT}.${path}`, message) };
}

/** The hash's encoding must be one of `allowed` (the first is the default when none is given, if `defaulted`). */
export function hashEncoding(input: CustomPasswordHash, allowed: readonly ByteEncoding[], defaulted: boolean): ByteEncoding | { ok: false; error: ImportError } {
  const encoding = input.hash.encoding ?? (defaulted ? allowed[0] : undefined);
  if (encoding === undefined || !allowed.includes(encoding)) {
    return refused('ENUM_MISMATCH', 'hash.encoding', `hash.encoding must be ${allowed.join(' or ')} for the ${input.algorithm} algorithm`);
  }
  return encoding;
}

/** Decodes `value` or says which field does not hold valid `encoding` text. */
export function bytesOf(value: string, encoding: ByteEncoding, path: string): Buffer | { ok: false; error: ImportError } {
  const bytes = decodeBytes(value, encoding);
  if (!bytes) return refused('FORMAT', path, `${path} is not valid ${encoding}`);
  return bytes;
}

export function isRefusal(value: unknown): value is { ok: false; error: ImportError } {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

/** The optional salt, decoded (utf8 by default), with its position (prefix by default). */
export function saltOf(input: CustomPasswordHash): { salt: Buffer | undefined; position: SaltPosition } | { ok: false; error: ImportError } {
  if (!input.salt) return { salt: undefined, position: 'prefix' };
  const salt = bytesOf(input.salt.value, input.salt.encoding ?? 'utf8', 'salt.value');
  if (isRefusal(salt)) return salt;
  return { salt, position: input.salt.position ?? 'prefix' };
}

export function noSalt(input: CustomPasswordHash): { ok: false; error: ImportError } | undefined {
  return input.salt ? refused('NOT_PASSED', 'salt', `salt is not allowed with the ${input.algorithm} algorithm: it belongs in the hash value`) : undefined;
}

export const b64 = (bytes: Buffer): string => bytes.toString('base64');
export const unb64 = (text: string): Buffer => Buffer.from(text, 'base64');
