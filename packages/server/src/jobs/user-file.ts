/**
 * One user of an import file, in the reference's schema (bulk user import database schema): checked on its own,
 * so that a broken user is refused with its errors while the others import. The checks are the reference's
 * JSON schema (types, formats, lengths; no other properties), then what the Management API's POST /users checks
 * (username rules of the connection, metadata names), then the password hash through its algorithm
 * (password-hashes/). Errors carry the reference's codes and the dotted path of the field.
 *
 * `mfa_factors`: a `totp` secret becomes a confirmed TOTP enrollment (one per user, at least 80 bits: see
 * mfa/totp.ts). `phone` and `email` factors are refused with MFA_FACTORS_FAILED, and the user with them: this
 * server has no SMS or email second factor, and importing the user without it would quietly take their second
 * factor away.
 */
import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { databaseOptions } from '../connections/database-users.js';
import { normalizeEmail } from '../connections/email-address.js';
import { metadataProblem, usernameProblem } from '../management/user-rules.js';
import type { Connection } from '../store/connections.js';
import type { UserProfile } from '../store/users.js';
import { importError, type ImportError, type ImportErrorCode } from './import-errors.js';
import { BYTE_ENCODINGS, PASSWORD_ENCODINGS, SALT_POSITIONS } from './password-hashes/bytes.js';
import { acceptBcryptPasswordHash, acceptCustomPasswordHash, type CustomPasswordHash } from './password-hashes/index.js';
import { base32Bytes, MIN_IMPORTED_SECRET_BYTES } from '../mfa/totp.js';
import type { StoredHash } from './password-hashes/algorithm.js';

const Enum = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const Encoded = Type.Object({ value: Type.String({ maxLength: 4096 }), encoding: Type.Optional(Enum(BYTE_ENCODINGS)) }, { additionalProperties: false, required: ['value'] });
const Count = Type.Integer({ minimum: 1, maximum: 1_000_000_000 });

const CustomPasswordHashSchema = Type.Object(
  {
    algorithm: Type.String({ maxLength: 64 }),
    hash: Type.Object(
      {
        value: Type.String({ minLength: 1, maxLength: 4096 }),
        encoding: Type.Optional(Enum(BYTE_ENCODINGS)),
        digest: Type.Optional(Type.String({ maxLength: 64 })),
        key: Type.Optional(Encoded),
      },
      { additionalProperties: false },
    ),
    salt: Type.Optional(
      Type.Object(
        { value: Type.String({ maxLength: 4096 }), encoding: Type.Optional(Enum(BYTE_ENCODINGS)), position: Type.Optional(Enum(SALT_POSITIONS)) },
        { additionalProperties: false },
      ),
    ),
    password: Type.Optional(Type.Object({ encoding: Type.Optional(Enum(PASSWORD_ENCODINGS)) }, { additionalProperties: false })),
    keylen: Type.Optional(Count),
    cost: Type.Optional(Count),
    blockSize: Type.Optional(Count),
    parallelization: Type.Optional(Count),
    salt_separator: Type.Optional(Encoded),
    rounds: Type.Optional(Count),
    mem_cost: Type.Optional(Count),
  },
  { additionalProperties: false },
);

