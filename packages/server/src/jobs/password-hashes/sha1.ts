/** `sha1`: SHA-1 (RFC 3174). Salt before or after the password, per salted-digest.ts. */
import { saltedDigest } from './salted-digest.js';

export const sha1 = saltedDigest('sha1');
