/** Identifiers in the wire formats of design.md "Data": prefixes plus CSPRNG alphanumerics. */
import { randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters drawn uniformly from [A-Za-z0-9]. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
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
