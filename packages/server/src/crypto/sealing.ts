/**
 * Secrets at rest (client secrets, private signing keys, webhook credentials) are sealed with the master key:
 * AES-256-GCM with a fresh 96-bit nonce, and the secret's purpose bound in as associated data, so a sealed value
 * copied into another column or another tenant's row does not open there.
 * Format: `v1.<nonce>.<ciphertext>.<tag>`, each part base64url.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export class SealError extends Error {
  override name = 'SealError';
}

export interface Sealer {
  /** `context` names what the secret is for, e.g. `client_secret:<client_id>`. */
  seal(plaintext: string, context: string): string;
  unseal(sealed: string, context: string): string;
}

export function createSealer(masterKey: Buffer): Sealer {
  if (masterKey.length !== 32) throw new SealError('the master key must be 32 bytes');
  return {
    seal(plaintext, context) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', masterKey, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', nonce, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    unseal(sealed, context) {
      const [version, nonce, ciphertext, tag] = sealed.split('.');
      if (version !== 'v1' || nonce === undefined || ciphertext === undefined || tag === undefined) {
        throw new SealError('not a sealed value');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        // Never say more: a wrong key and a tampered value must look the same.
        throw new SealError('cannot unseal: wrong master key, wrong context, or tampered value');
      }
    },
  };
}
