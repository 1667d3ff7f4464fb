/**
 * Password policies of database connections (`strategy: "auth0"`), read from the connection's options:
 *
 * | passwordPolicy | length (default) | character kinds                                                      |
 * |----------------|------------------|----------------------------------------------------------------------|
 * | none           | ≥ 1              | –                                                                    |
 * | low            | ≥ 6              | –                                                                    |
 * | fair           | ≥ 8              | lower case, upper case and digits (3 of those 3)                      |
 * | good           | ≥ 8              | 3 of 4: lower case, upper case, digits, special characters           |
 * | excellent      | ≥ 10             | 3 of 4, and no more than 2 identical characters in a row             |
 *
 * plus, when set: `password_complexity_options.min_length` (replaces the policy's length), `password_dictionary`
 * (refuses the most common passwords and the connection's own `dictionary`), `password_no_personal_info`
 * (refuses passwords containing the user's email local part, username, name parts or nickname).
 * A missing or null `passwordPolicy` means `good`, the default of new database connections.
 *
 * `checkPassword` says which rule failed, with the policy text clients show (the /dbconnections `policy`) and the
 * rule list of the reference's PasswordStrengthError (`description.rules`).
 */

export const PASSWORD_POLICIES = ['none', 'low', 'fair', 'good', 'excellent'] as const;
export type PasswordPolicyName = (typeof PASSWORD_POLICIES)[number];

/** Longest password accepted under any policy (characters); hashing cost is bounded with it. */
export const MAX_PASSWORD_LENGTH = 256;

/** The password-related options of a database connection, as stored (every one optional). */
export interface PasswordPolicyOptions {
  passwordPolicy?: PasswordPolicyName | null;
  password_complexity_options?: { min_length?: number } | null;
  password_dictionary?: { enable?: boolean; dictionary?: string[] } | null;
  password_no_personal_info?: { enable?: boolean } | null;
}

/** What the password may not contain when `password_no_personal_info` is on. */
export interface PersonalInfo {
  email?: string | null;
  username?: string | null;
  name?: string | null;
  given_name?: string | null;
  family_name?: string | null;
  nickname?: string | null;
  phone_number?: string | null;
  user_metadata?: Record<string, unknown> | null;
}

type Kind = 'lowerCase' | 'upperCase' | 'numbers' | 'specialCharacters';

const KIND_TEXT: Record<Kind, string> = {
  lowerCase: 'lower case letters (a-z)',
  upperCase: 'upper case letters (A-Z)',
  numbers: 'numbers (i.e. 0-9)',
  specialCharacters: 'special characters (e.g. !@#$%^&*)',
};

const KIND_TEST: Record<Kind, RegExp> = {
  lowerCase: /\p{Ll}/u,
  upperCase: /\p{Lu}/u,
  numbers: /\p{Nd}/u,
  specialCharacters: /[^\p{L}\p{N}]/u,
};

interface PolicyDefinition {
  minLength: number;
  /** Kinds to choose from, and how many of them the password needs. */
  kinds?: { of: readonly Kind[]; atLeast: number };
  maxIdenticalInARow?: number;
}

const POLICIES: Record<PasswordPolicyName, PolicyDefinition> = {
  none: { minLength: 1 },
  low: { minLength: 6 },
  fair: { minLength: 8, kinds: { of: ['lowerCase', 'upperCase', 'numbers'], atLeast: 3 } },
  good: { minLength: 8, kinds: { of: ['lowerCase', 'upperCase', 'numbers', 'specialCharacters'], atLeast: 3 } },
  excellent: {
    minLength: 10,
    kinds: { of: ['lowerCase', 'upperCase', 'numbers', 'specialCharacters'], atLeast: 3 },
    maxIdenticalInARow: 2,
  },
};

export interface ResolvedPasswordPolicy {
  name: PasswordPolicyName;
  minLength: number;
  kinds?: { of: readonly Kind[]; atLeast: number };
  maxIdenticalInARow?: number;
  dictionary: boolean;
  /** The connection's own words, lower case. */
  customDictionary: string[];
  noPersonalInfo: boolean;
}

export function resolvePasswordPolicy(options: PasswordPolicyOptions | undefined | null): ResolvedPasswordPolicy {
  const name: PasswordPolicyName = options?.passwordPolicy && PASSWORD_POLICIES.includes(options.passwordPolicy) ? options.passwordPolicy : 'good';
  const definition = POLICIES[name];
  const minLength = options?.password_complexity_options?.min_length;
  return {
    name,
    ...definition,
    minLength: typeof minLength === 'number' && minLength >= 1 ? Math.min(minLength, MAX_PASSWORD_LENGTH) : definition.minLength,
    dictionary: options?.password_dictionary?.enable === true,
    customDictionary: (options?.password_dictionary?.dictionary ?? []).filter((w) => typeof w === 'string' && w).map((w) => w.toLowerCase()),
    noPersonalInfo: options?.password_no_personal_info?.enable === true,
  };
}

