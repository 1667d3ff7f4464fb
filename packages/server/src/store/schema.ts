/**
 * The tables, as Kysely sees them. Both dialects store the same shapes:
 * times are epoch milliseconds (bigint, read back as numbers), flags are 0/1 integers, and open-ended
 * documents (settings, client properties) are JSON text, so no query depends on a dialect's JSON operators.
 */
import type { Generated } from 'kysely';

export interface TenantsTable {
  id: string;
  name: string;
  friendly_name: string;
  /** 1 for the tenant created at first start, which follows GATEHOUSE_PUBLIC_URL. */
  is_default: number;
  /** Base URL without a trailing slash; the issuer is this plus `/`. */
  base_url: string;
  /** JSON: TenantSettings. */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface TenantDomainsTable {
  /** A host name, lower case, no port. */
  domain: string;
  tenant_id: string;
  created_at: number;
}

export type SigningKeyStatus = 'next' | 'current' | 'previous' | 'revoked';

export interface SigningKeysTable {
  kid: string;
  tenant_id: string;
  status: SigningKeyStatus;
  alg: string;
  /** JSON: the public JWK. */
  public_jwk: string;
  /** The private JWK, sealed with the master key. */
  private_key_sealed: string;
  created_at: number;
  activated_at: number | null;
  retired_at: number | null;
  /** Bumped on every rotation so that concurrent rotations conflict instead of interleaving. */
  version: Generated<number>;
}

export interface ClientsTable {
  client_id: string;
  tenant_id: string;
  name: string;
  app_type: string;
  is_first_party: number;
  token_endpoint_auth_method: string;
  /** Sealed with the master key; null for public clients. */
  client_secret_sealed: string | null;
  /** JSON: the remaining client fields (callbacks, web origins, grant types, …). */
  properties: string;
  created_at: number;
  updated_at: number;
}

export interface ResourceServersTable {
  id: string;
  tenant_id: string;
  identifier: string;
  name: string;
  /** 1 for the Management API, which cannot be deleted or renamed. */
  is_system: number;
  /** JSON: scopes, token_lifetime, signing_alg, … */
  properties: string;
  created_at: number;
  updated_at: number;
}

export interface ClientGrantsTable {
  id: string;
  tenant_id: string;
  client_id: string;
  audience: string;
  /** JSON array of scope names. */
  scope: string;
  /** JSON: ClientGrantProperties (organization_usage, subject_type, …); '{}' for rows older than 0003. */
  properties: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface ConnectionsTable {
  id: string;
  tenant_id: string;
  name: string;
  strategy: string;
  /** JSON: display_name, options, … */
  properties: string;
  created_at: number;
  updated_at: number;
}

export interface ConnectionClientsTable {
  connection_id: string;
  client_id: string;
  tenant_id: string;
}

/** DPoP proof ids used (0042). */
export interface UsedProofIdsTable {
  id: string;
  expires_at: number;
}

export interface UsedClientAssertionsTable {
  tenant_id: string;
  client_id: string;
  jti: string;
  expires_at: number;
}

export interface UsersTable {
  user_id: string;
  tenant_id: string;
  connection_id: string;
  /** Normalised: NFKC, lower case (connections/email-address.ts; migration 0011). */
  email: string | null;
  email_verified: number;
  username: string | null;
  phone_number: string | null;
  phone_verified: number;
  password_hash: string | null;
  blocked: number;
  /** JSON: name, given_name, family_name, nickname, picture, … */
  profile: string;
  user_metadata: string;
  app_metadata: string;
  linked_to: string | null;
  logins_count: number;
  last_login: number | null;
  last_ip: string | null;
  last_password_reset: number | null;
  created_at: number;
  updated_at: number;
}

export interface RolesTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  created_at: number;
  updated_at: number;
}

export interface RolePermissionsTable {
  role_id: string;
  tenant_id: string;
  resource_server_identifier: string;
  permission_name: string;
}

export interface UserRolesTable {
  user_id: string;
  role_id: string;
  tenant_id: string;
  created_at: number;
}

/**
 * What user search reads instead of the users (migration 0019): one row per searchable value of a user, kept by
 * the store's write path (store/user-search-terms.ts); `value` is lower case, NFKC, and cut to a bound.
 */
export interface UserSearchTermsTable {
  tenant_id: string;
  /** `email`, `email.domain`, `name`, `nickname`, …, `_any` (bare terms), `user_metadata.<path>`, `app_metadata.<path>`. */
  field: string;
  value: string;
  user_id: string;
}

/**
 * How many primary users each connection of a tenant has, kept by triggers on `users` (migration 0019), spread
 * over a few shards per connection so that concurrent signups do not queue on one row; a count is their sum.
 */
export interface UserCountsTable {
  tenant_id: string;
  connection_id: string;
  shard: number;
  primaries: number;
}

export interface UserBlocksTable {
  id: string;
  tenant_id: string;
  user_id: string | null;
  identifier: string;
  ip: string | null;
  created_at: number;
  expires_at: number;
}

export interface SsoSessionsTable {
  id: string;
  tenant_id: string;
  token_hash: string;
  user_id: string;
  authenticated_at: number;
  last_active_at: number;
  idle_expires_at: number;
  expires_at: number;
  ip: string | null;
  user_agent: string | null;
  created_at: number;
  /** JSON array of `amr` values (0023); null for sessions from before it, read as unknown. */
  amr?: string | null;
}

export interface LoginTransactionsTable {
  id: string;
  tenant_id: string;
  client_id: string;
  /** JSON: AuthorizationRequest. */
  request: string;
  browser_hash: string;
  csrf_token: string;
  expires_at: number;
  created_at: number;
  /** JSON: the WebAuthn ceremony a page started (0024), taken once by its answer. */
  webauthn_ceremony?: string | null;
}

export interface UserConsentsTable {
  tenant_id: string;
  user_id: string;
  client_id: string;
  audience: string;
  /** JSON array. */
  scopes: string;
  created_at: number;
  updated_at: number;
}

export interface Database {
  tenants: TenantsTable;
  tenant_domains: TenantDomainsTable;
  signing_keys: SigningKeysTable;
  clients: ClientsTable;
  resource_servers: ResourceServersTable;
  client_grants: ClientGrantsTable;
  connections: ConnectionsTable;
  connection_clients: ConnectionClientsTable;
  used_client_assertions: UsedClientAssertionsTable;
  used_proof_ids: UsedProofIdsTable;
  users: UsersTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  user_blocks: UserBlocksTable;
  user_search_terms: UserSearchTermsTable;
  user_counts: UserCountsTable;
  sso_sessions: SsoSessionsTable;
  login_transactions: LoginTransactionsTable;
  user_consents: UserConsentsTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  organization_member_roles: OrganizationMemberRolesTable;
  organization_connections: OrganizationConnectionsTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  group_roles: GroupRolesTable;
  organization_group_roles: OrganizationGroupRolesTable;
  organization_client_grants: OrganizationClientGrantsTable;
}

/** 0017: client grants associated with an organization. */
export interface OrganizationClientGrantsTable {
  organization_id: string;
  grant_id: string;
  tenant_id: string;
  created_at: number;
}

// --- event streams (0006) ----------------------------------------------------------------------------------

export type EventStreamStatus = 'enabled' | 'disabled';

export interface EventStreamsTable {
  id: string;
  tenant_id: string;
  name: string;
  status: EventStreamStatus;
  /** JSON array of event type names. */
  subscriptions: string;
  destination_type: string;
  /** JSON: the destination configuration without its secret (webhook_endpoint, webhook_authorization). */
  destination: string;
  /** The bearer token, basic password or custom header value, sealed; null when the method has none. */
  credential_sealed: string | null;
  /** The Standard Webhooks signing secret (`whsec_…`), sealed. */
  signing_secret_sealed: string;
  /** Final delivery failures since the last success; the stream is disabled at 500. */
  consecutive_failures: number;
  created_at: number;
  updated_at: number;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  /** JSON: the CloudEvent `data` ({ object, previous_object?, context? }). */
  data: string;
  created_at: number;
}

/** `pending` until delivered or out of attempts; only `failed` rows are listed as delivery records. */
export type EventDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface EventDeliveriesTable {
  stream_id: string;
  event_id: string;
  tenant_id: string;
  event_type: string;
  status: EventDeliveryStatus;
  /** Attempts made in the current round (a redelivery starts a new round). */
  attempt_count: number;
  /** When a pending row is due; a claim pushes it one lease ahead, so a crashed claimer's rows come back. */
  next_attempt_at: number;
  /** Who holds the current claim; the result of an attempt is written only under the same lease. */
  lease_id: string | null;
  /** 1 when redelivery was asked for: delivered even while the stream is disabled. */
  redelivery: number;
  /** JSON array of failed attempts: { timestamp (ms), error_message, duration (ms) }. */
  attempts: string;
  /** When the event was raised. */
  created_at: number;
  /** When it was delivered or finally failed. */
  completed_at: number | null;
}

// Declaration merging keeps this addition in one block of its own.
export interface Database {
  event_streams: EventStreamsTable;
  events: EventsTable;
  event_deliveries: EventDeliveriesTable;
}

export interface OrganizationsTable {
  /** `org_` + 16 alphanumerics. */
  id: string;
  tenant_id: string;
  /** Unique in the tenant. */
  name: string;
  display_name: string | null;
  /** JSON: OrganizationBranding, or null. */
  branding: string | null;
  /** JSON: string values. */
  metadata: string;
  created_at: number;
  updated_at: number;
}

export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  tenant_id: string;
  created_at: number;
}

