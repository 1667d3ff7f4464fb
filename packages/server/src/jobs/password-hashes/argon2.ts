/**
 * `argon2`: a PHC string, `$argon2i$`, `$argon2d$` or `$argon2id$` with its salt inside (reference "Argon2"),
 * verified by @node-rs/argon2 through the same bounded pool as our own hashes (crypto/passwords.ts).
 */
import phc, { type PhcObject } from '@phc/format';
import { verifyArgon2 } from '../../crypto/passwords.js';
import { accepted, hashEncoding, isRefusal, noSalt, refused, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';

export interface Argon2Hash extends StoredHash {
  phc: string;
}

const VARIANTS = ['argon2i', 'argon2d', 'argon2id'];
/** Bounds on what a login may be made to spend: 1 GiB of memory, 100 passes. */
const MAX_MEMORY_KIB = 1_048_576;
const MAX_TIME = 100;

export const argon2: ForeignHashAlgorithm<Argon2Hash> = {
  name: 'argon2',
  accept(input) {
    const encoding = hashEncoding(input, ['utf8'], true);
    if (isRefusal(encoding)) return encoding;
    const salt = noSalt(input);
    if (salt) return salt;
    let parsed: PhcObject;
    try {
      parsed = phc.deserialize(input.hash.value);
    } catch {
      return refused('FORMAT', 'hash.value', 'hash.value must be a PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash)');
    }
    const { m, t, p } = parsed.params ?? {};
    if (!VARIANTS.includes(parsed.id)) return refused('FORMAT', 'hash.value', `the PHC id must be one of ${VARIANTS.join(', ')}`);
    if (typeof m !== 'number' || typeof t !== 'number' || typeof p !== 'number' || !parsed.salt || !parsed.hash) {
      return refused('FORMAT', 'hash.value', 'hash.value must carry m, t and p, a salt and a hash');
    }
    if (m > MAX_MEMORY_KIB || t > MAX_TIME || p > 64) return refused('MAXIMUM', 'hash.value', `argon2 parameters above m=${MAX_MEMORY_KIB}, t=${MAX_TIME}, p=64 are refused`);
    return accepted({ algorithm: 'argon2', phc: input.hash.value });
  },
  verify(stored, password) {
    return verifyArgon2(stored.phc, password);
  },
};
