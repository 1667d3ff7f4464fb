/** Identifiers in the wire formats of design.md "Data": prefixes plus CSPRNG alphanumerics. */
import { randomBytes } from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Bytes below this are used (248 = 4 × 62), so `byte % 62` is uniform; the rest are drawn again. */
const UNBIASED_LIMIT = 248;

/**
 * `length` characters drawn uniformly from [A-Za-z0-9]: random bytes in one call, by rejection (an id per event
 * of a bulk import made randomInt's one call per character the costliest part of writing an event).
 */
export function randomAlphanumeric(length: number, source: (length: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    for (const byte of source(length + 8)) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += ALPHANUMERIC[byte % ALPHANUMERIC.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** An unguessable secret: `bytes` random bytes as base64url. */
export function randomSecret(bytes = 48): string {
  return randomBytes(bytes).toString('base64url');
}

export const newId = {
  tenant: () => `ten_${randomAlphanumeric(16)}`,
  /** Clients are 32 alphanumerics, as the SDKs expect. */
  client: () => randomAlphanumeric(32),
  clientSecret: () => randomSecret(48),
  resourceServer: () => randomHex(24),
  clientGrant: () => `cgr_${randomAlphanumeric(16)}`,
  connection: () => `con_${randomAlphanumeric(16)}`,
  role: () => `rol_${randomAlphanumeric(16)}`,
};

/**
 * The id of a new user: `<provider>|` and 24 hex digits (the reference's length), the first 12 the millisecond
 * clock and the last 12 random (48 bits; a clash would need two users in the same millisecond, and the primary
 * key refuses it). Time first, as in the reference's ids (MongoDB ObjectIds) and our event ids: users written one
 * after another land together at the end of every index keyed by user id (the primary key, five partial indexes
 * of users, most ranges of user_search_terms). With fully random ids each user of a bulk import dirtied its own
 * page in each of those indexes: at 100,000 users that was most of the import's time on SQLite (600 µs of CPU per
 * user against 260).
 */
export function newUserId(provider: string, now = Date.now()): string {
  return `${provider}|${now.toString(16).padStart(12, '0')}${pooledRandomBytes(6).toString('hex')}`;
}

export function randomHex(length: number): string {
  return randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);
}
