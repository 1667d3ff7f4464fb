/**
 * Random `state` and `nonce` values: 32 characters from crypto.getRandomValues with rejection sampling over
 * the alphabet auth0-js uses (unreserved URL characters), so they survive any URL unencoded.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVXYZabcdefghijklmnopqrstuvwxyz-._~';

export function randomString(length = 32): string {
  const out: string[] = [];
  const limit = 256 - (256 % ALPHABET.length);
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const byte of bytes) {
      if (byte < limit && out.length < length) out.push(ALPHABET[byte % ALPHABET.length]!);
    }
  }
  return out.join('');
}
