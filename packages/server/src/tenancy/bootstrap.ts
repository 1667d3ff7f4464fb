/**
 * The ready tenant of first start, made idempotently on every start:
 *  - the default tenant, selected by the host of GATEHOUSE_PUBLIC_URL (and following it when it changes);
 *  - its signing keys (current and next);
 *  - the Management API resource server `<public url>/api/v2/` with every scope of the catalogue;
 *  - the admin machine-to-machine client, granted all of those scopes;
 *  - the database connection `Username-Password-Authentication`;
 *  - the `Default App` single-page client, pointed at the demo page;
 *  - the admin console's client and admin role, and while nobody holds that role a setup link (console/bootstrap.ts).
 * Runs once per start, before the server listens (in the primary process when there are several workers).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { newId } from '../crypto/ids.js';
import type { KeyRing } from '../crypto/key-ring.js';
import type { Sealer } from '../crypto/sealing.js';
import { ensureConsole, type ConsoleBootstrap } from '../console/bootstrap.js';
import { MANAGEMENT_SCOPES, describeScope } from '../management/scopes.js';
import { findClientGrant, insertClientGrant, updateClientGrant } from '../store/client-grants.js';
import { findClient, insertClient, listClients, replaceClient, type Client, type NewClient } from '../store/clients.js';
import { enableConnectionForClient, findConnectionByName, insertConnection } from '../store/connections.js';
import type { Store } from '../store/db.js';
import { findSystemResourceServer, insertResourceServer, replaceResourceServer } from '../store/resource-servers.js';
import {
  addTenantDomain,
  findDefaultTenant,
  insertTenant,
  normalizeDomain,
  updateTenant,
  type Tenant,
} from '../store/tenants.js';

export const DATABASE_CONNECTION_NAME = 'Username-Password-Authentication';
export const ADMIN_CLIENT_NAME = 'Gatehouse Admin (Management API)';
export const DEFAULT_APP_NAME = 'Default App';
export const ADMIN_CREDENTIALS_FILE = 'admin-credentials.json';
/** Access tokens for the Management API live 24 hours, as in the reference. */
const MANAGEMENT_TOKEN_LIFETIME = 86_400;

export interface AdminCredentials {
  client_id: string;
  /**
   * Present only when this start generated the secret (it is printed once, and saved to the file); never when
   * the operator supplied it (GATEHOUSE_ADMIN_CLIENT_SECRET): a secret they hold is not ours to print.
   */
  client_secret?: string;
  /** Where the generated credentials are saved; undefined when they came from the environment. */
  file: string | undefined;
  created: boolean;
  /** The client id and secret come from GATEHOUSE_ADMIN_CLIENT_ID / GATEHOUSE_ADMIN_CLIENT_SECRET. */
  fromEnvironment: boolean;
}

export interface BootstrapResult {
  tenant: Tenant;
  /** Set when this start moved the default tenant to a new public URL (tokens of the old issuer stop validating). */
  publicUrlChanged: { from: string; to: string } | undefined;
  admin: AdminCredentials;
  managementAudience: string;
  defaultAppClientId: string | undefined;
  /** The admin console's client and admin role, and the first admin's setup link while there is none (#15). */
  console: ConsoleBootstrap;
}

export function managementAudience(tenant: Pick<Tenant, 'baseUrl'> & Partial<Pick<Tenant, 'canonicalBaseUrl'>>): string {
  // On a custom domain too, as the reference: the Management API is the tenant's own.
  return `${tenant.canonicalBaseUrl ?? tenant.baseUrl}/api/v2/`;
}

export function isLoopbackHost(hostname: string): boolean {
  const host = normalizeDomain(hostname);
  return host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1' || host === '[::1]';
}

/** A localhost tenant also answers on the loopback addresses, so `curl 127.0.0.1:3000` works too. */
function domainsFor(baseUrl: string): string[] {
  const host = normalizeDomain(new URL(baseUrl).host);
  return isLoopbackHost(host) ? [...new Set([host, 'localhost', '127.0.0.1', '[::1]'])] : [host];
}

/**
 * The default tenant, at `baseUrl`. Only `gatehouse start` calls this (through bootstrap): its configuration
 * (GATEHOUSE_PUBLIC_URL, or the URL PORT and --https imply) is the one that says where the server is. Every
 * other command reads the tenant as stored.
 */
