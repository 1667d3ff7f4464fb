/**
 * One interface for every way of signing in through an upstream identity provider (a "strategy"): validate the
 * connection's options, send the browser upstream, and turn the upstream's answer at /login/callback into one
 * normalised profile. Each strategy lives in its own file; `FEDERATION_STRATEGIES` lists them.
 */
import type { TSchema } from '@fastify/type-provider-typebox';
import type { Connection } from '../store/connections.js';
import type { DevelopmentKeys } from './development-keys.js';

/** The user as the upstream describes them, in the service's own field names. */
export interface FederatedProfile {
  /** The upstream's stable, unique id of the user (OIDC `sub`). */
  subject: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  nickname?: string;
  picture?: string;
  /**
   * Profile fields this upstream sends only once (Apple: the name, at the first sign-in): when a later sign-in
   * lacks them, the stored values are kept instead of wiped.
   */
  sentOnce?: readonly ('name' | 'given_name' | 'family_name')[];
  /** SAML: the NameID and SessionIndex of the assertion, which a LogoutRequest to the IdP must name (federated logout). */
  samlSession?: { nameId: string; nameIdFormat?: string; sessionIndex?: string };
  /** The upstream's tokens, kept sealed (issue #11: access and refresh returned only to `read:user_idp_tokens`). */
  tokens: { access_token?: string; refresh_token?: string; id_token?: string };
}

/** One trip upstream: what the callback must see again. */
export interface UpstreamTrip {
  /** Sent as `state`; only its hash is stored. */
  state: string;
  /** Sent as `nonce`; the upstream's ID token must carry it. */
  nonce: string;
  /** PKCE (RFC 7636), S256. */
  codeVerifier: string;
  /** This tenant's /login/callback, exactly as sent upstream. */
  redirectUri: string;
}

/**
 * This side of the trip, for strategies where the service itself is a named, signing party (SAML: our entity ID,
 * our ACS URL, the tenant's key for signed AuthnRequests and our metadata).
 */
export interface LocalParty {
  tenantName: string;
  /** The tenant's base URL the request came on, without trailing slash. */
  baseUrl: string;
  /** The tenant's current signing key with its certificate (PEM). */
  signingKey(): Promise<{ privateKeyPem: string; certificatePem: string }>;
  /** Records an upstream assertion's id as used until `expiresAt`; false when it already was (a replay). */
  useAssertionId(assertionId: string, expiresAt: number): Promise<boolean>;
}

/** A request the browser must POST upstream (SAML HTTP-POST binding), by an auto-submitting form. */
export interface UpstreamForm {
  action: string;
  fields: Record<string, string>;
}

/** The connection with its secrets opened, as a strategy reads it. */
export interface UpstreamConnection {
  connection: Connection;
  /** This side of the trip (set where a request is at hand: the redirect upstream and the callback). */
  local?: LocalParty;
  options: Record<string, unknown>;
  /** Secret options by name, unsealed (absent when not set). */
  secrets: Record<string, string>;
  /** The server's shared keys for this preset, when the operator set them (development-keys mode). */
  developmentKeys?: DevelopmentKeys | undefined;
}

/** The callback's parameters (query of a GET, form of a POST), one string each. */
export type CallbackParameters = Record<string, string>;

export interface FederationStrategy {
  /** The connection's `strategy`, and the `provider` of its users' identities. */
  readonly name: string;
  /** `identities[].isSocial`. */
  readonly isSocial: boolean;
  /** Whether a connection without keys of its own is in development-keys mode with these options. */
  usesDevelopmentKeys?(options: Record<string, unknown>): boolean;
  /** The TypeBox schema of `options`. */
  readonly optionsSchema: TSchema;
  /** Options that are secrets: write-only on the API, sealed at rest. */
  readonly secretOptions: readonly string[];
  /** What a new connection starts with, under what the caller sent. */
  defaultOptions(): Record<string, unknown>;
  /** Rules the schema cannot say (one field or another, URL schemes); returns the problem, if any. */
  checkOptions(options: Record<string, unknown>): string | undefined;
  /** The local user id of an upstream subject, in the reference's form (`oidc|<connection>|<sub>`). */
  userIdOf(connection: Connection, subject: string): string;
  /** Where to send the browser: a redirect, or a form it posts (SAML HTTP-POST binding). */
  authorizationUrl(upstream: UpstreamConnection, trip: UpstreamTrip): Promise<URL | UpstreamForm>;
  /**
   * The options as stored, derived from the options as sent once they passed `checkOptions` (samlp: the
   * certificate's PEM and thumbprints from `signingCert`, as the reference stores them).
   */
  normalizeOptions?(options: Record<string, unknown>): Record<string, unknown>;
  /** Reads the upstream's answer; throws UpstreamError when it is an error or cannot be trusted. */
  completeCallback(upstream: UpstreamConnection, trip: UpstreamTrip, parameters: CallbackParameters, method: 'GET' | 'POST'): Promise<FederatedProfile>;
  /** Where to end the user's session at the upstream (federated logout), when the upstream offers it. */
  logoutUrl?(upstream: UpstreamConnection, logout: { idToken: string | undefined; returnTo: string | undefined }): Promise<URL | undefined>;
}
