/** Export a configured tenant, import it into a fresh one, and prove the round trip and idempotency. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { runCliToEnd } from '../test-support/cli.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { BASE_URL_PLACEHOLDER, exportTenant, importTenant, managementCaller, type TenantDocument } from './tenant-as-code.js';

async function callerFor(server: TestServer) {
  const app = await buildApp(server.server.services, { logger: false });
  const call = await managementCaller(app, server.server.services, server.server.prepared.bootstrap!.tenant);
  return { call, close: () => app.close() };
}

describe('tenant as code', () => {
  let source: TestServer;
  let target: TestServer;
  let doc: TenantDocument;
  const secrets: string[] = [];

  beforeAll(async () => {
    source = await startTestServer();
    target = await startTestServer();
    const token = await managementToken(source);
    const api = async (method: string, p: string, body: unknown) => {
      const res = await fetch(`${source.url}/api/v2${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      const text = await res.text();
      return (text ? JSON.parse(text) : {}) as Record<string, string>;
    };
    await api('POST', '/resource-servers', { identifier: 'https://orders.example/', name: 'Orders', scopes: [{ value: 'read:orders', description: 'Read' }] });
    const web = await api('POST', '/clients', { name: 'Shop', app_type: 'regular_web', callbacks: ['https://shop.example/cb'] });
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const machine = await api('POST', '/clients', {
      name: 'Worker',
      app_type: 'non_interactive',
      client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', name: 'k1', pem: await exportSPKI(publicKey) }] } },
    });
    secrets.push(web.client_secret!);
    await api('POST', '/connections', { name: 'shop-users', strategy: 'auth0', enabled_clients: [web.client_id], options: { passwordPolicy: 'fair' } });
    await api('POST', '/client-grants', { client_id: machine.client_id, audience: 'https://orders.example/', scope: ['read:orders'] });
    await api('POST', '/client-grants', { client_id: machine.client_id, audience: `${source.url}/api/v2/`, scope: ['read:users'] });
    const role = await api('POST', '/roles', { name: 'clerk', description: 'Reads orders' });
    await api('POST', `/roles/${role.id}/permissions`, {
      permissions: [{ resource_server_identifier: 'https://orders.example/', permission_name: 'read:orders' }],
    });
  });
  afterAll(async () => {
    await source?.close();
    await target?.close();
  });

  it('exports configuration without secrets or tenant-specific ids', async () => {
    const { call, close } = await callerFor(source);
    doc = await exportTenant(call, source.server.prepared.bootstrap!.tenant);
    await close();
    const text = JSON.stringify(doc);
    for (const secret of [...secrets, source.admin.client_secret]) expect(text).not.toContain(secret);
    for (const client of doc.clients) expect(client).not.toHaveProperty('client_secret');
    expect(text).not.toContain(source.url); // the base URL is a placeholder, so the file fits any tenant
    expect(text).not.toContain(source.admin.client_id); // the admin client is a system object
    expect(doc.resource_servers.map((rs) => rs.identifier)).toEqual(['https://orders.example/']);
    expect(doc.clients.map((c) => c.name).sort()).toEqual(['Default App', 'Shop', 'Worker']);
    expect(doc.client_grants).toEqual(
      expect.arrayContaining([expect.objectContaining({ client: 'Worker', audience: `${BASE_URL_PLACEHOLDER}/api/v2/`, scope: ['read:users'] })]),
    );
    expect(doc.connections.find((c) => c.name === 'shop-users')).toMatchObject({ enabled_clients: ['Shop'] });
    expect(doc.roles).toEqual([expect.objectContaining({ name: 'clerk', permissions: [{ resource_server_identifier: 'https://orders.example/', permission_name: 'read:orders' }] })]);
  });

  it('imports into another tenant so that it exports the same, and a second import changes nothing', async () => {
    const { call, close } = await callerFor(target);
    const tenant = target.server.prepared.bootstrap!.tenant;
    const first = await importTenant(call, tenant, doc);
    expect(first.created.length).toBeGreaterThanOrEqual(6);
    expect(await exportTenant(call, tenant)).toEqual(doc);
    const second = await importTenant(call, tenant, doc);
    expect(second).toMatchObject({ created: [], updated: [] });
    await close();

    // The imported machine client works: its grant to the Management API maps to this tenant's audience.
    const grants = (await (
      await fetch(`${target.url}/api/v2/client-grants?audience=${encodeURIComponent(`${target.url}/api/v2/`)}`, {
        headers: { authorization: `Bearer ${await managementToken(target)}` },
      })
    ).json()) as { scope: string[] }[];
    expect(grants.some((g) => g.scope.join() === 'read:users')).toBe(true);
  });

  it('updates what differs and refuses a malformed file without writing', async () => {
    const { call, close } = await callerFor(target);
    const tenant = target.server.prepared.bootstrap!.tenant;
    const changed: TenantDocument = { ...doc, roles: doc.roles.map((r) => ({ ...r, description: 'Reads and lists orders', permissions: [] })) };
    const report = await importTenant(call, tenant, changed);
    expect(report.updated).toEqual(['role clerk']);
    // The Default App kept this tenant's own URLs: they travel as a placeholder.
    const defaultApp = (await exportTenant(call, tenant)).clients.find((c) => c.name === 'Default App');
    expect(defaultApp?.callbacks).toEqual([`${BASE_URL_PLACEHOLDER}/demo`, `${BASE_URL_PLACEHOLDER}/demo/`]);
    expect((await exportTenant(call, tenant)).roles).toEqual([expect.objectContaining({ description: 'Reads and lists orders', permissions: [] })]);
    await expect(importTenant(call, tenant, { format: 'something-else' })).rejects.toThrow(/not a tenant file/);
    await expect(importTenant(call, tenant, { ...doc, clients: 'x' })).rejects.toThrow(/"clients" must be an array/);
    await close();
  });

  it('works from the command line, idempotently', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-tac-'));
    try {
      const file = path.join(dir, 'tenant.json');
      writeFileSync(file, JSON.stringify(doc));
      const env = { GATEHOUSE_DATA_DIR: path.join(dir, 'data') };
      const first = await runCliToEnd(['import', file], env);
      expect(first.code).toBe(0);
      expect(first.output).toMatch(/created/);
      const second = await runCliToEnd(['import', file], env);
      expect(second.output).toContain('0 created, 0 updated');
      const out = path.join(dir, 'out.json');
      expect((await runCliToEnd(['export', out], env)).code).toBe(0);
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(doc);
      const bad = path.join(dir, 'bad.json');
      writeFileSync(bad, '{ nope');
      const refused = await runCliToEnd(['import', bad], env);
      expect(refused.code).toBe(65);
      expect(refused.output).toContain('cannot read it as JSON');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
