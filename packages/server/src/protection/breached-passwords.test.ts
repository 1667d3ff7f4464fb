import { describe, expect, it } from 'vitest';
import { isBreachedPassword } from './breached-passwords.js';

describe('the breached-password corpus', () => {
  it('knows the common passwords of the password policy and the bundled list, whatever their case', () => {
    for (const leaked of ['password', 'P@ssw0rd', 'qwerty123', 'Summer2023', 'welcome2024', '1q2w3e4r5t6y', 'Letmein!']) {
      expect(isBreachedPassword(leaked), leaked).toBe(true);
    }
  });

  it('does not flag strong or unusual passwords, nor empty and over-long input', () => {
    for (const fresh of ['correct horse battery staple', 'Str0ng!Passw0rd-gatehouse', 'x7#Lq9!vT2', '', 'a'.repeat(2000)]) {
      expect(isBreachedPassword(fresh), fresh).toBe(false);
    }
  });
});
