/**
 * Test fixtures for the user-token suites: real rows in the test server's storage (users with argon2id
 * passwords, clients with sealed secrets, APIs, roles) and authorization codes made exactly as /authorize makes
 * them, so the grants can be tested over HTTP without driving the login pages.
 */
import { createHash, randomBytes } from 'node:crypto';
import { newId, randomAlphanumeric } from '../../crypto/ids.js';
import { hashPassword } from '../../crypto/passwords.js';
import { type Client, insertClient, type NewClient } from '../../store/clients.js';
import { enableConnectionForClient, findConnectionByName } from '../../store/connections.js';
import { insertResourceServer, type ResourceServer } from '../../store/resource-servers.js';
import { addRolePermissions, assignRoles, insertRole } from '../../store/roles.js';
import { insertUser, type User } from '../../store/users.js';
import { clientSecretContext, DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import type { TestServer } from '../../test-support/server.js';
import type { UserAuthorization } from './authorization.js';
import { createAuthorizationCode } from './authorization-code.js';

export const PASSWORD = 'correct horse battery staple';
export const REDIRECT_URI = 'https://app.example/callback';

function tenantOf(server: TestServer) {
  return server.server.prepared.bootstrap!.tenant;
}

export async function createUser(server: TestServer, overrides: Partial<User> = {}): Promise<User> {
  const tenant = tenantOf(server);
  const db = server.server.prepared.store.db;
  const connection = (await findConnectionByName(db, tenant.id, DATABASE_CONNECTION_NAME))!;
  const now = Date.now();
  const user: User = {
    user_id: `auth0|${randomBytes(12).toString('hex')}`,
    tenant_id: tenant.id,
    connection_id: connection.id,
    email: `${randomAlphanumeric(10).toLowerCase()}@example.com`,
    email_verified: true,
    username: null,
    phone_number: null,
    phone_verified: false,
    password_hash: await hashPassword(PASSWORD),
    blocked: false,
    profile: { name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace' },
    user_metadata: {},
    app_metadata: {},
    linked_to: null,
    logins_count: 0,
    last_login: null,
    last_ip: null,
    last_password_reset: null,
    created_at: now,
    updated_at: now,
    ...overrides,
  };
  await insertUser(db, user);
  return user;
}

export interface TestClient {
  client: Client;
  /** Undefined for public clients. */
  secret: string | undefined;
  /** The body fields that authenticate it (client_secret_post, or client_id alone). */
  auth: Record<string, string>;
}

/** A client (public unless `token_endpoint_auth_method` says otherwise) with the database connection enabled. */
export async function createClient(server: TestServer, overrides: Partial<NewClient> = {}): Promise<TestClient> {
  const tenant = tenantOf(server);
  const { store, sealer } = server.server.prepared;
  const clientId = newId.client();
  const method = overrides.token_endpoint_auth_method ?? 'none';
  const secret = method === 'none' ? undefined : newId.clientSecret();
  const client = await insertClient(store.db, {
    tenant_id: tenant.id,
    client_id: clientId,
    name: `Test ${clientId.slice(0, 6)}`,
    app_type: method === 'none' ? 'spa' : 'regular_web',
    is_first_party: true,
    token_endpoint_auth_method: method,
    client_secret_sealed: secret ? sealer.seal(secret, clientSecretContext(clientId)) : null,
    callbacks: [REDIRECT_URI],
    allowed_logout_urls: [],
    web_origins: ['https://app.example'],
    allowed_origins: ['https://app.example'],
    grant_types: ['authorization_code', 'refresh_token'],
    ...overrides,
  });
  const connection = (await findConnectionByName(store.db, tenant.id, DATABASE_CONNECTION_NAME))!;
  await enableConnectionForClient(store.db, connection, clientId);
  return { client, secret, auth: secret ? { client_id: clientId, client_secret: secret } : { client_id: clientId } };
}

export async function createApi(server: TestServer, overrides: Partial<ResourceServer> = {}): Promise<ResourceServer> {
  const tenant = tenantOf(server);
  const api: ResourceServer = {
    id: newId.resourceServer(),
    tenant_id: tenant.id,
    identifier: `https://api-${randomAlphanumeric(8).toLowerCase()}.example/`,
    name: 'Orders',
    is_system: false,
    scopes: [
      { value: 'read:orders', description: '' },
      { value: 'write:orders', description: '' },
    ],
    signing_alg: 'RS256',
    token_lifetime: 600,
    token_lifetime_for_web: 300,
    allow_offline_access: true,
    skip_consent_for_verifiable_first_party_clients: true,
    ...overrides,
  };
  await insertResourceServer(server.server.prepared.store.db, api);
  return api;
}

/** Gives the user a new role holding these permissions of the API. */
export async function grantPermissions(server: TestServer, user: User, api: string, permissions: string[]): Promise<void> {
  const tenant = tenantOf(server);
  const db = server.server.prepared.store.db;
  const now = Date.now();
  const role = { id: newId.role(), tenant_id: tenant.id, name: `role-${randomAlphanumeric(8)}`, description: '', created_at: now, updated_at: now };
  await insertRole(db, role);
  await addRolePermissions(
    db,
    tenant.id,
    role.id,
    permissions.map((permission_name) => ({ resource_server_identifier: api, permission_name })),
  );
  await assignRoles(db, tenant.id, [{ user_id: user.user_id, role_id: role.id }]);
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface CodeOptions {
  scopes?: string[];
  audience?: string | null;
  nonce?: string;
  sessionId?: string;
  redirectUri?: string;
  /** A PKCE challenge; `pkce: false` binds none. */
  challenge?: string;
}

/** A code as /authorize would issue it after the user signed in; `pkce` is generated unless a challenge is given. */
export async function issueCode(
  server: TestServer,
  client: Client,
  user: User,
  options: CodeOptions = {},
): Promise<{ code: string; authorization: UserAuthorization }> {
  const authorization: UserAuthorization = {
    tenant: tenantOf(server),
    client,
    user,
    scopes: options.scopes ?? ['openid', 'profile', 'email', 'offline_access'],
    audience: options.audience ?? null,
    authTime: Math.floor(Date.now() / 1000) - 5,
    ...(options.nonce !== undefined && { nonce: options.nonce }),
    ...(options.sessionId !== undefined && { sessionId: options.sessionId }),
  };
  const code = await createAuthorizationCode(server.server.services, authorization, {
    redirectUri: options.redirectUri ?? REDIRECT_URI,
    ...(options.challenge !== undefined && { codeChallenge: options.challenge, codeChallengeMethod: 'S256' as const }),
  });
  return { code, authorization };
}

/** POSTs to a token-family endpoint as a form (or JSON) and returns status, body and headers. */
export async function post(
  server: TestServer,
  path: string,
  body: Record<string, unknown>,
  options: { json?: boolean; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers; text: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': options.json ? 'application/json' : 'application/x-www-form-urlencoded', ...options.headers },
    body: options.json ? JSON.stringify(body) : new URLSearchParams(body as Record<string, string>),
  });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { unparsed: text };
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}
