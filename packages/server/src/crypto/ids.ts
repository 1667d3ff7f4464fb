/** Identifiers in the wire formats of design.md "Data": prefixes plus CSPRNG alphanumerics. */
import { randomBytes } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Bytes below this are used (248 = 4 × 62), so `byte % 62` is uniform; the rest are drawn again. */
const UNBIASED_LIMIT = 248;

/**
 * `length` characters drawn uniformly from [A-Za-z0-9]: random bytes in one call, by rejection (an id per event
 * of a bulk import made randomInt's one call per character the costliest part of writing an event).
 */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length + 8)) {
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

export function randomHex(length: number): string {
  return randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);
}