export interface OrganizationMemberRolesTable {
  organization_id: string;
  user_id: string;
  role_id: string;
  tenant_id: string;
  created_at: number;
}

export interface OrganizationConnectionsTable {
  organization_id: string;
  connection_id: string;
  tenant_id: string;
  assign_membership_on_login: number;
  show_as_button: number;
  is_signup_enabled: number;
  is_enabled: number;
  organization_access_level: string | null;
  organization_connection_name: string | null;
  created_at: number;
  updated_at: number;
}

export interface GroupsTable {
  /** `grp_` + 22 base58 characters. */
  id: string;
  tenant_id: string;
  name: string;
  external_id: string | null;
  type: 'tenant' | 'connection' | 'organization';
  connection_id: string | null;
  organization_id: string | null;
  /** The owner's id (connection or organization), '' for a tenant group: names are unique within it. */
  scope: string;
  created_at: number;
  updated_at: number;
}

export interface GroupMembersTable {
  group_id: string;
  user_id: string;
  tenant_id: string;
  created_at: number;
}

export interface GroupRolesTable {
  group_id: string;
  role_id: string;
  tenant_id: string;
  created_at: number;
}

export interface OrganizationGroupRolesTable {
  organization_id: string;
  group_id: string;
  role_id: string;
  tenant_id: string;
  created_at: number;
}

