/** `sha512`: SHA-512 (RFC 6234). Salt before or after the password, per salted-digest.ts. */
import { saltedDigest } from './salted-digest.js';

export const sha512 = saltedDigest('sha512');
