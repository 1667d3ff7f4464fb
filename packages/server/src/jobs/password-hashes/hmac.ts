/**
 * `hmac`: HMAC-<digest>(key, salt + password) (reference "HMAC"): `hash.digest` one of md4, md5, ripemd160,
 * sha1, sha224, sha256, sha384, sha512, whirlpool; `hash.key` required (utf8 by default); the hash in hex or
 * base64; an optional salt before or after the password. The key is a secret: index.ts seals the stored form.
 */
import { accepted, b64, bytesOf, hashEncoding, isRefusal, refused, saltOf, unb64, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';
import { DIGEST_LENGTH, DIGESTS, hmac as computeHmac, passwordBytes, salted, sameBytes, type Digest, type PasswordEncoding, type SaltPosition } from './bytes.js';

export interface HmacHash extends StoredHash {
  digest: Digest;
  key: string;
  hash: string;
  salt?: string;
  position: SaltPosition;
  password_encoding: PasswordEncoding;
}

export const hmac: ForeignHashAlgorithm<HmacHash> = {
  name: 'hmac',
  accept(input) {
    const encoding = hashEncoding(input, ['hex', 'base64'], false);
    if (isRefusal(encoding)) return encoding;
    const digest = input.hash.digest;
    if (digest === undefined) return refused('OBJECT_REQUIRED', 'hash.digest', 'hash.digest is required for the hmac algorithm');
    if (!(DIGESTS as readonly string[]).includes(digest)) return refused('ENUM_MISMATCH', 'hash.digest', `hash.digest must be one of ${DIGESTS.join(', ')}`);
    if (!input.hash.key) return refused('OBJECT_REQUIRED', 'hash.key', 'hash.key is required for the hmac algorithm');
    const key = bytesOf(input.hash.key.value, input.hash.key.encoding ?? 'utf8', 'hash.key.value');
    if (isRefusal(key)) return key;
    const hash = bytesOf(input.hash.value, encoding, 'hash.value');
    if (isRefusal(hash)) return hash;
    if (hash.length !== DIGEST_LENGTH[digest as Digest]) {
      return refused('FORMAT', 'hash.value', `an HMAC-${digest} is ${DIGEST_LENGTH[digest as Digest]} bytes; this one is ${hash.length}`);
    }
    const salt = saltOf(input);
    if (isRefusal(salt)) return salt;
    return accepted({
      algorithm: 'hmac',
      digest: digest as Digest,
      key: b64(key),
      hash: b64(hash),
      ...(salt.salt && { salt: b64(salt.salt) }),
      position: salt.position,
      password_encoding: input.password?.encoding ?? 'utf8',
    });
  },
  async verify(stored, password) {
    const message = salted(passwordBytes(password, stored.password_encoding), stored.salt === undefined ? undefined : unb64(stored.salt), stored.position);
    return sameBytes(await computeHmac(stored.digest, unb64(stored.key), message), unb64(stored.hash));
  },
};