const Factor = Type.Object(
  {
    totp: Type.Optional(Type.Object({ secret: Type.String({ pattern: '^[A-Z2-7]+$', maxLength: 256 }) }, { additionalProperties: false })),
    phone: Type.Optional(Type.Object({ value: Type.String({ pattern: '^\\+[0-9]{1,15}$' }) }, { additionalProperties: false })),
    email: Type.Optional(Type.Object({ value: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false, maxProperties: 1 },
);

const Metadata = Type.Record(Type.String(), Type.Unknown());

/** The reference's user schema; limits as the Management API's POST /users has them. */
const ImportUserSchema = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    email_verified: Type.Optional(Type.Boolean()),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^\\S+$' })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    given_name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
    family_name: Type.Optional(Type.String({ minLength: 1, maxLength: 150 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    nickname: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    picture: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, format: 'uri' })),
    blocked: Type.Optional(Type.Boolean()),
    password_hash: Type.Optional(Type.String({ maxLength: 200 })),
    custom_password_hash: Type.Optional(CustomPasswordHashSchema),
    app_metadata: Type.Optional(Metadata),
    user_metadata: Type.Optional(Metadata),
    mfa_factors: Type.Optional(Type.Array(Factor, { minItems: 1, maxItems: 10 })),
  },
  { additionalProperties: false },
);

const validator = Compile(ImportUserSchema as TSchema);

/** A user of the file that passed every check, as the import writes it. */
export interface ImportedUser {
  /** Where it is in the file (0-based). */
  position: number;
  /** Lower case. */
  email: string;
  /** Undefined when the file does not say (an upsert then leaves the user's as it is). */
  email_verified: boolean | undefined;
  /** The id part after `auth0|`, when the file gives one. */
  user_id: string | undefined;
  /** Lower case. */
  username: string | undefined;
  blocked: boolean | undefined;
  /** Only the fields the file gives. */
  profile: UserProfile;
  app_metadata: Record<string, unknown> | undefined;
  user_metadata: Record<string, unknown> | undefined;
  /** The accepted password hash, not yet sealed. */
  hash: StoredHash | undefined;
  /** The TOTP secret of `mfa_factors` (unpadded Base32), not yet sealed. */
  totpSecret: string | undefined;
}

export type ReadUser = { ok: true; user: ImportedUser } | { ok: false; errors: ImportError[] };

const KEYWORD_CODES: Record<string, ImportErrorCode> = {
  required: 'OBJECT_REQUIRED',
  type: 'INVALID_TYPE',
  format: 'FORMAT',
  pattern: 'PATTERN',
  minLength: 'MIN_LENGTH',
  maxLength: 'MAX_LENGTH',
  minimum: 'MINIMUM',
  maximum: 'MAXIMUM',
  const: 'ENUM_MISMATCH',
  enum: 'ENUM_MISMATCH',
  anyOf: 'ENUM_MISMATCH',
  minItems: 'ARRAY_LENGTH_SHORT',
  maxItems: 'ARRAY_LENGTH_LONG',
  additionalProperties: 'OBJECT_ADDITIONAL_PROPERTIES',
  maxProperties: 'OBJECT_ADDITIONAL_PROPERTIES',
};

/** `/custom_password_hash/hash/value` → `custom_password_hash.hash.value`; `/mfa_factors/0` → `mfa_factors[0]`. */
function dotted(pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function schemaErrors(raw: unknown): ImportError[] {
  const errors: ImportError[] = [];
  const seen = new Set<string>();
  for (const error of validator.Errors(raw)) {
    const code = KEYWORD_CODES[error.keyword];
    // 'boolean' repeats an additionalProperties error for each extra property; anyOf branches repeat themselves.
    if (!code) continue;
    const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
    const names = params.requiredProperties ?? params.additionalProperties ?? [undefined];
    for (const name of names) {
      const path = dotted(error.instancePath, name);
      const key = `${code}:${path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const message =
        code === 'OBJECT_REQUIRED'
          ? `Missing required property: ${name}`
          : code === 'OBJECT_ADDITIONAL_PROPERTIES'
            ? `Additional properties not allowed: ${name}`
            : `${path || 'user'} ${error.message}`;
      errors.push(importError(code, path, message));
    }
  }
  return errors;
}

interface RawUser {
  email: string;
  email_verified?: boolean;
  user_id?: string;
  username?: string;
  given_name?: string;
  family_name?: string;
  name?: string;
  nickname?: string;
  picture?: string;
  blocked?: boolean;
  password_hash?: string;
  custom_password_hash?: CustomPasswordHash;
  app_metadata?: Record<string, unknown>;
  user_metadata?: Record<string, unknown>;
  mfa_factors?: { totp?: { secret: string }; phone?: { value: string }; email?: { value: string } }[];
}

/** Checks one user of the file for a database connection. */
export function readImportedUser(raw: unknown, position: number, connection: Connection): ReadUser {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, errors: [importError('INVALID_TYPE', '', 'Each user must be a JSON object')] };
  }
  const structural = schemaErrors(raw);
  if (structural.length > 0) return { ok: false, errors: structural };
  const user = raw as RawUser;
  const errors: ImportError[] = [];

  const requiresUsername = databaseOptions(connection).requires_username === true;
  if (user.username === undefined && requiresUsername) {
    errors.push(importError('OBJECT_REQUIRED', 'username', `Missing required property: username (the connection ${connection.name} requires one)`));
  } else if (user.username !== undefined && !requiresUsername) {
    errors.push(importError('NOT_PASSED', 'username', `The connection ${connection.name} does not use usernames (requires_username is off)`));
  } else if (user.username !== undefined) {
    const problem = usernameProblem(connection, user.username);
    if (problem) errors.push(importError('FORMAT', 'username', problem));
  }
  for (const where of ['app_metadata', 'user_metadata'] as const) {
    const value = user[where];
    const problem = value && metadataProblem(value, where);
    if (problem) errors.push(importError('FORMAT', where, problem));
  }
  const factors = readFactors(user.mfa_factors ?? []);
  errors.push(...factors.errors);

  let hash: StoredHash | undefined;
  if (user.password_hash !== undefined && user.custom_password_hash !== undefined) {
    errors.push(importError('NOT_PASSED', 'custom_password_hash', 'password_hash and custom_password_hash are mutually exclusive'));
  } else if (user.password_hash !== undefined || user.custom_password_hash !== undefined) {
    const accepted = user.password_hash !== undefined ? acceptBcryptPasswordHash(user.password_hash) : acceptCustomPasswordHash(user.custom_password_hash!);
    if (accepted.ok) hash = accepted.stored;
    else errors.push(accepted.error);
  }
  if (errors.length > 0) return { ok: false, errors };

  const profile: UserProfile = {};
  for (const field of ['name', 'given_name', 'family_name', 'nickname', 'picture'] as const) {
    if (user[field] !== undefined) profile[field] = user[field];
  }
  return {
    ok: true,
    user: {
      position,
      email: normalizeEmail(user.email),
      email_verified: user.email_verified,
      user_id: user.user_id,
      username: user.username?.toLowerCase(),
      blocked: user.blocked,
      profile,
      app_metadata: user.app_metadata,
      user_metadata: user.user_metadata,
      hash,
      totpSecret: factors.totpSecret,
    },
  };
}

/** The importable second factors of a user (see the module comment). */
function readFactors(factors: NonNullable<RawUser['mfa_factors']>): { totpSecret: string | undefined; errors: ImportError[] } {
  const errors: ImportError[] = [];
  const secrets: string[] = [];
  factors.forEach((factor, i) => {
    const path = `mfa_factors[${i}]`;
    if (factor.totp) {
      if (base32Bytes(factor.totp.secret) < MIN_IMPORTED_SECRET_BYTES) {
        errors.push(importError('MFA_FACTORS_FAILED', `${path}.totp.secret`, `A TOTP secret must hold at least ${MIN_IMPORTED_SECRET_BYTES * 8} bits (${Math.ceil((MIN_IMPORTED_SECRET_BYTES * 8) / 5)} Base32 characters)`));
      } else secrets.push(factor.totp.secret);
    } else if (factor.phone || factor.email) {
      const kind = factor.phone ? 'SMS (phone)' : 'email';
      errors.push(importError('MFA_FACTORS_FAILED', path, `${kind} second factors are not offered by this server; the user is not imported without their factor`));
    } else {
      errors.push(importError('MFA_FACTORS_FAILED', path, 'An MFA factor names one of totp, phone or email'));
    }
  });
  if (secrets.length > 1) errors.push(importError('MFA_FACTORS_FAILED', 'mfa_factors', 'A user has at most one TOTP enrollment'));
  return { totpSecret: secrets[0], errors };
}
