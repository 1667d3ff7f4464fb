/**
 * Authorization codes (RFC 6749 §4.1, RFC 7636): opaque, single use, 60 seconds, stored as SHA-256 hashes and
 * bound to the client, the redirect URI, the PKCE challenge (S256 only), the DPoP key of a pushed request
 * (RFC 9449 §10) and the authorization they stand for.
 * Redemption checks the binding, then claims the code with one conditional update; a second redemption fails
 * and revokes what the first one issued (RFC 9700 §4.5).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomSecret } from '../../crypto/ids.js';
import type { Services } from '../../services.js';
import {
  claimAuthorizationCode,
  findAuthorizationCode,
  insertAuthorizationCode,
  markAuthorizationCodeReplayed,
  wasAuthorizationCodeReplayed,
  type AuthorizationCodeRow,
} from '../../store/authorization-codes.js';
import type { Client } from '../../store/clients.js';
import { revokeRefreshTokenFamily } from '../../store/refresh-tokens.js';
import { revokeAccessToken } from '../../store/revoked-access-tokens.js';
import type { Tenant } from '../../store/tenants.js';
import { findPrimaryUser } from '../../store/users.js';
import { confirmationOf, type IssuedUserTokens, type UserAuthorization } from './authorization.js';
import { InvalidGrant } from './errors.js';
import { requireProofForApi, type Confirmation } from '../sender-constraint.js';
import { accessTokenLifetime, issueWithPlan, planIssue } from './issue.js';
import { hashToken } from './refresh-tokens.js';

const CODE_LIFETIME_MS = 60_000;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** What a code keeps of the authorization besides tenant, client and user (which are rows of their own). */
interface StoredAuthorization {
  scopes: string[];
  audience: string | null;
  nonce?: string;
  auth_time: number;
  session_id?: string;
  amr?: string[];
}

/** Stores a single-use code (SHA-256 hash only, 60 s) bound to the client, redirect URI, PKCE challenge (S256 only) and the authorization; returns the opaque code. */
export async function createAuthorizationCode(
  services: Services,
  authorization: UserAuthorization,
  binding: { redirectUri: string; codeChallenge?: string; codeChallengeMethod?: 'S256'; dpopJkt?: string },
): Promise<string> {
  if (binding.codeChallenge !== undefined && binding.codeChallengeMethod !== 'S256') {
    // Callers refuse `plain` before this; a challenge without its method is a caller bug, not a user error.
    throw new Error('only S256 code challenges can be bound to a code');
  }
  const code = randomSecret(32);
  const now = Date.now();
  const stored: StoredAuthorization = {
    scopes: authorization.scopes,
    audience: authorization.audience,
    auth_time: authorization.authTime,
    ...(authorization.nonce !== undefined && { nonce: authorization.nonce }),
    ...(authorization.sessionId !== undefined && { session_id: authorization.sessionId }),
    ...(authorization.amr !== undefined && { amr: authorization.amr }),
  };
  await insertAuthorizationCode(services.store.db, {
    code_hash: hashToken(code),
    tenant_id: authorization.tenant.id,
    client_id: authorization.client.client_id,
    user_id: authorization.user.user_id,
    redirect_uri: binding.redirectUri,
    code_challenge: binding.codeChallenge ?? null,
    authorization: JSON.stringify(stored),
    created_at: now,
    expires_at: now + CODE_LIFETIME_MS,
    redeemed_at: null,
    access_token_jti: null,
    access_token_expires_at: null,
    refresh_token_family: null,
    replayed_at: null,
    dpop_jkt: binding.dpopJkt ?? null,
  });
  return code;
}

export interface CodeRedemption {
  tenant: Tenant;
  /** The authenticated client. */
  client: Client;
  /** True when the client authenticated with `none`. */
  isPublic: boolean;
  code: string;
  redirectUri: string | undefined;
  codeVerifier: string | undefined;
  /** What the token request binds the tokens to (its DPoP key, its client certificate). */
  confirmation: Confirmation;
  /** Told whose grant this is once the client's own is found (the tenant log names the user). */
  onUser?: (userId: string) => void;
}

