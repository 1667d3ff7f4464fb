/**
 * What a user granted a client, as one value: produced by /authorize (from the SSO session and the
 * request) or by a credentials grant at /oauth/token, and consumed by token issuance. Authorization codes
 * and refresh tokens store enough of it to rebuild it later.
 */
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import type { User } from '../../store/users.js';
import type { Confirmation } from '../sender-constraint.js';

export interface UserAuthorization {
  tenant: Tenant;
  client: Client;
  /** The primary user (never a linked secondary identity). */
  user: User;
  /** Every granted scope: OIDC scopes (openid, profile, email, offline_access) and the API's scopes. */
  scopes: string[];
  /** The API identifier the access token is for; null when only OIDC scopes were asked (access token for /userinfo). */
  audience: string | null;
  /** From the authorization request; copied into the ID token. */
  nonce?: string;
  /** Epoch seconds of the user's last authentication (the ID token's `auth_time`). */
  authTime: number;
  /** The SSO session's public id (the ID token's `sid`); absent for credentials grants. */
  sessionId?: string;
  /**
   * What the token request bound its tokens to (sender-constraint.ts senderConstraint): the DPoP key (RFC 9449)
   * and the client certificate (RFC 8705) thumbprints; the access token carries it as `cnf`.
   */
  confirmation?: Confirmation;
  /** How the user authenticated (the ID token's `amr`, e.g. ["pwd","mfa"]), where known. */
  amr?: string[];
}

/** What the access token issued for `authorization` is bound to (its `cnf`). */
export function confirmationOf(authorization: UserAuthorization): Confirmation {
  return authorization.confirmation ?? {};
}

/** What /authorize asks to be issued in the front channel, and what the token endpoint returns. */
export interface IssuedUserTokens {
  access_token?: string;
  id_token?: string;
  refresh_token?: string;
  token_type: 'Bearer' | 'DPoP';
  /** Lifetime of the access token, seconds. */
  expires_in: number;
  scope: string;
}