// --- user tokens (0005) ------------------------------------------------------------------------------------

export interface AuthorizationCodesTable {
  /** SHA-256 (hex) of the code; the code itself is never stored. */
  code_hash: string;
  tenant_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  /** S256 PKCE challenge, or null when none was sent. */
  code_challenge: string | null;
  /** JSON: StoredAuthorization (scopes, audience, nonce, auth_time, session_id). */
  authorization: string;
  created_at: number;
  expires_at: number;
  redeemed_at: number | null;
  access_token_jti: string | null;
  access_token_expires_at: number | null;
  refresh_token_family: string | null;
  replayed_at: number | null;
  /** RFC 9449 §10: the DPoP key thumbprint the code is bound to (0022), or null. */
  dpop_jkt?: string | null;
}

export interface RefreshTokensTable {
  id: string;
  /** SHA-256 (hex) of the token. */
  token_hash: string;
  tenant_id: string;
  family_id: string;
  parent_id: string | null;
  client_id: string;
  user_id: string;
  audience: string | null;
  /** JSON array of scope names. */
  scopes: string;
  session_id: string | null;
  authenticated_at: number;
  rotating: number;
  created_at: number;
  last_used_at: number | null;
  rotated_at: number | null;
  revoked_at: number | null;
  expires_at: number | null;
  idle_expires_at: number | null;
  /** RFC 9449 §5: the DPoP key thumbprint a public client's refresh token is bound to (0022), or null. */
  dpop_jkt?: string | null;
}

export interface RevokedAccessTokensTable {
  tenant_id: string;
  jti: string;
  expires_at: number;
}

export interface Database {
  authorization_codes: AuthorizationCodesTable;
  refresh_tokens: RefreshTokensTable;
  revoked_access_tokens: RevokedAccessTokensTable;
}

