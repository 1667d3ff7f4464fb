/**
 * The plain digests (md4, md5, sha1, sha256, sha512): digest(salt + password) or digest(password + salt), the
 * salt optional, the hash given in hex or base64 (reference: "MD or SHA"). Each algorithm's file names its digest.
 */
import { accepted, b64, bytesOf, hashEncoding, isRefusal, refused, saltOf, unb64, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';
import { digest, DIGEST_LENGTH, passwordBytes, salted, sameBytes, type Digest, type PasswordEncoding, type SaltPosition } from './bytes.js';

export interface SaltedDigestHash extends StoredHash {
  hash: string;
  salt?: string;
  position: SaltPosition;
  password_encoding: PasswordEncoding;
}

export function saltedDigest(name: Digest & ('md4' | 'md5' | 'sha1' | 'sha256' | 'sha512')): ForeignHashAlgorithm<SaltedDigestHash> {
  return {
    name,
    accept(input) {
      const encoding = hashEncoding(input, ['hex', 'base64'], false);
      if (isRefusal(encoding)) return encoding;
      const hash = bytesOf(input.hash.value, encoding, 'hash.value');
      if (isRefusal(hash)) return hash;
      if (hash.length !== DIGEST_LENGTH[name]) {
        return refused('FORMAT', 'hash.value', `a ${name} hash is ${DIGEST_LENGTH[name]} bytes; this one is ${hash.length}`);
      }
      const salt = saltOf(input);
      if (isRefusal(salt)) return salt;
      return accepted({
        algorithm: name,
        hash: b64(hash),
        ...(salt.salt && { salt: b64(salt.salt) }),
        position: salt.position,
        password_encoding: input.password?.encoding ?? 'utf8',
      });
    },
    async verify(stored, password) {
      const input = salted(passwordBytes(password, stored.password_encoding), stored.salt === undefined ? undefined : unb64(stored.salt), stored.position);
      return sameBytes(await digest(name, input), unb64(stored.hash));
    },
  };
}
