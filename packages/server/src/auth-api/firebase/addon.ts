/**
 * `addons.firebase` of an application: the reference's Firebase add-on in its v3 form, a Google service account
 * (`client_email`, `private_key`, `private_key_id`, `lifetime_in_seconds`), whose key signs the Firebase custom
 * tokens POST /delegation hands out (firebase/custom-token.ts).
 *
 * The private key is a credential like a client secret: checked on the way in (an RSA key of at least 2048 bits,
 * as Google issues them), sealed at rest, and write-only: the Management API never shows it (connection secrets
 * here work the same way), and a client written back without it keeps the sealed one. The reference's SDK 2 form
 * (`secret`, a Realtime Database secret signing HS256 tokens) is refused: Firebase has deprecated those secrets,
 * and storing one we would never use would only be a secret kept for nothing.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Sealer } from '../../crypto/sealing.js';

/** Firebase refuses a custom token whose `exp` is more than an hour after its `iat`. */
export const MAX_LIFETIME_SECONDS = 3600;
const MIN_RSA_BITS = 2048;
const SEALED_KEY = 'private_key_sealed';

/** `addons.firebase` as stored: the key sealed, never in clear. */
export interface StoredFirebaseAddon {
  client_email: string;
  private_key_id?: string;
  lifetime_in_seconds?: number;
  private_key_sealed: string;
}

/** What delegation signs with. */
export interface FirebaseServiceAccount {
  clientEmail: string;
  privateKeyId: string | undefined;
  lifetimeSeconds: number;
  privateKey: KeyObject;
}

/** The add-on as sent is wrong; the message names the field, for a 400 in the Management API's shape. */
export class InvalidFirebaseAddon extends Error {
  override name = 'InvalidFirebaseAddon';
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function sealContext(clientId: string): string {
  return `client_addon:${clientId}:firebase.private_key`;
}

// A service account's address; loose on purpose: Google decides what its accounts look like, we only refuse junk.
const EMAIL = /^[^\s@]{1,200}@[^\s@]{1,200}\.[^\s@]{1,60}$/;

/** Parses a PEM private key as an RSA key Firebase accepts; the message never quotes the key. */
function rsaKey(pem: string): KeyObject {
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(pem)) {
    throw new InvalidFirebaseAddon('addons.firebase.private_key must be the PEM private key of the service account ("-----BEGIN PRIVATE KEY-----…", as in its JSON key file)');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new InvalidFirebaseAddon('addons.firebase.private_key is not a readable PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new InvalidFirebaseAddon(`addons.firebase.private_key must be an RSA key (Firebase custom tokens are RS256), not ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) throw new InvalidFirebaseAddon(`addons.firebase.private_key: the RSA key has ${bits} bits; at least ${MIN_RSA_BITS} are required`);
  return key;
}

/**
 * Checks `addons.firebase` as sent and returns it as stored: the key sealed for this client. A body without
 * `private_key` keeps `previous`'s sealed key (a client read and written back), and needs one to keep.
 */
export function storedFirebaseAddon(sealer: Sealer, clientId: string, sent: unknown, previous: unknown): StoredFirebaseAddon {
  const addon = record(sent);
  if (!addon) throw new InvalidFirebaseAddon('addons.firebase must be an object');
  const { secret, client_email, private_key, private_key_id, lifetime_in_seconds, [SEALED_KEY]: _sealed, ...rest } = addon;
  const unknown = Object.keys(rest);
  if (secret !== undefined) {
    throw new InvalidFirebaseAddon(
      'addons.firebase.secret (Firebase SDK 2 tokens signed with a database secret) is not offered; give the service account instead: client_email, private_key and private_key_id from its JSON key file',
    );
  }
  if (unknown.length > 0) throw new InvalidFirebaseAddon(`addons.firebase: unknown properties ${unknown.slice(0, 5).join(', ')}; the add-on takes client_email, private_key, private_key_id and lifetime_in_seconds`);
  if (typeof client_email !== 'string' || !EMAIL.test(client_email)) {
    throw new InvalidFirebaseAddon('addons.firebase.client_email must be the service account\'s email address (client_email in its JSON key file)');
  }
  if (private_key_id !== undefined && (typeof private_key_id !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(private_key_id))) {
    throw new InvalidFirebaseAddon('addons.firebase.private_key_id must be the key\'s id (private_key_id in the JSON key file): printable characters, at most 200');
  }
  if (lifetime_in_seconds !== undefined && (typeof lifetime_in_seconds !== 'number' || !Number.isInteger(lifetime_in_seconds) || lifetime_in_seconds < 1 || lifetime_in_seconds > MAX_LIFETIME_SECONDS)) {
    throw new InvalidFirebaseAddon(`addons.firebase.lifetime_in_seconds must be a whole number from 1 to ${MAX_LIFETIME_SECONDS} (Firebase refuses custom tokens that live longer than an hour)`);
  }
  let sealedKey: string;
  if (private_key !== undefined) {
    if (typeof private_key !== 'string' || private_key.length > 16_384) throw new InvalidFirebaseAddon('addons.firebase.private_key must be a PEM string of at most 16384 characters');
    rsaKey(private_key);
    sealedKey = sealer.seal(private_key, sealContext(clientId));
  } else {
    const kept = record(previous)?.[SEALED_KEY];
    if (typeof kept !== 'string') throw new InvalidFirebaseAddon('addons.firebase.private_key is required (the service account\'s PEM private key)');
    sealedKey = kept;
  }
  return {
    client_email,
    ...(private_key_id !== undefined && { private_key_id }),
    ...(lifetime_in_seconds !== undefined && { lifetime_in_seconds }),
    private_key_sealed: sealedKey,
  };
}

/** `addons` as the Management API shows them: the Firebase key left out (write-only). */
export function withoutFirebaseKey(addons: unknown): unknown {
  const all = record(addons);
  const firebase = record(all?.firebase);
  if (!all || !firebase) return addons;
  const { [SEALED_KEY]: _sealed, private_key: _plain, ...shown } = firebase;
  return { ...all, firebase: shown };
}

/** The service account a client's add-on holds, or undefined when it has none. */
export function firebaseServiceAccount(sealer: Sealer, client: { client_id: string; addons?: unknown }): FirebaseServiceAccount | undefined {
  const firebase = record(record(client.addons)?.firebase);
  const sealed = firebase?.[SEALED_KEY];
  if (!firebase || typeof sealed !== 'string' || typeof firebase.client_email !== 'string') return undefined;
  const stored = firebase as unknown as StoredFirebaseAddon;
  return {
    clientEmail: stored.client_email,
    privateKeyId: stored.private_key_id,
    lifetimeSeconds: stored.lifetime_in_seconds ?? MAX_LIFETIME_SECONDS,
    privateKey: rsaKey(sealer.unseal(sealed, sealContext(client.client_id))),
  };
}
