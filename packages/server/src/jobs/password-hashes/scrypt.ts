/**
 * `scrypt` (RFC 7914) through node:crypto on the thread pool (reference "scrypt"): the hash in hex or base64,
 * `keylen` required, `cost` (N, a power of two, default 16384), `blockSize` (r, default 8) and
 * `parallelization` (p, default 1), an optional salt (utf8 by default).
 */
import { scrypt as nodeScrypt, type ScryptOptions } from 'node:crypto';
import { accepted, b64, bytesOf, hashEncoding, isRefusal, refused, unb64, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';
import { passwordBytes, sameBytes, type PasswordEncoding } from './bytes.js';

export interface ScryptHash extends StoredHash {
  hash: string;
  salt: string;
  cost: number;
  block_size: number;
  parallelization: number;
  password_encoding: PasswordEncoding;
}

/** What a login may be made to spend: 256 MiB (128·N·r bytes), p ≤ 16. */
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;

export function scryptDerive(password: Buffer, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    nodeScrypt(password, salt, length, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export function scryptMemory(cost: number, blockSize: number): number {
  return 128 * cost * blockSize;
}

export const scrypt: ForeignHashAlgorithm<ScryptHash> = {
  name: 'scrypt',
  accept(input) {
    const encoding = hashEncoding(input, ['hex', 'base64'], false);
    if (isRefusal(encoding)) return encoding;
    if (input.keylen === undefined) return refused('OBJECT_REQUIRED', 'keylen', 'keylen is required for the scrypt algorithm');
    const cost = input.cost ?? 16_384;
    const blockSize = input.blockSize ?? 8;
    const parallelization = input.parallelization ?? 1;
    if (cost < 2 || (cost & (cost - 1)) !== 0) return refused('FORMAT', 'cost', 'cost must be a power of two greater than one');
    if (scryptMemory(cost, blockSize) > MAX_MEMORY_BYTES || parallelization > 16) {
      return refused('MAXIMUM', 'cost', 'scrypt parameters needing more than 256 MiB (128·cost·blockSize) or parallelization above 16 are refused');
    }
    const hash = bytesOf(input.hash.value, encoding, 'hash.value');
    if (isRefusal(hash)) return hash;
    if (hash.length !== input.keylen) return refused('FORMAT', 'hash.value', `the hash is ${hash.length} bytes, but keylen is ${input.keylen}`);
    const salt = input.salt ? bytesOf(input.salt.value, input.salt.encoding ?? 'utf8', 'salt.value') : Buffer.alloc(0);
    if (isRefusal(salt)) return salt;
    return accepted({
      algorithm: 'scrypt',
      hash: b64(hash),
      salt: b64(salt),
      cost,
      block_size: blockSize,
      parallelization,
      password_encoding: input.password?.encoding ?? 'utf8',
    });
  },
  async verify(stored, password) {
    const expected = unb64(stored.hash);
    const derived = await scryptDerive(passwordBytes(password, stored.password_encoding), unb64(stored.salt), expected.length, {
      N: stored.cost,
      r: stored.block_size,
      p: stored.parallelization,
      maxmem: scryptMemory(stored.cost, stored.block_size) * 2,
    });
    return sameBytes(derived, expected);
  },
};
