/** `md4`: MD4 (RFC 1320), computed by hash-wasm: OpenSSL 3 keeps MD4 in its legacy provider, which Node leaves off. Salt before or after the password, per salted-digest.ts. */
import { saltedDigest } from './salted-digest.js';

export const md4 = saltedDigest('md4');
