/**
 * `ldap`: an RFC 2307 `userPassword` value, `{SCHEME}base64` (reference "LDAP"): {MD5}, {SHA}, {SHA256},
 * {SHA384}, {SHA512}, and their salted forms {SMD5}, {SSHA}, {SSHA256}, {SSHA384}, {SSHA512}, whose base64
 * holds digest(password + salt) followed by the salt. {CRYPT} is refused: its result depends on the system
 * that made it. No separate salt: it is in the value.
 */
import { accepted, b64, bytesOf, hashEncoding, isRefusal, noSalt, refused, unb64, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';
import { digest as computeDigest, DIGEST_LENGTH, passwordBytes, sameBytes, type Digest, type PasswordEncoding } from './bytes.js';

export interface LdapHash extends StoredHash {
  digest: Digest;
  hash: string;
  salt?: string;
  password_encoding: PasswordEncoding;
}

const SCHEMES: Record<string, { digest: Digest; salted: boolean }> = {
  MD5: { digest: 'md5', salted: false },
  SMD5: { digest: 'md5', salted: true },
  SHA: { digest: 'sha1', salted: false },
  SSHA: { digest: 'sha1', salted: true },
  SHA256: { digest: 'sha256', salted: false },
  SSHA256: { digest: 'sha256', salted: true },
  SHA384: { digest: 'sha384', salted: false },
  SSHA384: { digest: 'sha384', salted: true },
  SHA512: { digest: 'sha512', salted: false },
  SSHA512: { digest: 'sha512', salted: true },
};

const VALUE = /^\{([A-Za-z0-9]+)\}(\S+)$/;

export const ldap: ForeignHashAlgorithm<LdapHash> = {
  name: 'ldap',
  accept(input) {
    const encoding = hashEncoding(input, ['utf8'], true);
    if (isRefusal(encoding)) return encoding;
    const salt = noSalt(input);
    if (salt) return salt;
    const match = VALUE.exec(input.hash.value);
    if (!match) return refused('FORMAT', 'hash.value', 'hash.value must be an RFC 2307 value: {SCHEME}base64');
    const schemeName = match[1]!.toUpperCase();
    if (schemeName === 'CRYPT') return refused('ENUM_MISMATCH', 'hash.value', 'the {CRYPT} scheme is not supported: its result depends on the system that made it');
    const scheme = SCHEMES[schemeName];
    if (!scheme) return refused('ENUM_MISMATCH', 'hash.value', `unknown scheme {${match[1]}}; supported: ${Object.keys(SCHEMES).map((s) => `{${s}}`).join(', ')}`);
    const bytes = bytesOf(match[2]!, 'base64', 'hash.value');
    if (isRefusal(bytes)) return bytes;
    const length = DIGEST_LENGTH[scheme.digest];
    if (scheme.salted ? bytes.length <= length : bytes.length !== length) {
      return refused('FORMAT', 'hash.value', `a {${schemeName}} value holds ${scheme.salted ? `more than ${length}` : length} bytes; this one holds ${bytes.length}`);
    }
    return accepted({
      algorithm: 'ldap',
      digest: scheme.digest,
      hash: b64(bytes.subarray(0, length)),
      ...(scheme.salted && { salt: b64(bytes.subarray(length)) }),
      password_encoding: input.password?.encoding ?? 'utf8',
    });
  },
  async verify(stored, password) {
    const bytes = passwordBytes(password, stored.password_encoding);
    const message = stored.salt === undefined ? bytes : Buffer.concat([bytes, unb64(stored.salt)]);
    return sameBytes(await computeDigest(stored.digest, message), unb64(stored.hash));
  },
};
