/**
 * `firebase_scrypt`: Firebase Authentication's modified scrypt (beyond the reference, for teams leaving Firebase),
 * verified by the firebase-scrypt package. A user of `firebase auth:export` has a base64 `passwordHash` and
 * `salt`; the project's hash parameters (console: Authentication → Users → ⋮ → Password hash parameters) give
 * `base64_signer_key`, `base64_salt_separator`, `rounds` and `mem_cost`. In the import file:
 *
 *   "custom_password_hash": { "algorithm": "firebase_scrypt",
 *     "hash": { "value": <passwordHash>, "encoding": "base64", "key": { "value": <base64_signer_key>, "encoding": "base64" } },
 *     "salt": { "value": <salt>, "encoding": "base64" },
 *     "salt_separator": { "value": <base64_salt_separator>, "encoding": "base64" },
 *     "rounds": 8, "mem_cost": 14 }
 *
 * The signer key is the project's secret: index.ts seals the stored form.
 */
import firebaseScrypt from 'firebase-scrypt';
import { accepted, b64, bytesOf, hashEncoding, isRefusal, refused, type ForeignHashAlgorithm, type StoredHash } from './algorithm.js';

export interface FirebaseScryptHash extends StoredHash {
  hash: string;
  salt: string;
  signer_key: string;
  salt_separator: string;
  rounds: number;
  mem_cost: number;
}

/** Firebase projects use rounds 8 and mem_cost 14; larger values exceed what node:crypto's scrypt allows here. */
const MAX_ROUNDS = 8;
const MAX_MEM_COST = 14;

export const firebaseScryptAlgorithm: ForeignHashAlgorithm<FirebaseScryptHash> = {
  name: 'firebase_scrypt',
  accept(input) {
    const encoding = hashEncoding(input, ['base64'], true);
    if (isRefusal(encoding)) return encoding;
    const hash = bytesOf(input.hash.value, encoding, 'hash.value');
    if (isRefusal(hash)) return hash;
    if (!input.hash.key) return refused('OBJECT_REQUIRED', 'hash.key', 'hash.key (the project\'s base64_signer_key) is required for firebase_scrypt');
    const signerKey = bytesOf(input.hash.key.value, input.hash.key.encoding ?? 'base64', 'hash.key.value');
    if (isRefusal(signerKey)) return signerKey;
    if (!input.salt) return refused('OBJECT_REQUIRED', 'salt', "salt (the user's salt from the export) is required for firebase_scrypt");
    const salt = bytesOf(input.salt.value, input.salt.encoding ?? 'base64', 'salt.value');
    if (isRefusal(salt)) return salt;
    if (!input.salt_separator) return refused('OBJECT_REQUIRED', 'salt_separator', "salt_separator (the project's base64_salt_separator) is required for firebase_scrypt");
    const separator = bytesOf(input.salt_separator.value, input.salt_separator.encoding ?? 'base64', 'salt_separator.value');
    if (isRefusal(separator)) return separator;
    const { rounds, mem_cost: memCost } = input;
    if (rounds === undefined) return refused('OBJECT_REQUIRED', 'rounds', 'rounds is required for firebase_scrypt');
    if (memCost === undefined) return refused('OBJECT_REQUIRED', 'mem_cost', 'mem_cost is required for firebase_scrypt');
    if (rounds < 1 || rounds > MAX_ROUNDS) return refused('MAXIMUM', 'rounds', `rounds must be from 1 to ${MAX_ROUNDS}`);
    if (memCost < 1 || memCost > MAX_MEM_COST) return refused('MAXIMUM', 'mem_cost', `mem_cost must be from 1 to ${MAX_MEM_COST}`);
    return accepted({
      algorithm: 'firebase_scrypt',
      hash: b64(hash),
      salt: b64(salt),
      signer_key: b64(signerKey),
      salt_separator: b64(separator),
      rounds,
      mem_cost: memCost,
    });
  },
  verify(stored, password) {
    const scrypt = new firebaseScrypt.FirebaseScrypt({ memCost: stored.mem_cost, rounds: stored.rounds, saltSeparator: stored.salt_separator, signerKey: stored.signer_key });
    return scrypt.verify(password, stored.salt, stored.hash);
  },
};
