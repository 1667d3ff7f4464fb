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
  /** Lower case. */
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

export interface UserBlocksTable {
  id: string;
  tenant_id: string;
  user_id: string | null;
  identifier: string;
  ip: string | null;
  created_at: number;
  expires_at: number;
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
  users: UsersTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  user_blocks: UserBlocksTable;
}