/** One line of the policy as the reference's PasswordStrengthError lists it. */
export interface PasswordRule {
  code: string;
  message: string;
  format?: number[];
  items?: PasswordRule[];
  verified: boolean;
}

export type PasswordErrorName = 'PasswordStrengthError' | 'PasswordDictionaryError' | 'PasswordNoUserInfoError';

export type PasswordCheck =
  | { ok: true }
  | {
      ok: false;
      /** The reference's error names: PasswordStrengthError, PasswordDictionaryError, PasswordNoUserInfoError. */
      name: PasswordErrorName;
      /** The /dbconnections codes: invalid_password, password_dictionary_error, password_no_user_info_error. */
      code: 'invalid_password' | 'password_dictionary_error' | 'password_no_user_info_error';
      /** e.g. `Password is too weak`. */
      message: string;
      /** The whole policy, one `* …` line per rule. */
      policy: string;
      rules: PasswordRule[];
    };

function lengthOf(password: string): number {
  return [...password].length;
}

function hasRunLongerThan(password: string, max: number): boolean {
  const chars = [...password];
  let run = 1;
  for (let i = 1; i < chars.length; i++) {
    run = chars[i] === chars[i - 1] ? run + 1 : 1;
    if (run > max) return true;
  }
  return false;
}

function strengthRules(policy: ResolvedPasswordPolicy, password: string | undefined): PasswordRule[] {
  const check = password !== undefined;
  const length = check ? lengthOf(password) : 0;
  const rules: PasswordRule[] = [
    {
      code: 'lengthAtLeast',
      message: `At least ${policy.minLength} characters in length`,
      format: [policy.minLength],
      verified: check && length >= policy.minLength,
    },
  ];
  if (check && length > MAX_PASSWORD_LENGTH) {
    rules.push({ code: 'lengthAtMost', message: `At most ${MAX_PASSWORD_LENGTH} characters in length`, format: [MAX_PASSWORD_LENGTH], verified: false });
  }
  if (policy.kinds) {
    const items = policy.kinds.of.map((kind) => ({
      code: kind,
      message: KIND_TEXT[kind],
      verified: check && KIND_TEST[kind].test(password),
    }));
    const { atLeast, of } = policy.kinds;
    rules.push({
      code: 'containsAtLeast',
      message: `Contain at least ${atLeast} of the following ${of.length} types of characters:`,
      format: [atLeast, of.length],
      items,
      verified: items.filter((i) => i.verified).length >= atLeast,
    });
  }
  if (policy.maxIdenticalInARow !== undefined) {
    rules.push({
      code: 'identicalChars',
      message: `No more than ${policy.maxIdenticalInARow} identical characters in a row (e.g., "aaa" not allowed)`,
      format: [policy.maxIdenticalInARow],
      verified: check && !hasRunLongerThan(password, policy.maxIdenticalInARow),
    });
  }
  return rules;
}

/** The policy as the text clients show: one `* …` line per rule, kind lists indented. */
export function passwordPolicyText(options: PasswordPolicyOptions | undefined | null): string {
  const policy = resolvePasswordPolicy(options);
  const lines: string[] = [];
  for (const rule of strengthRules(policy, undefined)) {
    lines.push(`* ${rule.message}`);
    for (const item of rule.items ?? []) lines.push(` * ${item.message}`);
  }
  if (policy.dictionary) lines.push('* Not a common password');
  if (policy.noPersonalInfo) lines.push('* Not contain your email, username, name or nickname');
  return lines.join('\n');
}

/** Words of at least this many characters count as personal information. */
const MIN_PERSONAL_PART = 3;

