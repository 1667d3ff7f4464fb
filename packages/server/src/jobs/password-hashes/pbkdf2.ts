/**
 * `pbkdf2`: a PHC string `$pbkdf2-<digest>$i=<iterations>,l=<key length>$<salt>$<hash>` (reference "PBKDF2"),
 * i and l defaulting to 100000 and 64. The digest names the reference lists (OpenSSL's, with their RSA-… and
 * …WithRSAEncryption aliases) map to one digest each; MDC2 is refused, as no maintained implementation exists.
 */
import phc, { type PhcObject } from '@phc/format';
import { accepted, b64, hashEncoding, isRefusal, noSalt, refused, unb64, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';
import { passwordBytes, pbkdf2 as derive, sameBytes, type Digest, type PasswordEncoding } from './bytes.js';

export interface Pbkdf2Hash extends StoredHash {
  digest: Digest;
  iterations: number;
  salt: string;
  hash: string;
  password_encoding: PasswordEncoding;
}

const ALIASES: Record<string, Digest> = {
  'RSA-MD4': 'md4',
  md4: 'md4',
  md4WithRSAEncryption: 'md4',
  'RSA-MD5': 'md5',
  md5: 'md5',
  md5WithRSAEncryption: 'md5',
  'ssl3-md5': 'md5',
  'RSA-RIPEMD160': 'ripemd160',
  ripemd: 'ripemd160',
  ripemd160: 'ripemd160',
  ripemd160WithRSA: 'ripemd160',
  rmd160: 'ripemd160',
  'RSA-SHA1': 'sha1',
  'RSA-SHA1-2': 'sha1',
  sha1: 'sha1',
  sha1WithRSAEncryption: 'sha1',
  'ssl3-sha1': 'sha1',
  'RSA-SHA224': 'sha224',
  sha224: 'sha224',
  sha224WithRSAEncryption: 'sha224',
  'RSA-SHA256': 'sha256',
  sha256: 'sha256',
  sha256WithRSAEncryption: 'sha256',
  'RSA-SHA384': 'sha384',
  sha384: 'sha384',
  sha384WithRSAEncryption: 'sha384',
  'RSA-SHA512': 'sha512',
  sha512: 'sha512',
  sha512WithRSAEncryption: 'sha512',
  whirlpool: 'whirlpool',
};
const UNSUPPORTED = new Set(['RSA-MDC2', 'mdc2', 'mdc2WithRSA']);

export const DEFAULT_ITERATIONS = 100_000;
export const DEFAULT_KEY_LENGTH = 64;
/** What a login may be made to spend. */
const MAX_ITERATIONS = 10_000_000;
const MAX_KEY_LENGTH = 1024;

export const pbkdf2: ForeignHashAlgorithm<Pbkdf2Hash> = {
  name: 'pbkdf2',
  accept(input) {
    const encoding = hashEncoding(input, ['utf8'], true);
    if (isRefusal(encoding)) return encoding;
    const salt = noSalt(input);
    if (salt) return salt;
    // The reference's digest names (RSA-SHA256, sha256WithRSAEncryption) are not PHC ids ([a-z0-9-]): read
    // the id here and let @phc/format parse the rest.
    const id = /^\$pbkdf2-([A-Za-z0-9-]{1,40})(\$.*)$/.exec(input.hash.value);
    if (!id) return refused('FORMAT', 'hash.value', 'hash.value must be a PHC string $pbkdf2-<digest>$i=…,l=…$salt$hash, e.g. $pbkdf2-sha512$…');
    const digestName = id[1]!;
    let parsed: PhcObject;
    try {
      parsed = phc.deserialize(`$pbkdf2${id[2]}`);
    } catch {
      return refused('FORMAT', 'hash.value', 'hash.value must be a PHC string ($pbkdf2-sha512$i=…,l=…$salt$hash, salt and hash in B64)');
    }
    if (UNSUPPORTED.has(digestName)) return refused('ENUM_MISMATCH', 'hash.value', `the ${digestName} digest is not supported`);
    const digest = ALIASES[digestName];
    if (!digest) return refused('ENUM_MISMATCH', 'hash.value', `unknown PBKDF2 digest ${digestName}`);
    const iterations = parsed.params?.i ?? DEFAULT_ITERATIONS;
    const keyLength = parsed.params?.l ?? DEFAULT_KEY_LENGTH;
    if (typeof iterations !== 'number' || !Number.isInteger(iterations) || iterations < 1 || iterations > MAX_ITERATIONS) {
      return refused('FORMAT', 'hash.value', `i must be a whole number from 1 to ${MAX_ITERATIONS}`);
    }
    if (typeof keyLength !== 'number' || !Number.isInteger(keyLength) || keyLength < 1 || keyLength > MAX_KEY_LENGTH) {
      return refused('FORMAT', 'hash.value', `l must be a whole number from 1 to ${MAX_KEY_LENGTH}`);
    }
    if (!parsed.salt || !parsed.hash) return refused('FORMAT', 'hash.value', 'hash.value must carry a salt and a hash');
    if (parsed.hash.length !== keyLength) return refused('FORMAT', 'hash.value', `the hash is ${parsed.hash.length} bytes, but l=${keyLength}`);
    return accepted({
      algorithm: 'pbkdf2',
      digest,
      iterations,
      salt: b64(parsed.salt),
      hash: b64(parsed.hash),
      password_encoding: input.password?.encoding ?? 'utf8',
    });
  },
  async verify(stored, password) {
    const expected = unb64(stored.hash);
    const derived = await derive(stored.digest, passwordBytes(password, stored.password_encoding), unb64(stored.salt), stored.iterations, expected.length);
    return sameBytes(derived, expected);
  },
};
