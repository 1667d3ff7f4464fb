/**
 * Rules a user's fields obey whoever writes them (create, update, import): metadata names, usernames, the
 * connection's password policy, which strategies hold users, and one account per identifier.
 */
import { checkPassword, type PasswordPolicyOptions, type PersonalInfo } from '../connections/password-policy.js';
import { InvalidInput } from '../http/errors.js';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import { findUserInConnection, userIdExists, type User } from '../store/users.js';

/** Characters a username may hold (the reference's database connections allow these). */
const USERNAME_CHARACTERS = /^[A-Za-z0-9_+\-.!#$'^`~@]+$/;
const DEFAULT_USERNAME_LENGTH = { min: 1, max: 15 };

const RESERVED_APP_METADATA = new Set([
  '__tenant',
  '_id',
  'blocked',
  'clientID',
  'created_at',
  'email_verified',
  'email',
  'globalClientID',
  'global_client_id',
  'identities',
  'lastIP',
  'lastLogin',
  'loginsCount',
  'metadata',
  'multifactor_last_modified',
  'multifactor',
  'updated_at',
  'user_id',
]);

/**
 * What is wrong with a metadata object, or undefined: field names may not contain `.` nor start with `$`, at any
 * depth, and some app_metadata names are reserved. Shared with user imports (jobs/user-file.ts).
 */
export function metadataProblem(value: Record<string, unknown>, where: 'user_metadata' | 'app_metadata'): string | undefined {
  if (where === 'app_metadata') {
    const reserved = Object.keys(value).find((k) => RESERVED_APP_METADATA.has(k));
    if (reserved) return `app_metadata.${reserved} is a reserved name`;
  }
  const visit = (node: unknown, path: string, depth: number): string | undefined => {
    if (depth > 32) return `${where} is nested too deeply`;
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) {
        const problem = visit(item, `${path}[${i}]`, depth + 1);
        if (problem) return problem;
      }
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (key.includes('.') || key.startsWith('$') || key === '') return `${path}: the field name "${key}" is not allowed (no ".", no leading "$")`;
        const problem = visit(child, `${path}.${key}`, depth + 1);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  return visit(value, where, 0);
}

export function checkMetadata(value: Record<string, unknown>, where: 'user_metadata' | 'app_metadata'): void {
  const problem = metadataProblem(value, where);
  if (problem) throw new InvalidInput('body', problem);
}

/** One-level merge: each key replaces, a null deletes, `{}` clears everything. */
export function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  if (Object.keys(patch).length === 0) return {};
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

export function databaseOptions(connection: Connection): PasswordPolicyOptions & {
  requires_username?: boolean;
  validation?: { username?: { min?: number; max?: number } | null } | null;
} {
  return connection.options as PasswordPolicyOptions;
}

/** What is wrong with a username for the connection, or undefined. Shared with user imports (jobs/user-file.ts). */
export function usernameProblem(connection: Connection, username: string): string | undefined {
  const bounds = { ...DEFAULT_USERNAME_LENGTH, ...databaseOptions(connection).validation?.username };
  const length = [...username].length;
  if (length < bounds.min || length > bounds.max) return `username must be between ${bounds.min} and ${bounds.max} characters long`;
  if (!USERNAME_CHARACTERS.test(username)) return "username may contain letters, digits and _ + - . ! # $ ' ^ ` ~ @ only";
  return undefined;
}

export function checkUsername(connection: Connection, username: string): void {
  const problem = usernameProblem(connection, username);
  if (problem) throw new InvalidInput('body', problem);
}

export function personalInfo(identity: User, primary: User): PersonalInfo {
  return {
    email: identity.email,
    username: identity.username,
    phone_number: identity.phone_number,
    name: primary.profile.name,
    given_name: primary.profile.given_name,
    family_name: primary.profile.family_name,
    nickname: primary.profile.nickname,
    user_metadata: primary.user_metadata,
  };
}

export function assertPasswordAccepted(connection: Connection, password: string, info: PersonalInfo): void {
  const result = checkPassword(password, databaseOptions(connection), info);
  if (!result.ok) throw new InvalidInput('body', `${result.name}: ${result.message}. The password must meet:\n${result.policy}`);
}

export function strategyOf(connection: Connection): 'auth0' | 'email' | 'sms' {
  const strategy = connection.strategy;
  if (strategy === 'auth0' || strategy === 'email' || strategy === 'sms') return strategy;
  throw new InvalidInput('body', `The connection ${connection.name} has the strategy ${strategy}, which this server does not support`);
}

/** Whether a failed insert met a taken id or identifier, judged by looking (dialect-neutral). */
export async function isDuplicate(services: Services, user: User): Promise<boolean> {
  return (await userIdExists(services.store.db, user.user_id)) || (await findUserInConnection(services.store.db, user.connection_id, user)) !== undefined;
}
