/**
 * Refresh tokens: opaque random strings, stored as SHA-256 hashes, in families (store/refresh-tokens.ts).
 * The client's `refresh_token` settings decide rotation, the reuse interval (`leeway`) and the absolute and
 * idle lifetimes. Public clients always rotate (RFC 9700 §4.14.2: their refresh tokens must be
 * sender-constrained or rotated); with a DPoP proof they are sender-constrained as well (RFC 9449 §5).
 */
import { createHash, randomUUID } from 'node:crypto';
import { randomSecret } from '../../crypto/ids.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { insertRefreshToken, type RefreshToken } from '../../store/refresh-tokens.js';
import type { UserAuthorization } from './authorization.js';

/** Auth0's defaults for expiring refresh tokens: 30 days absolute, 15 days idle. */
const DEFAULT_ABSOLUTE_SECONDS = 2_592_000;
const DEFAULT_IDLE_SECONDS = 1_296_000;

export interface RefreshPolicy {
  rotating: boolean;
  /** How long after its rotation a token may still be exchanged (the reuse interval), ms. */
  leewayMs: number;
  /** Lifetime of a family from its first token, ms; null = never expires. */
  absoluteMs: number | null;
  /** Lifetime without use, ms; null = never expires. */
  idleMs: number | null;
}

export function refreshPolicy(client: Client): RefreshPolicy {
  const settings = client.refresh_token;
  const rotating = settings ? settings.rotation_type === 'rotating' || client.token_endpoint_auth_method === 'none' : client.token_endpoint_auth_method === 'none';
  const expiring = settings?.expiration_type === 'expiring' || (settings === undefined && rotating);
  return {
    rotating,
    leewayMs: Math.max(0, settings?.leeway ?? 0) * 1000,
    absoluteMs: !expiring || settings?.infinite_token_lifetime ? null : (settings?.token_lifetime ?? DEFAULT_ABSOLUTE_SECONDS) * 1000,
    idleMs: !expiring || settings?.infinite_idle_token_lifetime ? null : (settings?.idle_token_lifetime ?? DEFAULT_IDLE_SECONDS) * 1000,
  };
}

/** Public clients prove nothing at the token endpoint but their DPoP key. */
function isPublic(client: Client): boolean {
  return client.token_endpoint_auth_method === 'none' && client.client_authentication_methods === undefined;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function newFamilyId(): string {
  return randomUUID();
}

/** Where a new refresh token goes: a new family (first issue), or the next token of one (rotation). */
export interface FamilyPlacement {
  id: string;
  parentId?: string;
  /** The family's absolute expiry, inherited on rotation; computed from the client's settings when absent. */
  expiresAt?: number | null;
}

/** Stores a new refresh token for the authorization and returns it (shown to the client once, never stored). */
export async function createRefreshToken(
  services: Pick<Services, 'store'>,
  authorization: UserAuthorization,
  family: FamilyPlacement,
  now = Date.now(),
): Promise<string> {
  const policy = refreshPolicy(authorization.client);
  const token = randomSecret(32);
  const row: RefreshToken = {
    id: randomUUID(),
    token_hash: hashToken(token),
    tenant_id: authorization.tenant.id,
    family_id: family.id,
    parent_id: family.parentId ?? null,
    client_id: authorization.client.client_id,
    user_id: authorization.user.user_id,
    audience: authorization.audience,
    scopes: authorization.scopes,
    session_id: authorization.sessionId ?? null,
    authenticated_at: authorization.authTime * 1000,
    rotating: policy.rotating,
    created_at: now,
    last_used_at: null,
    rotated_at: null,
    revoked_at: null,
    expires_at: family.expiresAt !== undefined ? family.expiresAt : policy.absoluteMs === null ? null : now + policy.absoluteMs,
    idle_expires_at: policy.idleMs === null ? null : now + policy.idleMs,
    // RFC 9449 §5: a public client's refresh token is bound to its DPoP key (a confidential client's is
    // bound by its authentication already).
    dpop_jkt: authorization.confirmation?.jkt !== undefined && isPublic(authorization.client) ? authorization.confirmation.jkt : null,
  };
  await insertRefreshToken(services.store.db, row);
  return token;
}
