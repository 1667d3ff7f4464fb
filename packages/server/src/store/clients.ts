/** Clients (applications) of a tenant. The secret stays sealed here; callers unseal it only to compare. */
import { sql, type Kysely } from 'kysely';
import { nextVersion, updateAsRead } from './concurrent-change.js';
import type { ClientsTable, Database } from './schema.js';

export type AppType = 'spa' | 'native' | 'regular_web' | 'non_interactive';
export type TokenEndpointAuthMethod = 'none' | 'client_secret_post' | 'client_secret_basic';

/** A public key registered for private_key_jwt (B.7 `client_authentication_methods.private_key_jwt`). */
export interface PrivateKeyJwtCredential {
  id: string;
  credential_type: 'public_key';
  name?: string;
  /** SPKI public key or X.509 certificate, PEM. */
  pem: string;
  /** ES256 (an EC P-256 key) is ours, for FAPI 2.0; the reference has the three RSA algorithms. */
  alg?: 'RS256' | 'RS384' | 'PS256' | 'ES256';
  created_at?: string;
  /** ISO 8601; after it the key should no longer be accepted. */
  expires_at?: string;
  parse_expiry_from_cert?: boolean;
}

export interface TlsClientAuthCredential {
  id: string;
  credential_type: 'cert_subject_dn';
  name?: string;
  subject_dn: string;
  created_at?: string;
}

export interface SelfSignedTlsCredential {
  id: string;
  credential_type: 'x509_cert';
  name?: string;
  pem: string;
  created_at?: string;
}

/** At most one of these is set; when one is, it replaces token_endpoint_auth_method. */
export interface ClientAuthenticationMethods {
  private_key_jwt?: { credentials: PrivateKeyJwtCredential[] };
  tls_client_auth?: { credentials: TlsClientAuthCredential[] };
  self_signed_tls_client_auth?: { credentials: SelfSignedTlsCredential[] };
}

/** `jwt_configuration` (B.7). Tokens are signed RS256 only, so `alg` is RS256 whenever it is set. */
export interface JwtConfiguration {
  lifetime_in_seconds?: number;
  secret_encoded?: boolean;
  scopes?: Record<string, unknown>;
  alg?: 'RS256';
}

/** `refresh_token` (B.7, C.3 "Refresh token rotation"). */
export interface RefreshTokenConfiguration {
  rotation_type: 'rotating' | 'non-rotating';
  expiration_type: 'expiring' | 'non-expiring';
  /** Seconds during which the previous token of a rotation may be exchanged again. */
  leeway?: number;
  token_lifetime?: number;
  infinite_token_lifetime?: boolean;
  idle_token_lifetime?: number;
  infinite_idle_token_lifetime?: boolean;
  policies?: { audience: string; scope: string[] }[] | null;
}

/**
 * Documented client fields (B.7) that are stored and echoed as sent, with no behaviour here yet. The
 * Management API validates their shape; the features that come to use them type them further.
 */
export const OPAQUE_CLIENT_FIELDS = [
  'oidc_logout',
  'oidc_backchannel_logout',
  'session_transfer',
  'encryption_key',
  'addons',
  'mobile',
  'native_social_login',
  'default_organization',
  'token_exchange',
  'token_quota',
  'express_configuration',
  'my_organization_configuration',
  'custom_login_page',
  'custom_login_page_preview',
  'form_template',
  'custom_login_page_on',
  'skip_non_verifiable_callback_uri_confirmation_prompt',
  'third_party_security_mode',
  'redirection_policy',
  'resource_server_identifier',
  'async_approval_notification_channels',
  'organization_discovery_methods',
] as const;
export type OpaqueClientField = (typeof OPAQUE_CLIENT_FIELDS)[number];

/** Fields kept in the JSON `properties` column. */
/** `signed_request_object` (B.7; RFC 9101): whether /authorize and /oauth/par take only signed request objects, and which keys sign them. */
export interface SignedRequestObjectSettings {
  required?: boolean;
  /** Ids of private_key_jwt credentials that may sign request objects; all of them when absent. */
  credentials?: { id: string }[];
}