// --- passwordless (0010) -----------------------------------------------------------------------------------

export interface PasswordlessCodesTable {
  id: string;
  tenant_id: string;
  connection_id: string;
  client_id: string;
  identifier: string;
  code_hash: string | null;
  link_token_hash: string | null;
  /** JSON: the start request's authParams. */
  auth_params: string;
  attempts: number;
  verified_at: number | null;
  expires_at: number;
  created_at: number;
}

export interface Database {
  passwordless_codes: PasswordlessCodesTable;
}

// --- messaging (0008) --------------------------------------------------------------------------------------

export type EmailStatus = 'pending' | 'sent' | 'failed' | 'kept';

export interface EmailOutboxTable {
  id: string;
  tenant_id: string;
  recipient: string;
  subject: string;
  /** Sealed JSON `{text, html}`; null once sent or given up. */
  body_sealed: string | null;
  status: EmailStatus;
  attempt_count: number;
  next_attempt_at: number;
  lease_id: string | null;
  last_error: string | null;
  created_at: number;
  completed_at: number | null;
}

/** `mfa_unblock`: the link of a factor lock's notice (mfa/lock-notice.ts). */
export type UserTicketPurpose = 'password_reset' | 'email_verification' | 'mfa_unblock';

export interface UserTicketsTable {
  /** SHA-256 (hex) of the ticket. */
  token_hash: string;
  tenant_id: string;
  user_id: string;
  purpose: UserTicketPurpose;
  email: string;
  client_id: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface Database {
  email_outbox: EmailOutboxTable;
  user_tickets: UserTicketsTable;
}

// --- cross-origin authentication (0009) --------------------------------------------------------------------

export interface CrossOriginTicketsTable {
  /** The public co_id. */
  id: string;
  tenant_id: string;
  client_id: string;
  user_id: string;
  ticket_hash: string;
  verifier_hash: string;
  browser_hash: string;
  transaction_id: string | null;
  expires_at: number;
  created_at: number;
}

export interface Database {
  cross_origin_tickets: CrossOriginTicketsTable;
}

// --- jobs (0016) -------------------------------------------------------------------------------------------

export type JobType = 'users_import' | 'users_export' | 'verification_email';
export type JobStatus = 'uploading' | 'pending' | 'processing' | 'completed' | 'failed';

export interface JobsTable {
  id: string;
  tenant_id: string;
  type: JobType;
  status: JobStatus;
  connection_id: string | null;
  external_id: string | null;
  /** JSON: the job's options (see jobs/job.ts). */
  options: string;
  source_digest: string | null;
  total: number;
  processed: number;
  inserted: number;
  updated: number;
  failed: number;
  cursor: string | null;
  status_details: string | null;
  download_key_sealed: string | null;
  lease_id: string | null;
  lease_until: number | null;
  started_at: number | null;
  completed_at: number | null;
  created_at: number;
  /** 1 while a CLI run that took the job on has not reported it yet (0043). */
  cli_report_pending: number;
}

export interface JobImportBatchesTable {
  job_id: string;
  seq: number;
  first_index: number;
  users: string;
}

export interface JobErrorsTable {
  job_id: string;
  position: number;
  user: string;
  errors: string;
}

export interface JobExportPartsTable {
  job_id: string;
  seq: number;
  data: string;
}

export interface Database {
  jobs: JobsTable;
  job_import_batches: JobImportBatchesTable;
  job_errors: JobErrorsTable;
  job_export_parts: JobExportPartsTable;
}

// --- tenant logs (0021) ------------------------------------------------------------------------------------

export interface LogsTable {
  /** Time-ordered decimal digits (logs/log-id.ts). */
  log_id: string;
  tenant_id: string;
  date: number;
  type: string;
  description: string | null;
  client_id: string | null;
  client_name: string | null;
  connection: string | null;
  connection_id: string | null;
  strategy: string | null;
  strategy_type: string | null;
  user_id: string | null;
  user_name: string | null;
  ip: string | null;
  user_agent: string | null;
  hostname: string | null;
  audience: string | null;
  scope: string | null;
  is_mobile: number;
  /** JSON, or null. */
  details: string | null;
}

// --- log streams (0026) -------------------------------------------------------------------------------------

export type LogStreamStatus = 'active' | 'paused' | 'suspended';

export interface LogStreamsTable {
  id: string;
  tenant_id: string;
  name: string;
  type: string;
  status: LogStreamStatus;
  is_priority: number;
  filters: string;
  sink: string;
  authorization_sealed: string | null;
  custom_headers_sealed: string | null;
  signing_secret_sealed: string;
  cursor: string;
  batch_end: string | null;
  attempt_count: number;
  next_attempt_at: number;
  lease_id: string | null;
  consecutive_failures: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  log_streams: LogStreamsTable;
}

// --- log rollups for /api/v2/stats (0033) -------------------------------------------------------------------

export interface LogDailyCountsTable {
  tenant_id: string;
  /** Days since the epoch (UTC). */
  day: number;
  type: string;
  n: number;
  first_at: number;
  last_at: number;
}

export interface LogUserLoginsTable {
  tenant_id: string;
  user_id: string;
  last_login: number;
}

export interface Database {
  log_daily_counts: LogDailyCountsTable;
  log_user_logins: LogUserLoginsTable;
}

// --- FAPI: pushed authorization requests, DPoP bindings (0022) ---------------------------------------------

export interface PushedAuthorizationRequestsTable {
  request_uri_hash: string;
  tenant_id: string;
  client_id: string;
  /** JSON object of string parameters. */
  params: string;
  dpop_jkt: string | null;
  expires_at: number;
  created_at: number;
}

// ---- 0018: custom domains, email provider, email templates ----

export interface CustomDomainsTable {
  id: string;
  tenant_id: string;
  domain: string;
  is_primary: number;
  status: string;
  verification_record: string;
  settings: string;
  verified_at: number | null;
  created_at: number;
}

export interface EmailProvidersTable {
  tenant_id: string;
  name: string;
  enabled: number;
  default_from_address: string | null;
  settings: string;
  credentials_sealed: string;
  created_at: number;
  updated_at: number;
}

export interface EmailTemplatesTable {
  tenant_id: string;
  template: string;
  body: string;
  from_address: string | null;
  subject: string | null;
  result_url: string | null;
  url_lifetime_in_seconds: number | null;
  include_email_in_redirect: number;
  enabled: number;
  created_at: number;
  updated_at: number;
}

export interface Database {
  logs: LogsTable;
  pushed_authorization_requests: PushedAuthorizationRequestsTable;
  custom_domains: CustomDomainsTable;
  email_providers: EmailProvidersTable;
  email_templates: EmailTemplatesTable;
}

// --- multi-factor authentication (0023) ---------------------------------------------------------------------

export type MfaEnrollmentType = 'totp' | 'recovery-code' | WebauthnEnrollmentType;
/** WebAuthn credentials (0024): a second factor (roaming: a security key; platform: this device), or a passkey (a first factor). */
export type WebauthnEnrollmentType = 'webauthn-roaming' | 'webauthn-platform' | 'passkey';

export interface MfaEnrollmentsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  type: MfaEnrollmentType;
  confirmed: number;
  secret_sealed: string | null;
  code_hash: string | null;
  last_time_step: number | null;
  created_at: number;
  confirmed_at: number | null;
  last_auth_at: number | null;
  credential_id?: string | null;
  public_key?: string | null;
  sign_count?: number | null;
  transports?: string | null;
  device_type?: string | null;
  backed_up?: number | null;
  user_agent?: string | null;
}

