import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSealer, SealError } from './sealing.js';

describe('sealing secrets at rest', () => {
  const sealer = createSealer(randomBytes(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = sealer.seal('s3cret-value', 'client_secret:abc');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('s3cret');
    expect(sealer.unseal(sealed, 'client_secret:abc')).toBe('s3cret-value');
    expect(sealer.seal('s3cret-value', 'client_secret:abc')).not.toBe(sealed); // fresh nonce each time
  });

  it('refuses another context, another key, or a tampered value, with one message', () => {
    const sealed = sealer.seal('value', 'ctx:a');
    expect(() => sealer.unseal(sealed, 'ctx:b')).toThrow(SealError);
    expect(() => createSealer(randomBytes(32)).unseal(sealed, 'ctx:a')).toThrow(SealError);
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[2]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    parts[2] = flipped.toString('base64url');
    expect(() => sealer.unseal(parts.join('.'), 'ctx:a')).toThrow(/cannot unseal/);
    expect(() => sealer.unseal('garbage', 'ctx:a')).toThrow(/not a sealed value/);
  });

  it('needs a 32-byte key', () => {
    expect(() => createSealer(randomBytes(16))).toThrow(/32 bytes/);
  });
});