async function ensureDefaultTenant(store: Store, baseUrl: string): Promise<{ tenant: Tenant; previousBaseUrl?: string }> {
  const existing = await findDefaultTenant(store.db);
  if (!existing) {
    try {
      const tenant = await insertTenant(store.db, {
        id: newId.tenant(),
        name: 'default',
        friendlyName: 'Gatehouse',
        baseUrl,
        isDefault: true,
        // Webhooks to http://localhost are how people try event streams on a laptop.
        settings: { allow_insecure_webhooks: isLoopbackHost(new URL(baseUrl).hostname) },
        domains: domainsFor(baseUrl),
      });
      return { tenant };
    } catch (err) {
      // Another process bootstrapping the same database won the race; use its tenant.
      const winner = await findDefaultTenant(store.db);
      if (winner) return { tenant: winner };
      throw err;
    }
  }
  for (const domain of domainsFor(baseUrl)) await addTenantDomain(store.db, existing.id, domain);
  if (existing.baseUrl === baseUrl) return { tenant: existing };
  await updateTenant(store.db, existing.id, { baseUrl });
  return { tenant: { ...existing, baseUrl, issuer: `${baseUrl}/`, canonicalBaseUrl: baseUrl, issuers: [`${baseUrl}/`] }, previousBaseUrl: existing.baseUrl };
}

async function ensureManagementApi(store: Store, tenant: Tenant): Promise<string> {
  const identifier = managementAudience(tenant);
  const scopes = MANAGEMENT_SCOPES.map((value) => ({ value, description: describeScope(value) }));
  const existing = await findSystemResourceServer(store.db, tenant.id);
  if (!existing) {
    await insertResourceServer(store.db, {
      id: newId.resourceServer(),
      tenant_id: tenant.id,
      identifier,
      name: 'Gatehouse Management API',
      is_system: true,
      scopes,
      signing_alg: 'RS256',
      token_lifetime: MANAGEMENT_TOKEN_LIFETIME,
      token_lifetime_for_web: 7200,
      allow_offline_access: false,
      skip_consent_for_verifiable_first_party_clients: false,
    });
  } else if (existing.identifier !== identifier || existing.scopes.length !== scopes.length) {
    // The audience follows the public URL, and a newer catalogue adds its scopes.
    await replaceResourceServer(store.db, { ...existing, identifier, scopes });
  }
  return identifier;
}

function saveAdminCredentials(dataDir: string, credentials: Record<string, string>): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, ADMIN_CREDENTIALS_FILE);
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

async function ensureAdminClient(
  store: Store,
  sealer: Sealer,
  config: Config,
  tenant: Tenant,
  audience: string,
): Promise<AdminCredentials> {
  const fromEnvironment = config.adminClientId !== undefined && config.adminClientSecret !== undefined;
  const clients = await listClients(store.db, tenant.id);
  const existing = fromEnvironment
    ? await findClient(store.db, tenant.id, config.adminClientId!)
    : clients.find((c) => c.is_system);
  let admin: Client | undefined = existing;
  let secret: string | undefined;
  let created = false;

  if (!admin) {
    const clientId = fromEnvironment ? config.adminClientId! : newId.client();
    secret = fromEnvironment ? config.adminClientSecret! : newId.clientSecret();
    admin = await insertClient(store.db, adminClient(tenant.id, clientId, sealer.seal(secret, clientSecretContext(clientId))));
    created = true;
  } else if (fromEnvironment) {
    // The environment is the source of truth for this client's secret.
    const stored = admin.client_secret_sealed ? sealer.unseal(admin.client_secret_sealed, clientSecretContext(admin.client_id)) : undefined;
    if (stored !== config.adminClientSecret || !admin.is_system) {
      await replaceClient(store.db, {
        ...admin,
        is_system: true,
        client_secret_sealed: sealer.seal(config.adminClientSecret!, clientSecretContext(admin.client_id)),
      });
    }
  }

  const grant = await findClientGrant(store.db, tenant.id, admin.client_id, audience);
  if (!grant) {
    await insertClientGrant(store.db, { id: newId.clientGrant(), tenant_id: tenant.id, client_id: admin.client_id, audience, scope: [...MANAGEMENT_SCOPES] });
  } else if (grant.scope.length !== MANAGEMENT_SCOPES.length) {
    await updateClientGrant(store.db, { ...grant, scope: [...MANAGEMENT_SCOPES] });
  }

  let file: string | undefined;
  if (created && !fromEnvironment && secret) {
    file = saveAdminCredentials(config.dataDir, {
      client_id: admin.client_id,
      client_secret: secret,
      audience,
      token_endpoint: `${tenant.baseUrl}/oauth/token`,
    });
  } else if (!fromEnvironment) {
    file = path.join(config.dataDir, ADMIN_CREDENTIALS_FILE);
  }
  return { client_id: admin.client_id, ...(created && !fromEnvironment && { client_secret: secret }), file, created, fromEnvironment };
}

export function clientSecretContext(clientId: string): string {
  return `client_secret:${clientId}`;
}