function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** A second redemption: revoke the refresh-token family and the access token the first one issued. */
async function revokeWhatCodeIssued(services: Services, tenant: Tenant, row: AuthorizationCodeRow): Promise<void> {
  const db = services.store.db;
  const now = Date.now();
  const current = await markAuthorizationCodeReplayed(db, row.code_hash, now);
  if (!current) return;
  if (current.refresh_token_family) await revokeRefreshTokenFamily(db, tenant.id, current.refresh_token_family, now);
  if (current.access_token_jti && current.access_token_expires_at) {
    await revokeAccessToken(db, tenant.id, current.access_token_jti, current.access_token_expires_at, now);
  }
}

/** Checks the code's binding, claims it and issues its tokens. Every failure is invalid_grant. */
export async function redeemAuthorizationCode(services: Services, redemption: CodeRedemption): Promise<IssuedUserTokens> {
  const { tenant, client } = redemption;
  const db = services.store.db;
  const row = await findAuthorizationCode(db, tenant.id, hashToken(redemption.code));
  if (!row || row.client_id !== client.client_id) throw new InvalidGrant('Invalid authorization code');
  if (redemption.onUser) redemption.onUser(row.user_id);
  if (row.redeemed_at !== null) {
    await revokeWhatCodeIssued(services, tenant, row);
    throw new InvalidGrant('Invalid authorization code');
  }
  if (row.expires_at <= Date.now()) throw new InvalidGrant('Invalid authorization code');
  if (redemption.redirectUri !== row.redirect_uri) throw new InvalidGrant('redirect_uri does not match the one of the authorization request');
  // RFC 9449 §10: a code pushed with a DPoP key is redeemed with that key's proof only.
  if (row.dpop_jkt !== null && row.dpop_jkt !== undefined && row.dpop_jkt !== redemption.confirmation.jkt) throw new InvalidGrant('The authorization code is bound to another DPoP key');
  if (row.code_challenge !== null) {
    if (redemption.codeVerifier === undefined) throw new InvalidGrant('code_verifier is required');
    if (!CODE_VERIFIER.test(redemption.codeVerifier) || !verifierMatches(redemption.codeVerifier, row.code_challenge)) {
      throw new InvalidGrant('Failed to verify code_verifier');
    }
  } else if (redemption.codeVerifier !== undefined) {
    // RFC 9700 §4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
    throw new InvalidGrant('code_verifier was sent but the authorization request had no code_challenge');
  } else if (redemption.isPublic) {
    throw new InvalidGrant('Public clients must use PKCE');
  }

  const user = await findPrimaryUser(db, tenant.id, row.user_id);
  if (!user || user.blocked) throw new InvalidGrant('Invalid authorization code');
  const stored = JSON.parse(row.authorization) as StoredAuthorization;
  const authorization: UserAuthorization = {
    tenant,
    client,
    user,
    scopes: stored.scopes,
    audience: stored.audience,
    authTime: stored.auth_time,
    ...(stored.nonce !== undefined && { nonce: stored.nonce }),
    ...(stored.session_id !== undefined && { sessionId: stored.session_id }),
    confirmation: redemption.confirmation,
    ...(stored.amr !== undefined && { amr: stored.amr }),
  };

  // Before the claim, so a refusal leaves the code usable with a proof.
  await requireProofForApi(services, tenant.id, authorization.audience, confirmationOf(authorization));
  const plan = planIssue();
  const wantsRefresh = stored.scopes.includes('offline_access') && client.grant_types.includes('refresh_token');
  // Recorded before issuing, so a replay that comes at any moment after the claim finds what to revoke.
  const lifetime = await accessTokenLifetime(services, authorization);
  const claimed = await claimAuthorizationCode(db, row.code_hash, {
    accessTokenJti: plan.accessTokenJti,
    accessTokenExpiresAt: Date.now() + lifetime * 1000 + 60_000,
    refreshTokenFamily: wantsRefresh ? plan.family.id : null,
  });
  if (!claimed) {
    await revokeWhatCodeIssued(services, tenant, row);
    throw new InvalidGrant('Invalid authorization code');
  }
  const outcome = await issueWithPlan(services, authorization, { accessToken: true, idToken: true, refreshToken: wantsRefresh }, plan);
  // A replay may have come between the claim and the refresh token's insert: its revocation missed the token.
  if (outcome.refreshTokenFamily && (await wasAuthorizationCodeReplayed(db, row.code_hash))) {
    await revokeRefreshTokenFamily(db, tenant.id, outcome.refreshTokenFamily);
  }
  return outcome.tokens;
}
