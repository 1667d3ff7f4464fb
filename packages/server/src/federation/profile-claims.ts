/** Standard OIDC claims (OIDC Core §5.1) as a normalised profile: only strings where strings belong, bounded. */
import type { FederatedProfile } from './strategy.js';
import { UpstreamError } from './upstream-error.js';

const MAX_SUBJECT = 255;
const MAX_FIELD = 2000;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_FIELD) : undefined;
}

/** A subject the upstream must give: a non-empty string or number, at most 255 characters. */
export function subjectOf(value: unknown): string {
  const subject = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof subject !== 'string' || subject === '' || subject.length > MAX_SUBJECT) {
    throw new UpstreamError('access_denied', "The identity provider's profile has no usable user id");
  }
  return subject;
}

export function profileFromClaims(claims: Record<string, unknown>, tokens: FederatedProfile['tokens']): FederatedProfile {
  const verified = claims.email_verified;
  const profile: FederatedProfile = { subject: subjectOf(claims.sub), tokens };
  const email = text(claims.email);
  if (email !== undefined && email.length <= 320) profile.email = email;
  if (profile.email !== undefined) profile.email_verified = verified === true || verified === 'true';
  for (const field of ['name', 'given_name', 'family_name', 'nickname', 'picture'] as const) {
    const value = text(claims[field]);
    if (value !== undefined) profile[field] = value;
  }
  if (profile.nickname === undefined) {
    const preferred = text(claims.preferred_username);
    if (preferred !== undefined) profile.nickname = preferred;
  }
  return profile;
}
