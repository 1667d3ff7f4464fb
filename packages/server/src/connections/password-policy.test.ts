/** The password policies of database connections, as pure functions. */
import { describe, expect, it } from 'vitest';
import {
  checkPassword,
  COMMON_PASSWORD_COUNT,
  MAX_PASSWORD_LENGTH,
  passwordPolicyText,
  resolvePasswordPolicy,
  type PasswordPolicyName,
  type PasswordPolicyOptions,
} from './password-policy.js';

const policy = (passwordPolicy: PasswordPolicyName, extra: PasswordPolicyOptions = {}): PasswordPolicyOptions => ({ passwordPolicy, ...extra });
const accepted = (password: string, options: PasswordPolicyOptions, info = {}) => checkPassword(password, options, info).ok;

describe('password policies', () => {
  it.each([
    // [policy, accepted, refused]
    ['none', ['a', ' '], ['']],
    ['low', ['abcdef', '123456'], ['abcde', '']],
    ['fair', ['abcDEF12', 'Password1'], ['abcdefgh', 'abcDEFGH', 'abcdef12', 'ABCDEF12', 'aB1', 'abc!@#DE']],
    ['good', ['abcDEF12', 'abcdef1!', 'ABCDEF1!', 'abcDEF!!'], ['abcdef12', 'abcdefgh!', 'aB1!', 'ABCDEFG1']],
    ['excellent', ['abcDEF1234', 'aaBBcc11!!', 'Tr0ub4dor&3'], ['abcDEF123', 'aaaBBcc11!', 'abcdefgh12', 'abcDEF1111']],
  ] as const)('%s accepts %j and refuses %j', (name, good, bad) => {
    for (const password of good) expect(accepted(password, policy(name)), `${name} should accept ${password}`).toBe(true);
    for (const password of bad) expect(accepted(password, policy(name)), `${name} should refuse ${password}`).toBe(false);
  });

  it('defaults to good when no policy (or null) is set', () => {
    expect(resolvePasswordPolicy({}).name).toBe('good');
    expect(resolvePasswordPolicy({ passwordPolicy: null }).name).toBe('good');
    expect(resolvePasswordPolicy(undefined).minLength).toBe(8);
    expect(accepted('abcdefgh', {})).toBe(false);
  });

  it('counts characters, not UTF-16 units, and knows non-ASCII letters', () => {
    expect(accepted('ÉéÉé😀😀', policy('low'))).toBe(true); // 6 characters, 8 UTF-16 units
    expect(accepted('éé😀😀1', policy('low'))).toBe(false);
    expect(accepted('Éléphant1', policy('fair'))).toBe(true);
  });

  it('min_length replaces the length of the policy, up or down', () => {
    expect(accepted('abcDEF12', policy('good', { password_complexity_options: { min_length: 12 } }))).toBe(false);
    expect(accepted('abcDEF12ghij', policy('good', { password_complexity_options: { min_length: 12 } }))).toBe(true);
    expect(accepted('aB1', policy('good', { password_complexity_options: { min_length: 3 } }))).toBe(true);
    expect(accepted('abc', policy('low', { password_complexity_options: { min_length: 4 } }))).toBe(false);
  });

  it(`refuses passwords longer than ${MAX_PASSWORD_LENGTH} characters under any policy`, () => {
    const result = checkPassword('aB1!'.repeat(65), policy('none'));
    expect(result).toMatchObject({ ok: false, name: 'PasswordStrengthError' });
    expect(!result.ok && result.rules.find((r) => r.code === 'lengthAtMost')).toMatchObject({ verified: false });
  });

  it('reports which rules failed, with the policy text', () => {
    const result = checkPassword('abcdefgh', policy('good'));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result).toMatchObject({ name: 'PasswordStrengthError', code: 'invalid_password', message: 'Password is too weak' });
    expect(result.rules[0]).toMatchObject({ code: 'lengthAtLeast', format: [8], verified: true });
    expect(result.rules[1]).toMatchObject({ code: 'containsAtLeast', format: [3, 4], verified: false });
    expect(result.rules[1]!.items!.map((i) => [i.code, i.verified])).toEqual([
      ['lowerCase', true],
      ['upperCase', false],
      ['numbers', false],
      ['specialCharacters', false],
    ]);
    expect(result.policy).toBe(
      [
        '* At least 8 characters in length',
        '* Contain at least 3 of the following 4 types of characters:',
        ' * lower case letters (a-z)',
        ' * upper case letters (A-Z)',
        ' * numbers (i.e. 0-9)',
        ' * special characters (e.g. !@#$%^&*)',
      ].join('\n'),
    );
  });

  it('writes the policy text of each level', () => {
    expect(passwordPolicyText(policy('none'))).toBe('* At least 1 characters in length');
    expect(passwordPolicyText(policy('low'))).toBe('* At least 6 characters in length');
    expect(passwordPolicyText(policy('fair'))).toContain('Contain at least 3 of the following 3 types');
    expect(passwordPolicyText(policy('excellent'))).toMatch(/At least 10 characters[\s\S]*No more than 2 identical characters in a row/);
    expect(passwordPolicyText(policy('good', { password_dictionary: { enable: true }, password_no_personal_info: { enable: true } }))).toMatch(
      /Not a common password\n\* Not contain your email, username, name or nickname$/,
    );
  });

  describe('password_dictionary', () => {
    it('holds a built-in list of common passwords', () => {
      expect(COMMON_PASSWORD_COUNT).toBeGreaterThanOrEqual(200);
    });

    it('refuses common passwords (any case) and the connection words, only when enabled', () => {
      const on = policy('low', { password_dictionary: { enable: true, dictionary: ['Gatehouse2024'] } });
      for (const common of ['password', 'PASSWORD1', 'qwerty123', 'iloveyou', 'gatehouse2024']) {
        const result = checkPassword(common, on);
        expect(result, common).toMatchObject({ ok: false, name: 'PasswordDictionaryError', code: 'password_dictionary_error' });
      }
      expect(accepted('correct horse battery', on)).toBe(true);
      expect(accepted('password', policy('low'))).toBe(true);
      expect(accepted('password', policy('low', { password_dictionary: { enable: false } }))).toBe(true);
    });

    it('checks strength before the dictionary', () => {
      expect(checkPassword('123', policy('low', { password_dictionary: { enable: true } }))).toMatchObject({ name: 'PasswordStrengthError' });
    });
  });

  describe('password_no_personal_info', () => {
    const on = policy('low', { password_no_personal_info: { enable: true } });
    const info = { email: 'Jane.Doe@example.com', username: 'jdoe42', name: 'Jane Marie Doe', nickname: 'janey', given_name: 'Jane', family_name: 'Doe' };

    it.each(['Jane.Doe-secret', 'myJDOE42pass', 'xxmariexx', 'janey!!!', 'jane.doe@example.com'])('refuses %s', (password) => {
      expect(checkPassword(password, on, info)).toMatchObject({ ok: false, name: 'PasswordNoUserInfoError', code: 'password_no_user_info_error' });
    });

    it('accepts passwords without them, and ignores parts shorter than 3 characters', () => {
      expect(accepted('correct horse', on, info)).toBe(true);
      expect(accepted('alfalfa-sprouts', on, { name: 'Al Fa' })).toBe(true);
      expect(accepted('Jane.Doe-secret', policy('low'), info)).toBe(true);
    });

    it('looks at user_metadata name, first and last too', () => {
      expect(accepted('bartholomew1', on, { user_metadata: { first: 'Bartholomew' } })).toBe(false);
    });
  });
});
