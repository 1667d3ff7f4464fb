/**
 * Every foreign algorithm against published test vectors (RFC 1320/1321/3174/6234 digests, RFC 2202/4231 HMACs,
 * RFC 6070/7914 PBKDF2 and scrypt, the reference's own examples, Firebase's scrypt README), or against hashes
 * made by an independent implementation (hash-wasm's argon2 and bcrypt): the right password verifies after a
 * round trip through sealing, a wrong one does not, and what the reference's rules forbid is refused at import.
 */
import { createHash, randomBytes } from 'node:crypto';
import { argon2i, argon2id, bcrypt as wasmBcrypt, md4, whirlpool } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { createSealer } from '../../crypto/sealing.js';
import { acceptBcryptPasswordHash, acceptCustomPasswordHash, FOREIGN_ALGORITHMS, isForeignHash, redactUser, sealForeignHash, verifyForeignHash, type CustomPasswordHash } from './index.js';

const sealer = createSealer(randomBytes(32));
const TENANT = 'ten_vectors';

async function verifies(input: CustomPasswordHash, password: string): Promise<boolean> {
  const accepted = acceptCustomPasswordHash(input);
  if (!accepted.ok) throw new Error(`refused: ${JSON.stringify(accepted.error)}`);
  const column = sealForeignHash(sealer, TENANT, accepted.stored);
  expect(isForeignHash(column)).toBe(true);
  return verifyForeignHash(sealer, TENANT, column, password);
}

async function check(input: CustomPasswordHash, password: string): Promise<void> {
  expect(await verifies(input, password), `${input.algorithm}: the right password`).toBe(true);
  expect(await verifies(input, `${password}x`), `${input.algorithm}: a wrong password`).toBe(false);
}

function refusal(input: unknown): { code: string; path: string; message: string } {
  const accepted = acceptCustomPasswordHash(input as CustomPasswordHash);
  if (accepted.ok) throw new Error(`accepted: ${JSON.stringify(input)}`);
  return accepted.error;
}