function adminClient(tenantId: string, clientId: string, sealedSecret: string): NewClient {
  return {
    tenant_id: tenantId,
    client_id: clientId,
    name: ADMIN_CLIENT_NAME,
    description: 'Created at first start; holds every Management API scope.',
    app_type: 'non_interactive',
    is_first_party: true,
    token_endpoint_auth_method: 'client_secret_post',
    client_secret_sealed: sealedSecret,
    callbacks: [],
    allowed_logout_urls: [],
    web_origins: [],
    allowed_origins: [],
    grant_types: ['client_credentials'],
    is_system: true,
  };
}

function defaultAppUrls(baseUrl: string): Pick<NewClient, 'callbacks' | 'allowed_logout_urls' | 'web_origins' | 'allowed_origins'> {
  const demo = `${baseUrl}/demo`;
  return { callbacks: [demo, `${demo}/`], allowed_logout_urls: [demo, `${demo}/`], web_origins: [baseUrl], allowed_origins: [baseUrl] };
}

/** The Default App is made with the tenant; later starts only move its demo URLs along with the public URL. */
async function ensureDefaultApp(store: Store, tenant: Tenant, tenantIsNew: boolean): Promise<string | undefined> {
  const clients = await listClients(store.db, tenant.id);
  const existing = clients.find((c) => c.is_default_app);
  if (existing) {
    const urls = defaultAppUrls(tenant.baseUrl);
    if (existing.callbacks[0] !== urls.callbacks[0]) await replaceClient(store.db, { ...existing, ...urls });
    return existing.client_id;
  }
  if (!tenantIsNew) return undefined; // deleted on purpose: do not bring it back
  const client = await insertClient(store.db, {
    tenant_id: tenant.id,
    client_id: newId.client(),
    name: DEFAULT_APP_NAME,
    description: 'The demo single-page app served at /demo.',
    app_type: 'spa',
    is_first_party: true,
    token_endpoint_auth_method: 'none',
    client_secret_sealed: null,
    ...defaultAppUrls(tenant.baseUrl),
    grant_types: ['authorization_code', 'implicit', 'refresh_token'],
    cross_origin_authentication: true,
    is_default_app: true,
  });
  return client.client_id;
}

/** Made with the tenant, like the Default App; deleted through the Management API, it stays deleted. */
async function ensureDatabaseConnection(store: Store, tenant: Tenant, tenantIsNew: boolean, enableFor: string[]): Promise<void> {
  let connection = await findConnectionByName(store.db, tenant.id, DATABASE_CONNECTION_NAME);
  if (!connection) {
    if (!tenantIsNew) return;
    connection = {
      id: newId.connection(),
      tenant_id: tenant.id,
      name: DATABASE_CONNECTION_NAME,
      strategy: 'auth0',
      display_name: 'Email and password',
      options: {
        passwordPolicy: 'good',
        password_complexity_options: { min_length: 8 },
        brute_force_protection: true,
        requires_username: false,
        disable_signup: false,
      },
    };
    await insertConnection(store.db, connection, enableFor);
    return;
  }
  for (const clientId of enableFor) await enableConnectionForClient(store.db, connection, clientId);
}

/** The passwordless email connection the demo app signs in with by code; made with the tenant, like the others. */
export const EMAIL_CONNECTION_NAME = 'email';

async function ensureEmailConnection(store: Store, tenant: Tenant, tenantIsNew: boolean, enableFor: string[]): Promise<void> {
  if (!tenantIsNew || (await findConnectionByName(store.db, tenant.id, EMAIL_CONNECTION_NAME))) return;
  await insertConnection(
    store.db,
    { id: newId.connection(), tenant_id: tenant.id, name: EMAIL_CONNECTION_NAME, strategy: 'email', display_name: 'Email code or link', options: { disable_signup: false, brute_force_protection: true } },
    enableFor,
  );
}

export async function bootstrap(store: Store, keyRing: KeyRing, sealer: Sealer, config: Config): Promise<BootstrapResult> {
  const tenantIsNew = !(await findDefaultTenant(store.db));
  const { tenant, previousBaseUrl } = await ensureDefaultTenant(store, config.publicUrl);
  await keyRing.ensureKeys(tenant.id);
  const audience = await ensureManagementApi(store, tenant);
  const admin = await ensureAdminClient(store, sealer, config, tenant, audience);
  const defaultAppClientId = await ensureDefaultApp(store, tenant, tenantIsNew);
  await ensureDatabaseConnection(store, tenant, tenantIsNew, tenantIsNew && defaultAppClientId ? [defaultAppClientId] : []);
  await ensureEmailConnection(store, tenant, tenantIsNew, defaultAppClientId ? [defaultAppClientId] : []);
  const consoleBootstrap = await ensureConsole(store, tenant, audience, DATABASE_CONNECTION_NAME);
  const publicUrlChanged = previousBaseUrl === undefined ? undefined : { from: previousBaseUrl, to: tenant.baseUrl };
  return { tenant, publicUrlChanged, admin, managementAudience: audience, defaultAppClientId, console: consoleBootstrap };
}
