/** The ready tenant of first start: what it contains, and that the contents are sealed and idempotent. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANAGEMENT_SCOPES } from '../management/scopes.js';
import { findClientGrant } from '../store/client-grants.js';
import { findClient, listClients } from '../store/clients.js';
import { findConnectionByName, listEnabledClients } from '../store/connections.js';
import { findSystemResourceServer } from '../store/resource-servers.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { ADMIN_CREDENTIALS_FILE, clientSecretContext, DATABASE_CONNECTION_NAME, DEFAULT_APP_NAME } from './bootstrap.js';

describe('bootstrap of the default tenant', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('has the Management API with exactly the 244 scopes of the catalogue', async () => {
    const { tenant, managementAudience } = server.server.prepared.bootstrap!;
    expect(managementAudience).toBe(`${server.url}/api/v2/`);
    const api = await findSystemResourceServer(server.server.prepared.store.db, tenant.id);
    expect(api?.identifier).toBe(managementAudience);
    expect(api?.scopes.map((s) => s.value)).toEqual([...MANAGEMENT_SCOPES]);
    expect(new Set(MANAGEMENT_SCOPES).size).toBe(244);
    const shared = path.resolve('../shared/spec/management-scopes.json');
    if (existsSync(shared)) {
      // The copy shipped with the server must equal the contract's catalogue.
      expect([...MANAGEMENT_SCOPES]).toEqual((JSON.parse(readFileSync(shared, 'utf8')) as { scopes: string[] }).scopes);
    }
  });

  it('has an admin client with a sealed secret and a grant for every scope', async () => {
    const { tenant, managementAudience } = server.server.prepared.bootstrap!;
    const db = server.server.prepared.store.db;
    const admin = await findClient(db, tenant.id, server.admin.client_id);
    expect(admin).toMatchObject({ app_type: 'non_interactive', grant_types: ['client_credentials'], is_system: true });
    expect(admin?.client_secret_sealed).not.toContain(server.admin.client_secret);
    expect(server.server.prepared.sealer.unseal(admin!.client_secret_sealed!, clientSecretContext(admin!.client_id))).toBe(server.admin.client_secret);
    const grant = await findClientGrant(db, tenant.id, server.admin.client_id, managementAudience);
    expect(grant?.scope).toEqual([...MANAGEMENT_SCOPES]);
    const file = path.join(server.dataDir, ADMIN_CREDENTIALS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(server.dataDir, 'master.key')).mode & 0o777).toBe(0o600);
  });

  it('has the Default App pointed at the demo page, with the database connection enabled for it', async () => {
    const { tenant, defaultAppClientId, console: consoleApp } = server.server.prepared.bootstrap!;
    const db = server.server.prepared.store.db;
    const apps = (await listClients(db, tenant.id)).filter((c) => c.name === DEFAULT_APP_NAME);
    expect(apps).toHaveLength(1);
    expect(apps[0]).toMatchObject({
      client_id: defaultAppClientId,
      app_type: 'spa',
      token_endpoint_auth_method: 'none',
      client_secret_sealed: null,
      callbacks: expect.arrayContaining([`${server.url}/demo`]),
      allowed_logout_urls: expect.arrayContaining([`${server.url}/demo`]),
      web_origins: [server.url],
    });
    const connection = await findConnectionByName(db, tenant.id, DATABASE_CONNECTION_NAME);
    expect(connection?.strategy).toBe('auth0');
    // And for the admin console's client, whose admins sign in with a password.
    expect(new Set(await listEnabledClients(db, connection!.id))).toEqual(new Set([defaultAppClientId, consoleApp.clientId]));
  });

  it('is on the loopback aliases too, and allows insecure webhooks for a localhost tenant', async () => {
    const { tenant } = server.server.prepared.bootstrap!;
    expect(tenant.settings.allow_insecure_webhooks).toBe(true);
    const viaIp = await fetch(`${server.url.replace('localhost', '127.0.0.1')}/.well-known/openid-configuration`);
    expect(((await viaIp.json()) as { issuer: string }).issuer).toBe(server.issuer);
  });

  it('does not bring back a default connection that was deleted', async () => {
    const { tenant } = server.server.prepared.bootstrap!;
    const before = await findConnectionByName(server.server.prepared.store.db, tenant.id, DATABASE_CONNECTION_NAME);
    await server.server.prepared.store.db.deleteFrom('connections').where('id', '=', before!.id).execute();
    server = await server.restart();
    expect(await findConnectionByName(server.server.prepared.store.db, tenant.id, DATABASE_CONNECTION_NAME)).toBeUndefined();
    // Put it back as it was, for the tests that follow.
    await server.server.prepared.store.db
      .insertInto('connections')
      .values({ id: before!.id, tenant_id: tenant.id, name: before!.name, strategy: 'auth0', properties: JSON.stringify({ options: before!.options }), created_at: Date.now(), updated_at: Date.now() })
      .execute();
  });

  it('follows a changed public URL on restart without duplicating anything', async () => {
    const { restartWith } = await import('../test-support/restart.js');
    const moved = await restartWith(server, { GATEHOUSE_PUBLIC_URL: 'https://id.example.test' });
    try {
      const { tenant, managementAudience, admin } = moved.prepared.bootstrap!;
      expect(tenant.issuer).toBe('https://id.example.test/');
      expect(managementAudience).toBe('https://id.example.test/api/v2/');
      expect(admin.created).toBe(false);
      const db = moved.prepared.store.db;
      const apps = (await listClients(db, tenant.id)).filter((c) => c.is_default_app);
      expect(apps).toHaveLength(1);
      expect(await findConnectionByName(db, tenant.id, DATABASE_CONNECTION_NAME)).toBeDefined();
      expect(apps[0]!.callbacks).toContain('https://id.example.test/demo');
      const res = await fetch(`${moved.listenUrl}/.well-known/openid-configuration`, { headers: { host: 'id.example.test' } });
      expect(((await res.json()) as { issuer: string }).issuer).toBe('https://id.example.test/');
    } finally {
      await moved.close();
    }
  });
});