function personalParts(info: PersonalInfo): string[] {
  const parts = new Set<string>();
  const add = (value: unknown, split = false) => {
    if (typeof value !== 'string') return;
    const text = value.trim().toLowerCase();
    const pieces = split ? [text, ...text.split(/[\s,._'-]+/u)] : [text];
    for (const piece of pieces) if (lengthOf(piece) >= MIN_PERSONAL_PART) parts.add(piece);
  };
  if (typeof info.email === 'string') {
    add(info.email);
    add(info.email.split('@')[0]);
  }
  add(info.username);
  add(info.name, true);
  add(info.given_name, true);
  add(info.family_name, true);
  add(info.nickname, true);
  add(info.phone_number?.replace(/\D/g, ''));
  const metadata = info.user_metadata ?? {};
  add(metadata.name, true);
  add(metadata.first, true);
  add(metadata.last, true);
  return [...parts];
}

/**
 * Every rule of the policy, in the order the policy text lists them, each `verified` for `password` when one is
 * given (unchecked, every rule reads false). What the hosted pages show as a checklist under the password field.
 */
export function passwordChecklist(options: PasswordPolicyOptions | undefined | null, password?: string, info: PersonalInfo = {}): PasswordRule[] {
  const policy = resolvePasswordPolicy(options);
  const rules = strengthRules(policy, password);
  const lower = password?.toLowerCase();
  if (policy.dictionary) {
    rules.push({ code: 'notCommon', message: 'Not a common password', verified: lower !== undefined && !isCommon(policy, lower) });
  }
  if (policy.noPersonalInfo) {
    rules.push({ code: 'noPersonalInfo', message: 'Not contain your email, username, name or nickname', verified: lower !== undefined && !hasPersonalInfo(info, lower) });
  }
  return rules;
}

function isCommon(policy: ResolvedPasswordPolicy, lower: string): boolean {
  return COMMON_PASSWORDS.has(lower) || policy.customDictionary.includes(lower);
}

function hasPersonalInfo(info: PersonalInfo, lower: string): boolean {
  return personalParts(info).some((part) => lower.includes(part));
}

export function checkPassword(password: string, options: PasswordPolicyOptions | undefined | null, info: PersonalInfo = {}): PasswordCheck {
  const policy = resolvePasswordPolicy(options);
  const text = passwordPolicyText(options);
  const rules = strengthRules(policy, password);
  if (rules.some((r) => !r.verified)) {
    return { ok: false, name: 'PasswordStrengthError', code: 'invalid_password', message: 'Password is too weak', policy: text, rules };
  }
  const lower = password.toLowerCase();
  if (policy.dictionary && isCommon(policy, lower)) {
    return {
      ok: false,
      name: 'PasswordDictionaryError',
      code: 'password_dictionary_error',
      message: 'Password is too common',
      policy: text,
      rules: [...rules, { code: 'notCommon', message: 'Not a common password', verified: false }],
    };
  }
  if (policy.noPersonalInfo && hasPersonalInfo(info, lower)) {
    return {
      ok: false,
      name: 'PasswordNoUserInfoError',
      code: 'password_no_user_info_error',
      message: 'Password contains user information',
      policy: text,
      rules: [...rules, { code: 'noPersonalInfo', message: 'Not contain your email, username, name or nickname', verified: false }],
    };
  }
  return { ok: true };
}

/** The most common passwords of public breach corpora (lower case), refused when `password_dictionary` is on. */
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  `123456 password 123456789 12345678 12345 qwerty 1234567 111111 1234567890 123123 abc123 1234 password1 iloveyou
  1q2w3e4r 000000 qwerty123 zaq12wsx dragon sunshine princess letmein 654321 monkey 27653 1qaz2wsx 123321 qwertyuiop
  superman asdfghjkl trustno1 football baseball welcome welcome1 welcome123 admin admin123 administrator root toor
  passw0rd p@ssw0rd p@ssword pass123 pass1234 password123 password12 password! password1! password@123 qwerty1
  qwerty12 qwerty1234 q1w2e3r4 q1w2e3r4t5 1q2w3e 1q2w3e4r5t 1qazxsw2 zxcvbnm zxcvbn asdfgh asdf1234 asd123 abcd1234
  abcdef abc12345 aa123456 a123456 a12345678 123qwe 123abc 123456a 123456abc 1234qwer 12345a 12345qwert 123654 112233
  121212 131313 159753 159357 147258 147258369 123698745 987654321 987654 666666 777777 888888 999999 555555 222222
  11111111 00000000 88888888 55555555 12341234 11223344 696969 101010 7777777 1111111 12344321 789456123 741852963
  master michael jennifer jordan hunter hunter2 shadow ashley jessica charlie michelle daniel thomas robert matthew
  andrew joshua george summer buster soccer hockey batman starwars pokemon freedom whatever secret secret123 love
  lovely loveme iloveu fuckyou killer mustang harley ranger cookie cheese pepper ginger maggie bailey tigger
  chocolate computer internet samsung google apple nintendo minecraft liverpool chelsea arsenal barcelona
  blink182 jesus angel angels flower hello hello123 hello1 hallo test test123 test1 testing guest changeme
  default login access access14 master123 qazwsx qazwsxedc 1qaz2wsx3edc zaq1zaq1 zaq1xsw2 !qaz2wsx qwe123 ewq321
  asdasd asdqwe123 qweasd qweasdzxc 1a2b3c 1a2b3c4d a1b2c3 a1b2c3d4 aaaaaa aaaaaaaa abcabc letmein1 letmein123
  monkey123 dragon123 iloveyou1 sunshine1 princess1 football1 baseball1 superman1 welcome2 password2 starwars1
  michael1 jordan23 charlie1 freedom1 nothing stupid loser banana orange purple yellow silver diamond
  corvette ferrari porsche mercedes tennis golf hannah mickey snoopy cowboy cowboys eagles yankees lakers
  winter spring autumn monday friday january qwert12345 1password mypassword yourpassword newpassword
  passpass qwertyui asdfghjk zxcvbnm1 1234abcd abcd123 a1234567 abc123456 12qwaszx`
    .split(/\s+/)
    .filter(Boolean),
);

export const COMMON_PASSWORD_COUNT = COMMON_PASSWORDS.size;
