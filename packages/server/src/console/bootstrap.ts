/**
 * What the admin console needs in a tenant, made on every start where it is missing (first start, and an
 * upgrade of a tenant made before the console existed):
 *  - its own first-party SPA client (code + PKCE through /authorize, back to <base>/console/);
 *  - the role whose members may use it: every Management API permission. The console's access token carries
 *    them as `permissions` (auth-api/user-tokens/issue.ts) and the Management API accepts them like scopes;
 *  - while nobody holds that role, a one-time setup link for the first admin (printed by `gatehouse start`).
 */
import { newId } from '../crypto/ids.js';
import { MANAGEMENT_SCOPES } from '../management/scopes.js';
import { findClient, insertClient, listClients, replaceClient, type NewClient } from '../store/clients.js';
import { enableConnectionForClient, findConnectionByName } from '../store/connections.js';
import type { Store } from '../store/db.js';
import { addRolePermissions, findRoleByName, insertRole, listRoleMembers, listRolePermissions, type Role } from '../store/roles.js';
import type { Tenant } from '../store/tenants.js';
import { issueSetupLink, setupUrl, voidFirstAdminLinks } from './setup-links.js';

export const CONSOLE_CLIENT_NAME = 'Gatehouse Console';
export const CONSOLE_ADMIN_ROLE_NAME = 'Gatehouse Console Admin';
export const CONSOLE_PATH = '/console';

export interface ConsoleBootstrap {
  clientId: string;
  adminRoleId: string;
  /** Set when nobody is a console admin yet: the first admin's one-time link (its secret is not stored). */
  setupUrl: string | undefined;
}

function consoleUrls(baseUrl: string): Pick<NewClient, 'callbacks' | 'allowed_logout_urls' | 'web_origins' | 'allowed_origins' | 'initiate_login_uri'> {
  const home = `${baseUrl}${CONSOLE_PATH}/`;
  return { callbacks: [home], allowed_logout_urls: [home], web_origins: [baseUrl], allowed_origins: [baseUrl], initiate_login_uri: home };
}

async function ensureConsoleClient(store: Store, tenant: Tenant, connectionName: string): Promise<string> {
  const urls = consoleUrls(tenant.baseUrl);
  const existing = (await listClients(store.db, tenant.id)).find((c) => c.is_console);
  let clientId = existing?.client_id;
  if (existing) {
    // Its URLs follow the public URL, as the Default App's do.
    if (existing.callbacks[0] !== urls.callbacks[0]) await replaceClient(store.db, { ...existing, ...urls });
  } else {
    clientId = newId.client();
    await insertClient(store.db, {
      tenant_id: tenant.id,
      client_id: clientId,
      name: CONSOLE_CLIENT_NAME,
      description: 'The admin console at /console; made by Gatehouse, not deletable.',
      app_type: 'spa',
      is_first_party: true,
      token_endpoint_auth_method: 'none',
      client_secret_sealed: null,
      ...urls,
      grant_types: ['authorization_code'],
      is_console: true,
    });
  }
  // Admins sign in with a password; a database connection deleted on purpose is not brought back here.
  const connection = await findConnectionByName(store.db, tenant.id, connectionName);
  if (connection && (await findClient(store.db, tenant.id, clientId!))) await enableConnectionForClient(store.db, connection, clientId!);
  return clientId!;
}

/** The admin role, holding every Management API permission of this catalogue and audience. */
async function ensureAdminRole(store: Store, tenant: Tenant, audience: string): Promise<Role> {
  let role = await findRoleByName(store.db, tenant.id, CONSOLE_ADMIN_ROLE_NAME);
  if (!role) {
    const now = Date.now();
    role = { id: newId.role(), tenant_id: tenant.id, name: CONSOLE_ADMIN_ROLE_NAME, description: 'May use the admin console: every Management API permission.', created_at: now, updated_at: now };
    try {
      await insertRole(store.db, role);
    } catch (err) {
      // Another process bootstrapping the same database made it first.
      role = await findRoleByName(store.db, tenant.id, CONSOLE_ADMIN_ROLE_NAME);
      if (!role) throw err;
    }
  }
  const held = new Set((await listRolePermissions(store.db, tenant.id, [role.id])).filter((p) => p.resource_server_identifier === audience).map((p) => p.permission_name));
  const missing = MANAGEMENT_SCOPES.filter((scope) => !held.has(scope));
  await addRolePermissions(store.db, tenant.id, role.id, missing.map((permission_name) => ({ resource_server_identifier: audience, permission_name })));
  return role;
}

export async function ensureConsole(store: Store, tenant: Tenant, audience: string, connectionName: string): Promise<ConsoleBootstrap> {
  const clientId = await ensureConsoleClient(store, tenant, connectionName);
  const role = await ensureAdminRole(store, tenant, audience);
  let link: string | undefined;
  if ((await listRoleMembers(store.db, tenant.id, role.id)).length === 0) {
    // Only the newest printed link works: an older banner's link (perhaps in a shared terminal log) is void.
    await voidFirstAdminLinks(store.db, tenant.id);
    link = setupUrl(tenant.baseUrl, await issueSetupLink(store.db, tenant.id, null));
  }
  return { clientId, adminRoleId: role.id, setupUrl: link };
}
