/**
 * The user claims that ID tokens and /userinfo carry, by scope (OIDC Core §5.4): `profile` gives the name
 * fields, picture and `updated_at` (ISO 8601, as the reference sends it); `email` gives email and
 * `email_verified`. Unset names fall back as the Management API shows them, so both agree.
 */
import { createHash } from 'node:crypto';
import type { UserProfile } from '../../store/users.js';

/** Enough of a user for its claims: a User, or the row /userinfo reads. */
export interface ClaimSource {
  user_id: string;
  email: string | null;
  email_verified: boolean;
  username: string | null;
  phone_number: string | null;
  profile: UserProfile;
  /** Epoch ms. */
  updated_at: number;
}

export const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'offline_access']);

function defaultPicture(user: ClaimSource): string {
  const seed = (user.email ?? user.user_id).trim().toLowerCase();
  return `https://www.gravatar.com/avatar/${createHash('md5').update(seed).digest('hex')}?s=480&r=pg&d=identicon`;
}

export interface UserClaims {
  name?: string;
  nickname?: string;
  given_name?: string;
  family_name?: string;
  picture?: string;
  updated_at?: string;
  email?: string;
  email_verified?: boolean;
}

export function userClaims(user: ClaimSource, scopes: ReadonlySet<string> | readonly string[]): UserClaims {
  const has = (scope: string) => (scopes instanceof Set ? scopes.has(scope) : (scopes as readonly string[]).includes(scope));
  const claims: UserClaims = {};
  if (has('profile')) {
    const { profile } = user;
    if (profile.given_name !== undefined) claims.given_name = profile.given_name;
    if (profile.family_name !== undefined) claims.family_name = profile.family_name;
    claims.nickname = profile.nickname ?? (user.email ? user.email.split('@')[0]! : (user.username ?? user.phone_number ?? ''));
    claims.name = profile.name ?? user.email ?? user.phone_number ?? user.username ?? user.user_id;
    claims.picture = profile.picture ?? defaultPicture(user);
    claims.updated_at = new Date(user.updated_at).toISOString();
  }
  if (has('email') && user.email !== null) {
    claims.email = user.email;
    claims.email_verified = user.email_verified;
  }
  return claims;
}

/** Every claim an ID token or /userinfo may carry (discovery's `claims_supported`). */
export const ID_TOKEN_CLAIMS: readonly string[] = [
  'acr',
  'amr',
  'aud',
  'auth_time',
  'azp',
  'c_hash',
  'at_hash',
  'email',
  'email_verified',
  'exp',
  'family_name',
  'given_name',
  'iat',
  'iss',
  'name',
  'nickname',
  'nonce',
  'picture',
  'sid',
  'sub',
  'updated_at',
];
