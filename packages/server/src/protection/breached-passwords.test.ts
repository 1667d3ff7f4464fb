import { describe, expect, it } from 'vitest';
import { breachedCorpusSize, isBreachedPassword } from './breached-passwords.js';

describe('the breached-password corpus', () => {
  it('is a real corpus (the breach-derived list of @zxcvbn-ts/language-common), not a handful', () => {
    expect(breachedCorpusSize()).toBeGreaterThan(40_000);
  });

  it('knows the common passwords of the password policy and the breach corpus, whatever their case', () => {
    for (const leaked of ['password', 'P@ssw0rd', 'qwerty123', 'Trustno1', 'monkey123', '1q2w3e4r5t6y', 'IloveYou']) {
      expect(isBreachedPassword(leaked), leaked).toBe(true);
    }
  });

  it('does not flag strong or unusual passwords, nor empty and over-long input', () => {
    for (const fresh of ['correct horse battery staple', 'Str0ng!Passw0rd-gatehouse', 'x7#Lq9!vT2', '', 'a'.repeat(2000)]) {
      expect(isBreachedPassword(fresh), fresh).toBe(false);
    }
  });
});
