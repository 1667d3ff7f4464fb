/**
 * `bcrypt` (and the `password_hash` field, which is bcrypt): `$2a$`, `$2b$` or `$2y$` hashes, verified by
 * @node-rs/bcrypt (native, on the thread pool). A salt may be given beside the hash (reference "bcrypt"): it is
 * put before or after the password, and counts towards bcrypt's 72-byte input.
 */
import { verify } from '@node-rs/bcrypt';
import { accepted, b64, hashEncoding, isRefusal, refused, saltOf, unb64, type Accepted, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';
import { passwordBytes, salted, type PasswordEncoding, type SaltPosition } from './bytes.js';

export interface BcryptHash extends StoredHash {
  hash: string;
  salt?: string;
  position: SaltPosition;
  password_encoding: PasswordEncoding;
}

const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** A bcrypt hash string with a cost bcrypt accepts (4 to 31). */
export function isBcryptHash(value: string): boolean {
  const cost = BCRYPT.exec(value)?.[1];
  return cost !== undefined && Number(cost) >= 4 && Number(cost) <= 31;
}

/** The `password_hash` field of an import file. */
export function acceptBcryptPasswordHash(value: string): Accepted<BcryptHash> {
  if (!isBcryptHash(value)) {
    return { ok: false, error: { code: 'FORMAT', path: 'password_hash', message: 'password_hash must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 31)' } };
  }
  return accepted({ algorithm: 'bcrypt', hash: value, position: 'prefix', password_encoding: 'utf8' });
}

export const bcrypt: ForeignHashAlgorithm<BcryptHash> = {
  name: 'bcrypt',
  accept(input) {
    const encoding = hashEncoding(input, ['utf8'], true);
    if (isRefusal(encoding)) return encoding;
    if (!isBcryptHash(input.hash.value)) return refused('FORMAT', 'hash.value', 'hash.value must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 31)');
    const salt = saltOf(input);
    if (isRefusal(salt)) return salt;
    return accepted({
      algorithm: 'bcrypt',
      hash: input.hash.value,
      ...(salt.salt && { salt: b64(salt.salt) }),
      position: salt.position,
      password_encoding: input.password?.encoding ?? 'utf8',
    });
  },
  verify(stored, password) {
    const input = salted(passwordBytes(password, stored.password_encoding), stored.salt === undefined ? undefined : unb64(stored.salt), stored.position);
    return verify(input, stored.hash);
  },
};
