/** `md5`: MD5 (RFC 1321). Salt before or after the password, per salted-digest.ts. */
import { saltedDigest } from './salted-digest.js';

export const md5 = saltedDigest('md5');
