#!/usr/bin/env node
/**
 * Writes a users file for `POST /api/v2/jobs/users-imports` / `gatehouse users import`: a JSON array of COUNT
 * users (default 1,000,000) in the reference's schema, streamed to disk (flat memory at any count).
 *
 *   node bench/generate-users.js FILE [COUNT] [PREFIX]
 *
 * Every user has a profile, metadata and a password hash. The hashes are precomputed once, a small pool of
 * them (bcrypt at cost 10, salted MD5, PBKDF2-SHA256, SHA-256, each of a known password) reused round-robin,
 * so that an import measures the server's work and not the generator's hashing; user i's password is
 * `passwordOf(i)`, so a sample of imported users can log in.
 */
import { createHash, pbkdf2Sync, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { bcrypt } from 'hash-wasm';

/** How many distinct precomputed hashes. */
const POOL = 8;

/** @param {number} slot */
const poolPassword = (slot) => `bench-password-${slot}-Aa1!`;

/** The password of user `i` of a generated file. @param {number} i */
export function passwordOf(i) {
  return poolPassword(i % POOL);
}

/** The algorithm of user `i`'s hash. @param {number} i */
export function algorithmOf(i) {
  return /** @type {const} */ (['bcrypt', 'md5', 'pbkdf2', 'sha256'])[i % POOL % 4];
}

/** @returns {Promise<Record<string, unknown>[]>} one custom_password_hash per pool slot */
async function hashPool() {
  /** @type {Record<string, unknown>[]} */
  const pool = [];
  for (let slot = 0; slot < POOL; slot++) {
    const password = poolPassword(slot);
    const salt = randomBytes(12);
    switch (algorithmOf(slot)) {
      case 'bcrypt':
        pool.push({ algorithm: 'bcrypt', hash: { value: await bcrypt({ password, salt: randomBytes(16), costFactor: 10, outputType: 'encoded' }) } });
        break;
      case 'md5':
        pool.push({ algorithm: 'md5', hash: { value: createHash('md5').update(salt).update(password).digest('hex'), encoding: 'hex' }, salt: { value: salt.toString('base64'), encoding: 'base64' } });
        break;
      case 'pbkdf2': {
        const b64 = (/** @type {Buffer} */ b) => b.toString('base64').replace(/=+$/, '');
        pool.push({ algorithm: 'pbkdf2', hash: { value: `$pbkdf2-sha256$i=10000,l=32$${b64(salt)}$${b64(pbkdf2Sync(password, salt, 10_000, 32, 'sha256'))}` } });
        break;
      }
      default:
        pool.push({ algorithm: 'sha256', hash: { value: createHash('sha256').update(password).digest('base64'), encoding: 'base64' } });
    }
  }
  return pool;
}

/**
 * Writes `count` users to `file`; emails are `<prefix>-<i>@bench.example`.
 * @param {string} file
 * @param {number} count
 * @param {string} [prefix]
 * @returns {Promise<number>} bytes written
 */
export async function writeUsersFile(file, count, prefix = 'imported') {
  const pool = await hashPool();
  const out = createWriteStream(file);
  let bytes = 0;
  /** @param {string} text */
  const write = async (text) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('[');
  for (let i = 0; i < count; i++) {
    const user = {
      email: `${prefix}-${i}@bench.example`,
      email_verified: i % 3 !== 0,
      given_name: 'Bench',
      family_name: `User ${i}`,
      name: `Bench User ${i}`,
      user_metadata: { locale: i % 2 ? 'en' : 'fr', signup: 2020 + (i % 5) },
      app_metadata: { plan: i % 10 === 0 ? 'pro' : 'free', n: i },
      custom_password_hash: pool[i % POOL],
    };
    await write(`${i ? ',' : ''}\n${JSON.stringify(user)}`);
  }
  await write('\n]\n');
  out.end();
  await once(out, 'finish');
  return bytes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, rawCount = '1000000', prefix = 'imported'] = process.argv.slice(2);
  if (!file || !/^\d+$/.test(rawCount)) {
    console.error('usage: node bench/generate-users.js FILE [COUNT] [PREFIX]');
    process.exit(2);
  }
  const bytes = await writeUsersFile(file, Number(rawCount), prefix);
  console.log(`${file}: ${Number(rawCount).toLocaleString('en-US')} users, ${(bytes / 1e6).toFixed(1)} MB`);
}