describe('foreign password hashes', () => {
  it('knows the reference algorithms and Firebase scrypt', () => {
    expect(FOREIGN_ALGORITHMS).toEqual(['argon2', 'bcrypt', 'firebase_scrypt', 'hmac', 'ldap', 'md4', 'md5', 'pbkdf2', 'scrypt', 'sha1', 'sha256', 'sha512']);
  });

  it('md4, md5, sha1, sha256, sha512: RFC vectors, in hex (either case) and base64', async () => {
    await check({ algorithm: 'md4', hash: { value: 'a448017aaf21d8525fc10ae87aa6729d', encoding: 'hex' } }, 'abc');
    await check({ algorithm: 'md4', hash: { value: Buffer.from('d9130a8164549fe818874806e1c7014b', 'hex').toString('base64'), encoding: 'base64' } }, 'message digest');
    await check({ algorithm: 'md5', hash: { value: 'F96B697D7CB7938D525A2F31AAF161D0', encoding: 'hex' } }, 'message digest');
    await check({ algorithm: 'sha1', hash: { value: 'a9993e364706816aba3e25717850c26c9cd0d89d', encoding: 'hex' } }, 'abc');
    await check({ algorithm: 'sha256', hash: { value: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', encoding: 'hex' } }, 'abc');
    await check(
      {
        algorithm: 'sha512',
        hash: {
          value: Buffer.from(
            'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
            'hex',
          ).toString('base64url'),
          encoding: 'base64',
        },
      },
      'abc',
    );
  });

  it('salt positions and encodings: the reference example MD5("salt" + "password"), and a suffix salt in hex', async () => {
    await check({ algorithm: 'md5', hash: { value: '67A1E09BB1F83F5007DC119C14D663AA', encoding: 'hex' }, salt: { value: 'salt', position: 'prefix' } }, 'password');
    // Prefix is the default position, utf8 the default salt encoding.
    await check({ algorithm: 'md5', hash: { value: '67a1e09bb1f83f5007dc119c14d663aa', encoding: 'hex' }, salt: { value: 'salt' } }, 'password');
    const suffixed = createHash('sha256').update('password').update(Buffer.from('c0ffee', 'hex')).digest('hex');
    await check({ algorithm: 'sha256', hash: { value: suffixed, encoding: 'hex' }, salt: { value: 'C0FFEE', encoding: 'hex', position: 'suffix' } }, 'password');
    // The same hash with the salt on the wrong side does not verify.
    expect(await verifies({ algorithm: 'sha256', hash: { value: suffixed, encoding: 'hex' }, salt: { value: 'c0ffee', encoding: 'hex', position: 'prefix' } }, 'password')).toBe(false);
  });

  it('password encodings: a hash of the UTF-16LE password verifies only with encoding ucs2/utf16le', async () => {
    const hash = createHash('sha1').update(Buffer.from('pässword', 'utf16le')).digest('hex');
    await check({ algorithm: 'sha1', hash: { value: hash, encoding: 'hex' }, password: { encoding: 'utf16le' } }, 'pässword');
    await check({ algorithm: 'sha1', hash: { value: hash, encoding: 'hex' }, password: { encoding: 'ucs2' } }, 'pässword');
    expect(await verifies({ algorithm: 'sha1', hash: { value: hash, encoding: 'hex' } }, 'pässword')).toBe(false);
  });

  it('hmac: RFC 2202 and RFC 4231 vectors, keys in utf8 and hex, and MD4/Whirlpool digests', async () => {
    const data = 'what do ya want for nothing?';
    await check({ algorithm: 'hmac', hash: { value: '750c783e6ab0b503eaa86e310a5db738', encoding: 'hex', digest: 'md5', key: { value: 'Jefe' } } }, data);
    await check({ algorithm: 'hmac', hash: { value: 'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79', encoding: 'hex', digest: 'sha1', key: { value: '4a656665', encoding: 'hex' } } }, data);
    await check(
      { algorithm: 'hmac', hash: { value: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', encoding: 'hex', digest: 'sha256', key: { value: 'SmVmZQ==', encoding: 'base64' } } },
      data,
    );
    // MD4 and Whirlpool have no HMAC vectors in the RFCs: check against HMAC built by its definition (RFC 2104) on the bare digests.
    for (const [digest, blockSize, hash] of [
      ['md4', 64, md4],
      ['whirlpool', 64, whirlpool],
    ] as const) {
      const key = Buffer.from('pepper');
      const pad = (byte: number) => Buffer.from(Buffer.concat([key, Buffer.alloc(blockSize - key.length)]).map((b) => b ^ byte));
      const inner = Buffer.from(await hash(Buffer.concat([pad(0x36), Buffer.from('NaCl' + 'hunter2')])), 'hex');
      const mac = await hash(Buffer.concat([pad(0x5c), inner]));
      await check({ algorithm: 'hmac', hash: { value: mac, encoding: 'hex', digest, key: { value: 'pepper' } }, salt: { value: 'NaCl' } }, 'hunter2');
    }
  });

  it('ldap: {SHA}, {MD5} of "password" as slappasswd writes them, and salted {SSHA512}', async () => {
    await check({ algorithm: 'ldap', hash: { value: '{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=' } }, 'password');
    await check({ algorithm: 'ldap', hash: { value: '{md5}X03MO1qnZdYdgyfeuILPmQ==', encoding: 'utf8' } }, 'password');
    const salt = Buffer.from('0123456789abcdef', 'hex');
    const ssha512 = Buffer.concat([createHash('sha512').update('secret').update(salt).digest(), salt]).toString('base64');
    await check({ algorithm: 'ldap', hash: { value: `{SSHA512}${ssha512}` } }, 'secret');
  });

  it('bcrypt: the reference example ("hello"), $2y$ from an independent implementation, and a salted bcrypt', async () => {
    await check({ algorithm: 'bcrypt', hash: { value: '$2b$10$nFguVi9LsCAcvTZFKQlRKeLVydo8ETv483lkNsSFI/Wl1Rz1Ypo1K' } }, 'hello');
    const made = await wasmBcrypt({ password: 'pepper-and-salt', salt: randomBytes(16), costFactor: 4, outputType: 'encoded' });
    await check({ algorithm: 'bcrypt', hash: { value: made.replace(/^\$2[ab]\$/, '$2y$') } }, 'pepper-and-salt');
    const salted = await wasmBcrypt({ password: 'NaClpepper', salt: randomBytes(16), costFactor: 4, outputType: 'encoded' });
    await check({ algorithm: 'bcrypt', hash: { value: salted }, salt: { value: 'NaCl', position: 'prefix' } }, 'pepper');
    // The password_hash field of an import file is bcrypt too.
    const field = acceptBcryptPasswordHash('$2b$10$nFguVi9LsCAcvTZFKQlRKeLVydo8ETv483lkNsSFI/Wl1Rz1Ypo1K');
    expect(field.ok).toBe(true);
    if (field.ok) expect(await verifyForeignHash(sealer, TENANT, sealForeignHash(sealer, TENANT, field.stored), 'hello')).toBe(true);
    expect(acceptBcryptPasswordHash('$2x$10$nFguVi9LsCAcvTZFKQlRKeLVydo8ETv483lkNsSFI/Wl1Rz1Ypo1K').ok).toBe(false);
  });

  it('argon2: argon2id and argon2i PHC strings made by hash-wasm', async () => {
    const id = await argon2id({ password: 'correct horse', salt: randomBytes(16), parallelism: 1, iterations: 2, memorySize: 4096, hashLength: 32, outputType: 'encoded' });
    await check({ algorithm: 'argon2', hash: { value: id } }, 'correct horse');
    const i = await argon2i({ password: 'battery staple', salt: randomBytes(16), parallelism: 2, iterations: 3, memorySize: 8192, hashLength: 32, outputType: 'encoded' });
    await check({ algorithm: 'argon2', hash: { value: i, encoding: 'utf8' } }, 'battery staple');
  });

  it('pbkdf2: RFC 6070 (SHA-1) and RFC 7914 (SHA-256) vectors as PHC strings, digest aliases, and the default i and l', async () => {
    await check({ algorithm: 'pbkdf2', hash: { value: '$pbkdf2-sha1$i=4096,l=20$c2FsdA$SwB5AbdlSJq+rUnZJvch0GWkKcE' } }, 'password');
    await check({ algorithm: 'pbkdf2', hash: { value: '$pbkdf2-RSA-SHA1$i=4096,l=20$c2FsdA$SwB5AbdlSJq+rUnZJvch0GWkKcE', encoding: 'utf8' } }, 'password');
    await check(
      { algorithm: 'pbkdf2', hash: { value: '$pbkdf2-sha256$i=1,l=64$c2FsdA$VawEblbjCJ/sFpHCJUS2BflBhSFt3gRl5oudV8INrLxJypzM8Xm2RZkWZLOdd+8xfHG4RbHjC9UJESBB06GXgw' } },
      'passwd',
    );
    const { pbkdf2Sync } = await import('node:crypto');
    const defaults = pbkdf2Sync('hunter2', Buffer.from('pepper'), 100_000, 64, 'sha512').toString('base64').replace(/=+$/, '');
    await check({ algorithm: 'pbkdf2', hash: { value: `$pbkdf2-sha512$${Buffer.from('pepper').toString('base64').replace(/=+$/, '')}$${defaults}` } }, 'hunter2');
    const { pbkdf2: wasmPbkdf2, createMD4 } = await import('hash-wasm');
    const md4Key = await wasmPbkdf2({ password: 'md4 user', salt: 'NaCl', iterations: 1000, hashLength: 32, hashFunction: createMD4(), outputType: 'binary' });
    await check({ algorithm: 'pbkdf2', hash: { value: `$pbkdf2-md4$i=1000,l=32$TmFDbA$${Buffer.from(md4Key).toString('base64').replace(/=+$/, '')}` } }, 'md4 user');
  });

  it('scrypt: the RFC 7914 vector (N=1024, r=8, p=16)', async () => {
    await check(
      {
        algorithm: 'scrypt',
        hash: { value: 'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640', encoding: 'hex' },
        salt: { value: 'NaCl' },
        keylen: 64,
        cost: 1024,
        blockSize: 8,
        parallelization: 16,
      },
      'password',
    );
  });

  it('firebase_scrypt: the vector of Firebase\'s scrypt README, with the project parameters of an export', async () => {
    await check(
      {
        algorithm: 'firebase_scrypt',
        hash: {
          value: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
          encoding: 'base64',
          key: { value: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==', encoding: 'base64' },
        },
        salt: { value: '42xEC+ixf3L2lw==', encoding: 'base64' },
        salt_separator: { value: 'Bw==', encoding: 'base64' },
        rounds: 8,
        mem_cost: 14,
      },
      'user1password',
    );
  });

  it('refuses what the reference rules out, naming the field', () => {
    expect(refusal({ algorithm: 'rot13', hash: { value: 'x' } })).toMatchObject({ code: 'ENUM_MISMATCH', path: 'custom_password_hash.algorithm' });
    expect(refusal({ algorithm: 'md5', hash: { value: '67a1e09bb1f83f5007dc119c14d663aa' } })).toMatchObject({ code: 'ENUM_MISMATCH', path: 'custom_password_hash.hash.encoding' });
    expect(refusal({ algorithm: 'md5', hash: { value: 'zz', encoding: 'hex' } })).toMatchObject({ code: 'FORMAT', path: 'custom_password_hash.hash.value' });
    expect(refusal({ algorithm: 'sha256', hash: { value: 'abcd', encoding: 'hex' } })).toMatchObject({ code: 'FORMAT', message: expect.stringContaining('32 bytes') });
    expect(refusal({ algorithm: 'hmac', hash: { value: '00', encoding: 'hex', key: { value: 'k' } } })).toMatchObject({ code: 'OBJECT_REQUIRED', path: 'custom_password_hash.hash.digest' });
    expect(refusal({ algorithm: 'hmac', hash: { value: '00', encoding: 'hex', digest: 'sha256' } })).toMatchObject({ code: 'OBJECT_REQUIRED', path: 'custom_password_hash.hash.key' });
    expect(refusal({ algorithm: 'ldap', hash: { value: '{CRYPT}abcdefgh' } })).toMatchObject({ code: 'ENUM_MISMATCH', message: expect.stringContaining('CRYPT') });
    expect(refusal({ algorithm: 'ldap', hash: { value: '{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=' }, salt: { value: 's' } })).toMatchObject({ code: 'NOT_PASSED', path: 'custom_password_hash.salt' });
    expect(refusal({ algorithm: 'argon2', hash: { value: '$argon2id$nope' } })).toMatchObject({ code: 'FORMAT' });
    expect(refusal({ algorithm: 'argon2', hash: { value: '$argon2id$v=19$m=4096,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA', encoding: 'hex' } })).toMatchObject({ code: 'ENUM_MISMATCH' });
    expect(refusal({ algorithm: 'pbkdf2', hash: { value: '$pbkdf2-mdc2$i=1,l=16$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA' } })).toMatchObject({ code: 'ENUM_MISMATCH', message: expect.stringContaining('mdc2') });
    expect(refusal({ algorithm: 'pbkdf2', hash: { value: '$pbkdf2-sha1$i=1,l=20$c2FsdA$AAAA' } })).toMatchObject({ code: 'FORMAT', message: expect.stringContaining('l=20') });
    expect(refusal({ algorithm: 'bcrypt', hash: { value: '$2$10$nFguVi9LsCAcvTZFKQlRKeLVydo8ETv483lkNsSFI/Wl1Rz1Ypo1K' } })).toMatchObject({ code: 'FORMAT' });
    expect(refusal({ algorithm: 'scrypt', hash: { value: '00', encoding: 'hex' } })).toMatchObject({ code: 'OBJECT_REQUIRED', path: 'custom_password_hash.keylen' });
    expect(refusal({ algorithm: 'scrypt', hash: { value: '00', encoding: 'hex' }, keylen: 1, cost: 1000 })).toMatchObject({ code: 'FORMAT', path: 'custom_password_hash.cost' });
    expect(refusal({ algorithm: 'scrypt', hash: { value: '00', encoding: 'hex' }, keylen: 1, cost: 2 ** 20, blockSize: 8 })).toMatchObject({ code: 'MAXIMUM' });
    expect(refusal({ algorithm: 'firebase_scrypt', hash: { value: 'AAAA' }, salt: { value: 'AAAA' } })).toMatchObject({ code: 'OBJECT_REQUIRED', path: 'custom_password_hash.hash.key' });
  });

  it('never opens another tenant\'s sealed hash, nor a tampered one', async () => {
    const accepted = acceptCustomPasswordHash({ algorithm: 'sha1', hash: { value: 'a9993e364706816aba3e25717850c26c9cd0d89d', encoding: 'hex' } });
    if (!accepted.ok) throw new Error('refused');
    const column = sealForeignHash(sealer, TENANT, accepted.stored);
    expect(column).not.toContain('a9993e36');
    expect(await verifyForeignHash(sealer, 'ten_other', column, 'abc')).toBe(false);
    expect(await verifyForeignHash(sealer, TENANT, column.slice(0, -3) + 'AAA', 'abc')).toBe(false);
    expect(await verifyForeignHash(createSealer(randomBytes(32)), TENANT, column, 'abc')).toBe(false);
  });

  it('redacts hashes, keys and salts of a refused user, whatever its shape', () => {
    expect(
      redactUser({
        email: 'a@example.com',
        password_hash: '$2b$10$x',
        custom_password_hash: { algorithm: 'hmac', hash: { value: 'h', digest: 'sha1', key: { value: 'secret' } }, salt: { value: 's' }, salt_separator: 'Bw==' },
      }),
    ).toEqual({
      email: 'a@example.com',
      password_hash: '*****',
      custom_password_hash: { algorithm: 'hmac', hash: { value: '*****', digest: 'sha1', key: '*****' }, salt: { value: '*****' }, salt_separator: '*****' },
    });
    expect(redactUser('not an object')).toBe('not an object');
    expect(redactUser({ custom_password_hash: { hash: 'plain' } })).toEqual({ custom_password_hash: { hash: '*****' } });
  });
});
