/**
 * Tenant as code: `gatehouse export` writes a tenant's configuration (APIs, clients, connections, client
 * grants, roles) to JSON; `gatehouse import` makes a tenant match such a file, idempotently.
 *
 * Both go through the Management API in-process (app.inject with a token minted for the tenant's admin client),
 * so an import is validated, defaulted and secret-handled exactly like the same calls over HTTP.
 *  - Objects are matched by name (clients, connections, roles), identifier (APIs), or client + audience
 *    (grants); references between them use those names, so a file moves between tenants and environments.
 *  - Secrets are never exported; clients created by an import get fresh secrets (readable with read:client_keys).
 *  - The system objects every tenant has (the Management API and the admin client) are left out.
 *  - The tenant's base URL is written as BASE_URL_PLACEHOLDER wherever it appears (callbacks, origins, the
 *    Management API audience of a grant) and replaced by the importing tenant's, so a file is portable.
 *  - Objects in the tenant but not in the file are left alone: an import adds and updates, it never deletes.
 */
import { signClientToken } from '../crypto/jwt.js';
import type { App, Services } from '../services.js';
import { listClients } from '../store/clients.js';
import { listTenantDomains, type Tenant } from '../store/tenants.js';
import { MANAGEMENT_SCOPES } from '../management/scopes.js';
import { CONSOLE_ADMIN_ROLE_NAME, CONSOLE_CLIENT_NAME, CONSOLE_PATH } from '../console/bootstrap.js';
import { managementAudience } from './bootstrap.js';

export const TENANT_FORMAT = 'gatehouse-tenant';
export const TENANT_FORMAT_VERSION = 1;
export const BASE_URL_PLACEHOLDER = '{{base_url}}';

type Json = Record<string, unknown>;

export interface TenantDocument {
  format: typeof TENANT_FORMAT;
  version: number;
  resource_servers: Json[];
  clients: Json[];
  connections: Json[];
  client_grants: Json[];
  roles: Json[];
}

export interface ImportReport {
  created: string[];
  updated: string[];
  unchanged: string[];
}

export class TenantDocumentError extends Error {
  override name = 'TenantDocumentError';
}

/** Response fields that describe the object's identity or state in one tenant, not its configuration. */
const READ_ONLY: Record<string, readonly string[]> = {
  resource_servers: ['id', 'is_system'],
  clients: ['client_id', 'client_secret', 'tenant', 'global', 'signing_keys'],
  connections: ['id', 'enabled_clients', 'realms'],
  client_grants: ['id', 'client_id', 'is_system'],
  roles: ['id'],
};

/** An object as a file holds it: no read-only fields, no nulls, credentials without their ids. */
function portable(kind: string, object: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(kind === 'clients' ? portableAuthenticationMethods(object) : object)) {
    if (!READ_ONLY[kind]!.includes(key) && value !== null) out[key] = value;
  }
  return out;
}

/** Replaces `from` by `to` in every string of a JSON value. */
function replaceInStrings<T>(value: T, from: string, to: string): T {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? v.split(from).join(to) : v))) as T;
}

/** Credentials keep their keys and names; their ids belong to the tenant they were made in. */
function portableAuthenticationMethods(client: Json): Json {
  const methods = client.client_authentication_methods as Record<string, { credentials: Json[] }> | undefined;
  if (!methods) return client;
  const portable = Object.fromEntries(
    Object.entries(methods).map(([method, { credentials }]) => [
      method,
      { credentials: credentials.map(({ id: _id, created_at: _c, updated_at: _u, ...rest }) => rest) },
    ]),
  );
  return { ...client, client_authentication_methods: portable };
}

/** Stable JSON for comparisons: keys sorted at every level. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

/** True when every field of `desired` already has that value in `current`. */
function matches(desired: Json, current: Json): boolean {
  return Object.entries(desired).every(([key, value]) => canonical(value) === canonical(current[key]));
}

