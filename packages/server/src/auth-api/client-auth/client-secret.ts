/**
 * client_secret_post and client_secret_basic: the same secret, sent in the body or in `Authorization: Basic`.
 * Compared in constant time over SHA-256 digests, so neither the content nor the length of the secret leaks.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { clientSecretContext } from '../../tenancy/bootstrap.js';
import { InvalidClient } from '../errors.js';
import type { ClientAuthenticator } from './types.js';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Digests of stored secrets, per client object: the config cache hands out one object per client for a few
 * seconds, so each secret is unsealed once per cache period instead of on every request.
 */
const storedDigests = new WeakMap<object, Buffer>();

function verifySecret(basic: boolean): ClientAuthenticator {
  return async ({ client, presented, services }) => {
    if (!client.client_secret_sealed || presented.secret === undefined) throw new InvalidClient(basic);
    let stored = storedDigests.get(client);
    if (!stored) {
      stored = digest(services.sealer.unseal(client.client_secret_sealed, clientSecretContext(client.client_id)));
      storedDigests.set(client, stored);
    }
    if (!timingSafeEqual(digest(presented.secret), stored)) throw new InvalidClient(basic);
  };
}

export const clientSecretPost: ClientAuthenticator = verifySecret(false);
export const clientSecretBasic: ClientAuthenticator = verifySecret(true);
