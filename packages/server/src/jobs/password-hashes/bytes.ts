/**
 * The byte handling every foreign algorithm shares: the encodings an import file may give hashes, salts and
 * keys in, the password as bytes in the encoding it was hashed from, the salt put before or after it, digests
 * by name, and a constant-time comparison. Digests come from node:crypto; MD4 and Whirlpool, which OpenSSL 3
 * keeps in its legacy provider (off in Node), from hash-wasm.
 */
import { createHash, createHmac, pbkdf2 as nodePbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { createHMAC, createMD4, createWhirlpool, md4, pbkdf2 as wasmPbkdf2, whirlpool } from 'hash-wasm';

export const BYTE_ENCODINGS = ['base64', 'hex', 'utf8'] as const;
export type ByteEncoding = (typeof BYTE_ENCODINGS)[number];

export const PASSWORD_ENCODINGS = ['ascii', 'utf8', 'utf16le', 'ucs2', 'latin1', 'binary'] as const;
export type PasswordEncoding = (typeof PASSWORD_ENCODINGS)[number];

export const SALT_POSITIONS = ['prefix', 'suffix'] as const;
export type SaltPosition = (typeof SALT_POSITIONS)[number];

/** The digests the reference lists for HMAC and PBKDF2, under one name each. */
export const DIGESTS = ['md4', 'md5', 'ripemd160', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'whirlpool'] as const;
export type Digest = (typeof DIGESTS)[number];

export const DIGEST_LENGTH: Record<Digest, number> = {
  md4: 16,
  md5: 16,
  ripemd160: 20,
  sha1: 20,
  sha224: 28,
  sha256: 32,
  sha384: 48,
  sha512: 64,
  whirlpool: 64,
};

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
/** Standard or URL-safe alphabet, padding optional. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The bytes `value` stands for in `encoding` (upper- or lower-case hex; standard or URL-safe base64), or undefined. */
export function decodeBytes(value: string, encoding: ByteEncoding): Buffer | undefined {
  switch (encoding) {
    case 'utf8':
      return Buffer.from(value, 'utf8');
    case 'hex':
      return HEX.test(value) ? Buffer.from(value, 'hex') : undefined;
    case 'base64':
      // Node's decoder takes both alphabets; a length of 4n+1 cannot be base64.
      return BASE64.test(value) && value.replace(/=+$/, '').length % 4 !== 1 ? Buffer.from(value, 'base64') : undefined;
  }
}

/** The password as the bytes it was hashed from (login forms give UTF-8 text). */
export function passwordBytes(password: string, encoding: PasswordEncoding = 'utf8'): Buffer {
  return Buffer.from(password, encoding);
}

export function salted(password: Buffer, salt: Buffer | undefined, position: SaltPosition = 'prefix'): Buffer {
  if (!salt || salt.length === 0) return password;
  return position === 'prefix' ? Buffer.concat([salt, password]) : Buffer.concat([password, salt]);
}

/** Equal bytes, compared in constant time. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const WASM_DIGESTS = { md4: { once: md4, create: createMD4 }, whirlpool: { once: whirlpool, create: createWhirlpool } } as const;

function wasm(name: Digest): (typeof WASM_DIGESTS)[keyof typeof WASM_DIGESTS] | undefined {
  return name === 'md4' || name === 'whirlpool' ? WASM_DIGESTS[name] : undefined;
}

export async function digest(name: Digest, data: Buffer): Promise<Buffer> {
  const legacy = wasm(name);
  if (legacy) return Buffer.from(await legacy.once(data), 'hex');
  return createHash(name).update(data).digest();
}

export async function hmac(name: Digest, key: Buffer, data: Buffer): Promise<Buffer> {
  const legacy = wasm(name);
  if (!legacy) return createHmac(name, key).update(data).digest();
  const mac = await createHMAC(legacy.create(), key);
  mac.init();
  mac.update(data);
  return Buffer.from(mac.digest('binary'));
}

const nodePbkdf2Async = promisify(nodePbkdf2);

/** PBKDF2 (node:crypto on the thread pool; MD4 and Whirlpool in WebAssembly, on the event loop). */
export async function pbkdf2(name: Digest, password: Buffer, salt: Buffer, iterations: number, length: number): Promise<Buffer> {
  const legacy = wasm(name);
  if (!legacy) return nodePbkdf2Async(password, salt, iterations, length, name);
  const derived = await wasmPbkdf2({ password, salt, iterations, hashLength: length, hashFunction: legacy.create(), outputType: 'binary' });
  return Buffer.from(derived);
}