export interface MfaChallengesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  transaction_id: string;
  amr: string;
  recovery_code_sealed: string | null;
  expires_at: number;
  created_at: number;
  /** The email factor (0024): SHA-256 of the code last sent, its expiry, and how many were sent. */
  email_code_hash?: string | null;
  email_code_expires_at?: number | null;
  email_codes_sent?: number;
}

export interface Database {
  mfa_enrollments: MfaEnrollmentsTable;
  mfa_challenges: MfaChallengesTable;
}

/** 0025: a trip to an upstream identity provider and back (federation/). */
export interface FederationTransactionsTable {
  /** SHA-256 (hex) of the `state` sent upstream. */
  id: string;
  tenant_id: string;
  connection_id: string;
  login_transaction_id: string;
  browser_hash: string;
  code_verifier_sealed: string;
  nonce: string;
  expires_at: number;
  created_at: number;
}

/** 0025: which local user an upstream subject of a connection is. */
export interface FederatedIdentitiesTable {
  user_id: string;
  tenant_id: string;
  connection_id: string;
  subject: string;
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  id_token_sealed: string | null;
  updated_at: number;
}

export interface Database {
  federation_transactions: FederationTransactionsTable;
  federated_identities: FederatedIdentitiesTable;
}

// --- admin console (0027) ------------------------------------------------------------------------------------

