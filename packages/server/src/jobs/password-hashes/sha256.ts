/** `sha256`: SHA-256 (RFC 6234). Salt before or after the password, per salted-digest.ts. */
import { saltedDigest } from './salted-digest.js';

export const sha256 = saltedDigest('sha256');