export interface ClientProperties extends Partial<Record<OpaqueClientField, unknown>> {
  signed_request_object?: SignedRequestObjectSettings;
  client_authentication_methods?: ClientAuthenticationMethods;
  description?: string;
  logo_uri?: string;
  callbacks: string[];
  allowed_logout_urls: string[];
  /** Origins (`scheme://host[:port]`), normalised as a browser sends them in `Origin`. */
  web_origins: string[];
  allowed_origins: string[];
  grant_types: string[];
  client_aliases?: string[];
  allowed_clients?: string[];
  cross_origin_authentication?: boolean;
  cross_origin_loc?: string;
  jwt_configuration?: JwtConfiguration;
  refresh_token?: RefreshTokenConfiguration;
  /** At most 10 keys, string values of at most 255 characters. */
  client_metadata?: Record<string, string>;
  oidc_conformant?: boolean;
  sso?: boolean;
  sso_disabled?: boolean;
  initiate_login_uri?: string;
  organization_usage?: 'deny' | 'allow' | 'require';
  organization_require_behavior?: 'no_prompt' | 'pre_login_prompt' | 'post_login_prompt';
  is_token_endpoint_ip_header_trusted?: boolean;
  require_pushed_authorization_requests?: boolean;
  require_proof_of_possession?: boolean;
  /** RFC 8705 §3.4: access tokens bound to the client certificate of the token request. */
  tls_client_certificate_bound_access_tokens?: boolean;
  /** A FAPI profile; those whose sender constraint is mTLS bind access tokens to the client certificate. */
  compliance_level?: string | null;
  par_request_expiry?: number;
  /** Not deletable through the Management API (the admin client). */
  is_system?: boolean;
  /** The demo app made at first start; its URLs follow the public URL. */
  is_default_app?: boolean;
  /** The admin console's own SPA client (#15), made at every start where it is missing; not deletable. */
  is_console?: boolean;
}

export interface Client extends ClientProperties {
  tenant_id: string;
  client_id: string;
  name: string;
  app_type: AppType;
  is_first_party: boolean;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  client_secret_sealed: string | null;
  created_at: number;
  updated_at: number;
}

export type NewClient = Omit<Client, 'created_at' | 'updated_at'>;

function fromRow(row: ClientsTable): Client {
  return {
    ...(JSON.parse(row.properties) as ClientProperties),
    tenant_id: row.tenant_id,
    client_id: row.client_id,
    name: row.name,
    app_type: row.app_type as AppType,
    is_first_party: row.is_first_party === 1,
    token_endpoint_auth_method: row.token_endpoint_auth_method as TokenEndpointAuthMethod,
    client_secret_sealed: row.client_secret_sealed,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function toRow(client: NewClient, now: number): Omit<ClientsTable, 'created_at'> {
  const { tenant_id, client_id, name, app_type, is_first_party, token_endpoint_auth_method, client_secret_sealed, ...props } = client;
  return {
    tenant_id,
    client_id,
    name,
    app_type,
    is_first_party: is_first_party ? 1 : 0,
    token_endpoint_auth_method,
    client_secret_sealed,
    properties: JSON.stringify(props),
    updated_at: now,
  };
}

export async function insertClient(db: Kysely<Database>, client: NewClient, now = Date.now()): Promise<Client> {
  const row = { ...toRow(client, now), created_at: now };
  await db.insertInto('clients').values(row).execute();
  return fromRow(row);
}

/** Replaces every field but the ids and created_at. */
export async function replaceClient(db: Kysely<Database>, client: NewClient, now = Date.now()): Promise<void> {
  await db
    .updateTable('clients')
    .set(toRow(client, now))
    .where('tenant_id', '=', client.tenant_id)
    .where('client_id', '=', client.client_id)
    .execute();
}

/** Replaces the client only while it is still at the version `readAt` (store/concurrent-change.ts). */
export async function replaceClientAsRead(db: Kysely<Database>, client: NewClient, readAt: number, now = Date.now()): Promise<boolean> {
  const { tenant_id, client_id } = client;
  return updateAsRead(db, 'clients', { tenant_id, client_id }, readAt, toRow(client, nextVersion(readAt, now)));
}

/**
 * Sets a new secret and nothing else, moving the version forward, so that a PATCH that read the client before
 * the rotation writes nothing back over it (store/concurrent-change.ts).
 */
export async function replaceClientSecret(db: Kysely<Database>, tenantId: string, clientId: string, sealedSecret: string, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set({ client_secret_sealed: sealedSecret, updated_at: sql<number>`case when updated_at >= ${now} then updated_at + 1 else ${now} end` })
    .where('tenant_id', '=', tenantId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findClient(db: Kysely<Database>, tenantId: string, clientId: string): Promise<Client | undefined> {
  const row = await db
    .selectFrom('clients')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Deletes the client; its client grants and connection links go with it (foreign keys, ON DELETE CASCADE). */
export async function deleteClient(db: Kysely<Database>, tenantId: string, clientId: string): Promise<boolean> {
  const result = await db.deleteFrom('clients').where('tenant_id', '=', tenantId).where('client_id', '=', clientId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listClients(db: Kysely<Database>, tenantId: string): Promise<Client[]> {
  const rows = await db.selectFrom('clients').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('client_id').execute();
  return rows.map(fromRow);
}