export interface ConsoleSetupLinksTable {
  /** SHA-256 (hex) of the secret in the link. */
  token_hash: string;
  tenant_id: string;
  email: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface Database {
  console_setup_links: ConsoleSetupLinksTable;
}

// --- back-channel logout (0032) ------------------------------------------------------------------------------

export interface SsoSessionClientsTable {
  session_id: string;
  client_id: string;
  tenant_id: string;
  created_at: number;
}

export type BackchannelLogoutStatus = 'pending' | 'delivered' | 'failed';

export interface BackchannelLogoutDeliveriesTable {
  id: string;
  tenant_id: string;
  client_id: string;
  endpoint: string;
  issuer: string;
  user_id: string;
  session_id: string;
  initiator: string;
  status: BackchannelLogoutStatus;
  attempt_count: number;
  next_attempt_at: number;
  lease_id: string | null;
  last_error: string | null;
  created_at: number;
  completed_at: number | null;
}

export interface Database {
  sso_session_clients: SsoSessionClientsTable;
  backchannel_logout_deliveries: BackchannelLogoutDeliveriesTable;
}

// --- SAML identity provider: single logout and persistent NameIDs (0031) -------------------------------------

export interface SamlSessionParticipantsTable {
  session_id: string;
  tenant_id: string;
  client_id: string;
  name_id: string;
  name_id_format: string;
  sp_name_qualifier: string | null;
  session_index: string;
  created_at: number;
  expires_at: number;
}

export interface SamlLogoutsTable {
  id: string;
  tenant_id: string;
  /** JSON (auth-api/samlp/single-logout.ts). */
  state: string;
  expires_at: number;
}

export interface SamlPersistentIdsTable {
  tenant_id: string;
  client_id: string;
  user_id: string;
  name_id: string;
  created_at: number;
}

export interface Database {
  saml_session_participants: SamlSessionParticipantsTable;
  saml_logouts: SamlLogoutsTable;
  saml_persistent_ids: SamlPersistentIdsTable;
}

// --- SAML service provider: accepted assertion ids (0030) -----------------------------------------------------

export interface SamlAssertionIdsTable {
  connection_id: string;
  assertion_id: string;
  tenant_id: string;
  expires_at: number;
}

export interface Database {
  saml_assertion_ids: SamlAssertionIdsTable;
}

// --- remember this browser (0029) ----------------------------------------------------------------------------

export interface MfaRememberedBrowsersTable {
  /** SHA-256 (hex) of the cookie's secret. */
  token_hash: string;
  tenant_id: string;
  user_id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
}

export interface Database {
  mfa_remembered_browsers: MfaRememberedBrowsersTable;
}

// --- SAML single logout toward upstream identity providers (0034) --------------------------------------------

export interface SamlUpstreamSessionsTable {
  user_id: string;
  tenant_id: string;
  connection_id: string;
  name_id: string;
  name_id_format: string | null;
  session_index: string | null;
  updated_at: number;
}

export interface SamlUpstreamLogoutsTable {
  /** SHA-256 (hex) of the RelayState sent upstream. */
  id: string;
  tenant_id: string;
  connection_id: string;
  /** The LogoutRequest's ID: the LogoutResponse's InResponseTo. */
  request_id: string;
  return_to: string | null;
  expires_at: number;
  created_at: number;
}

export interface Database {
  saml_upstream_sessions: SamlUpstreamSessionsTable;
  saml_upstream_logouts: SamlUpstreamLogoutsTable;
}

// --- MFA enrollment tickets (0035) ----------------------------------------------------------------------------

export interface MfaEnrollmentTicketsTable {
  id: string;
  /** SHA-256 (hex) of the ticket's secret. */
  token_hash: string;
  tenant_id: string;
  user_id: string;
  factor: string | null;
  /** 0 | 1 */
  allow_multiple: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface Database {
  mfa_enrollment_tickets: MfaEnrollmentTicketsTable;
}