interface ManagementCall {
  (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Json | Json[]>;
}

/** Calls the tenant's Management API in-process as its admin client, with every scope. */
export async function managementCaller(app: App, services: Pick<Services, 'store' | 'keyRing'>, tenant: Tenant): Promise<ManagementCall> {
  const admin = (await listClients(services.store.db, tenant.id)).find((c) => c.is_system);
  if (!admin) throw new TenantDocumentError(`tenant ${tenant.name} has no admin client`);
  const [host] = await listTenantDomains(services.store.db, tenant.id);
  if (!host) throw new TenantDocumentError(`tenant ${tenant.name} has no domain`);
  const token = await signClientToken(services.keyRing, tenant, admin.client_id, managementAudience(tenant), MANAGEMENT_SCOPES, 600);
  return async (method, path, body) => {
    const res = await app.inject({
      method,
      url: `/api/v2${path}`,
      headers: { host, authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
    if (res.statusCode >= 400) {
      const error = res.json<{ message?: string }>();
      throw new TenantDocumentError(`${method} ${path}: ${res.statusCode} ${error.message ?? res.body}`);
    }
    return res.body ? res.json<Json | Json[]>() : {};
  };
}

/** Role lists page by offset only, as in the reference; the other lists also take checkpoints. */
const OFFSET_ONLY = new Set(['roles', 'permissions']);

/** Every item of a list operation, following checkpoint paging (or offset paging where that is all there is). */
async function listAll(call: ManagementCall, path: string, collection: string): Promise<Json[]> {
  const items: Json[] = [];
  const join = path.includes('?') ? '&' : '?';
  if (OFFSET_ONLY.has(collection)) {
    for (let page = 0; ; page++) {
      const body = (await call('GET', `${path}${join}per_page=100&page=${page}&include_totals=true`)) as Json;
      items.push(...((body[collection] as Json[] | undefined) ?? []));
      if (items.length >= (body.total as number) || ((body[collection] as Json[] | undefined) ?? []).length === 0) return items;
    }
  }
  let from: string | undefined;
  do {
    const page = (await call('GET', `${path}${join}take=100${from ? `&from=${encodeURIComponent(from)}` : ''}`)) as Json;
    items.push(...((page[collection] as Json[] | undefined) ?? []));
    from = page.next as string | undefined;
  } while (from);
  return items;
}

/** The admin console's own client (console/bootstrap.ts): every Gatehouse makes its own at start, for its own URL. */
function isConsoleClient(client: Json): boolean {
  return client.name === CONSOLE_CLIENT_NAME && ((client.callbacks as string[] | undefined) ?? []).some((url) => url.endsWith(`${CONSOLE_PATH}/`));
}

/**
 * Clients minus the admin client, which is the one holding the system grant to the Management API, minus the
 * global client ("All Applications"), a read-only view every tenant has rather than configuration, and minus the
 * console's client, which each server makes for itself.
 */
async function configurableClients(call: ManagementCall, grants?: Json[]): Promise<Json[]> {
  const system = new Set(((grants ?? (await listAll(call, '/client-grants', 'client_grants'))).filter((g) => g.is_system)).map((g) => g.client_id));
  return (await listAll(call, '/clients?is_global=false', 'clients')).filter((c) => !system.has(c.client_id) && !isConsoleClient(c));
}

function uniqueByName(kind: string, items: Json[], key = 'name'): Map<string, Json> {
  const byName = new Map<string, Json>();
  for (const item of items) {
    const name = item[key] as string;
    if (byName.has(name)) throw new TenantDocumentError(`two ${kind} are named "${name}"; names must be unique to export or import`);
    byName.set(name, item);
  }
  return byName;
}

export async function exportTenant(call: ManagementCall, tenant: Tenant): Promise<TenantDocument> {
  const apis = (await listAll(call, '/resource-servers', 'resource_servers')).filter((rs) => !rs.is_system);
  const grants = await listAll(call, '/client-grants', 'client_grants');
  const clients = await configurableClients(call, grants);
  const clientNames = new Map<string, string>();
  for (const [name, client] of uniqueByName('clients', clients)) clientNames.set(client.client_id as string, name);

  const connections = await listAll(call, '/connections', 'connections');
  // The console's admin role is made by each server at start, with permissions on its own Management API.
  const roles = (await listAll(call, '/roles', 'roles')).filter((role) => role.name !== CONSOLE_ADMIN_ROLE_NAME);
  const rolePermissions = await Promise.all(
    roles.map(async (role) =>
      (await listAll(call, `/roles/${role.id as string}/permissions`, 'permissions')).map((p) => ({
        resource_server_identifier: p.resource_server_identifier,
        permission_name: p.permission_name,
      })),
    ),
  );

  const doc: TenantDocument = {
    format: TENANT_FORMAT,
    version: TENANT_FORMAT_VERSION,
    resource_servers: apis.map((rs) => portable('resource_servers', rs)),
    clients: clients.map((c) => portable('clients', c)),
    connections: connections.map((c) => ({
      ...portable('connections', c),
      enabled_clients: ((c.enabled_clients as string[] | undefined) ?? []).flatMap((id) => clientNames.get(id) ?? []).sort(),
    })),
    client_grants: grants
      .filter((g) => !g.is_system && clientNames.has(g.client_id as string))
      .map((g) => ({ ...portable('client_grants', g), client: clientNames.get(g.client_id as string) })),
    roles: roles.map((role, i) => ({ ...portable('roles', role), permissions: rolePermissions[i] })),
  };
  // Sorted by what objects are matched on, so that two tenants with the same configuration export the same
  // file whatever order their objects were created in.
  const by = (key: (o: Json) => string) => (a: Json, b: Json) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  doc.resource_servers.sort(by((o) => String(o.identifier)));
  doc.clients.sort(by((o) => String(o.name)));
  doc.connections.sort(by((o) => String(o.name)));
  doc.client_grants.sort(by((o) => `${String(o.client)}\u0000${String(o.audience)}`));
  doc.roles.sort(by((o) => String(o.name)));
  return replaceInStrings(doc, tenant.baseUrl, BASE_URL_PLACEHOLDER);
}

function parseDocument(input: unknown): TenantDocument {
  const doc = input as Partial<TenantDocument> | null;
  if (!doc || typeof doc !== 'object' || doc.format !== TENANT_FORMAT) {
    throw new TenantDocumentError(`not a tenant file: "format" must be "${TENANT_FORMAT}"`);
  }
  if (doc.version !== TENANT_FORMAT_VERSION) throw new TenantDocumentError(`unsupported version ${String(doc.version)}; this build reads ${TENANT_FORMAT_VERSION}`);
  for (const key of ['resource_servers', 'clients', 'connections', 'client_grants', 'roles'] as const) {
    if (!Array.isArray(doc[key]) || doc[key].some((item) => !item || typeof item !== 'object' || Array.isArray(item))) {
      throw new TenantDocumentError(`"${key}" must be an array of objects`);
    }
  }
  return doc as TenantDocument;
}

export async function importTenant(call: ManagementCall, tenant: Tenant, input: unknown): Promise<ImportReport> {
  const doc = replaceInStrings(parseDocument(input), BASE_URL_PLACEHOLDER, tenant.baseUrl);
  const report: ImportReport = { created: [], updated: [], unchanged: [] };
  const systemAudience = managementAudience(tenant);

  /** Creates `desired` or patches the existing object where its portable form differs. */
  async function upsert(
    kind: string,
    label: string,
    existing: Json | undefined,
    createPath: string,
    patchPath: (e: Json) => string,
    desired: Json,
    immutable: string[] = [],
  ) {
    if (!existing) {
      await call('POST', createPath, desired);
      report.created.push(label);
      return;
    }
    const patch = Object.fromEntries(Object.entries(desired).filter(([key]) => !immutable.includes(key)));
    if (matches(desired, { ...existing, ...portable(kind, existing) })) {
      report.unchanged.push(label);
      return;
    }
    await call('PATCH', patchPath(existing), patch);
    report.updated.push(label);
  }

  const apis = new Map((await listAll(call, '/resource-servers', 'resource_servers')).map((rs) => [rs.identifier as string, rs]));
  for (const rs of doc.resource_servers) {
    const identifier = rs.identifier as string;
    if (identifier === systemAudience) continue;
    await upsert('resource_servers', `resource server ${identifier}`, apis.get(identifier), '/resource-servers', (e) => `/resource-servers/${e.id as string}`, rs, ['identifier']);
  }

  const clientsByName = async () => uniqueByName('clients', await configurableClients(call));
  let clients = await clientsByName();
  for (const client of doc.clients) {
    const name = client.name as string;
    await upsert('clients', `client ${name}`, clients.get(name), '/clients', (e) => `/clients/${e.client_id as string}`, client);
  }
  clients = await clientsByName();
  const clientId = (name: unknown) => {
    const found = clients.get(name as string);
    if (!found) throw new TenantDocumentError(`no client named "${String(name)}" in the file or the tenant`);
    return found.client_id as string;
  };

  const connections = uniqueByName('connections', await listAll(call, '/connections', 'connections'));
  for (const { enabled_clients: enabled, ...connection } of doc.connections) {
    const desired = { ...connection, enabled_clients: ((enabled as string[] | undefined) ?? []).map(clientId).sort() };
    const existing = connections.get(connection.name as string);
    const comparable = existing && { ...existing, enabled_clients: ((existing.enabled_clients as string[] | undefined) ?? []).slice().sort() };
    await upsert('connections', `connection ${String(connection.name)}`, comparable, '/connections', (e) => `/connections/${e.id as string}`, desired, [
      'name',
      'strategy',
    ]);
  }

  const grants = await listAll(call, '/client-grants', 'client_grants');
  for (const { client, ...grant } of doc.client_grants) {
    const desired: Json = { ...grant, client_id: clientId(client) };
    const existing = grants.find((g) => g.client_id === desired.client_id && g.audience === grant.audience);
    await upsert('client_grants', `client grant ${String(client)} → ${String(grant.audience)}`, existing, '/client-grants', (e) => `/client-grants/${e.id as string}`, desired, [
      'client_id',
      'audience',
    ]);
  }

  const roles = uniqueByName('roles', await listAll(call, '/roles', 'roles'));
  for (const { permissions, ...role } of doc.roles) {
    const name = role.name as string;
    await upsert('roles', `role ${name}`, roles.get(name), '/roles', (e) => `/roles/${e.id as string}`, role);
    const id = (roles.get(name) ?? uniqueByName('roles', await listAll(call, '/roles', 'roles')).get(name))!.id as string;
    const wanted = ((permissions as Json[] | undefined) ?? []).map((p) => ({
      resource_server_identifier: p.resource_server_identifier as string,
      permission_name: p.permission_name as string,
    }));
    const current = (await listAll(call, `/roles/${id}/permissions`, 'permissions')).map((p) => ({
      resource_server_identifier: p.resource_server_identifier as string,
      permission_name: p.permission_name as string,
    }));
    const keyOf = (p: { resource_server_identifier: string; permission_name: string }) => `${p.resource_server_identifier} ${p.permission_name}`;
    const missing = wanted.filter((p) => !current.some((c) => keyOf(c) === keyOf(p)));
    const extra = current.filter((c) => !wanted.some((p) => keyOf(c) === keyOf(p)));
    if (missing.length > 0) await call('POST', `/roles/${id}/permissions`, { permissions: missing });
    if (extra.length > 0) await call('DELETE', `/roles/${id}/permissions`, { permissions: extra });
    if ((missing.length > 0 || extra.length > 0) && report.unchanged.at(-1) === `role ${name}`) {
      report.unchanged.pop();
      report.updated.push(`role ${name}`);
    }
  }
  return report;
}
