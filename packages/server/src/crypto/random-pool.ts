/**
 * Random bytes for identifiers, drawn from a pool filled by the CSPRNG a few kilobytes at a time. Each
 * randomBytes call costs about 3 µs whatever its size, and a bulk import makes two ids per user (the user's and
 * its event's): filling once per few hundred ids makes that cost vanish. node:crypto's randomUUID keeps a pool
 * the same way. Every byte is handed out once; the pool lives in this process only (cluster workers are separate
 * processes, each with its own).
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * `length` fresh random bytes. The result is a view of the pool, valid until the next call: read it at once
 * (ids do); use node:crypto's randomBytes for anything kept as bytes, and for secrets.
 */
export function pooledRandomBytes(length: number): Buffer {
  if (length > POOL_BYTES) return randomFillSync(Buffer.alloc(length));
  if (offset + length > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + length);
  offset += length;
  return bytes;
}
