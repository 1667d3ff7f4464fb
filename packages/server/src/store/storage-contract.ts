/**
 * The storage contract: what every dialect must do, written once and run against each (storage.test.ts).
 * A new dialect is supported when this whole suite passes on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { KeyRing } from '../crypto/key-ring.js';
import { createSealer } from '../crypto/sealing.js';
import { newId } from '../crypto/ids.js';
import { findClientGrant, insertClientGrant, listClientGrants } from './client-grants.js';
import { findClient, insertClient, listClients, replaceClient, type NewClient } from './clients.js';
import { findConnectionByName, insertConnection, listEnabledClients, enableConnectionForClient } from './connections.js';
import { migrateToLatest, type Store } from './db.js';
import { findResourceServerByIdentifier, insertResourceServer } from './resource-servers.js';
import { listAllKeys, listPublishedKeys } from './signing-keys.js';
import {
  addTenantDomain,
  deleteTenant,
  findTenantByDomain,
  findTenantById,
  insertTenant,
  listTenantDomains,
  updateTenant,
} from './tenants.js';

export interface StoreFactory {
  open(): Promise<Store>;
  /** Removes what open() made (a schema, a file). */
  dispose(): Promise<void>;
}

function client(tenantId: string, overrides: Partial<NewClient> = {}): NewClient {
  return {
    tenant_id: tenantId,
    client_id: newId.client(),
    name: 'App',
    app_type: 'spa',
    is_first_party: true,
    token_endpoint_auth_method: 'none',
    client_secret_sealed: null,
    callbacks: ['https://app.example/callback'],
    allowed_logout_urls: [],
    web_origins: ['https://app.example'],
    allowed_origins: [],
    grant_types: ['authorization_code'],
    ...overrides,
  };
}

export function runStorageContract(dialectName: string, factory: StoreFactory): void {
  describe(`storage contract: ${dialectName}`, () => {
    let store: Store;
    const sealer = createSealer(randomBytes(32));
    const newTenant = (domain: string) =>
      insertTenant(store.db, {
        id: newId.tenant(),
        name: `t-${randomBytes(4).toString('hex')}`,
        friendlyName: 'Test',
        baseUrl: `https://${domain}`,
        domains: [domain],
      });

    beforeAll(async () => {
      store = await factory.open();
      await migrateToLatest(store);
    });
    afterAll(async () => {
      await store?.close();
      await factory.dispose();
    });

    it('migrates to latest idempotently and answers ping', async () => {
      expect((await migrateToLatest(store)).applied).toEqual([]);
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('finds a tenant by any of its domains, case- and port-insensitively, and never another tenant', async () => {
      const a = await newTenant('a.example.com');
      const b = await newTenant('b.example.com');
      await addTenantDomain(store.db, a.id, 'login.a.example.com');
      expect((await findTenantByDomain(store.db, 'A.Example.com:443'))?.id).toBe(a.id);
      expect((await findTenantByDomain(store.db, 'login.a.example.com'))?.id).toBe(a.id);
      expect((await findTenantByDomain(store.db, 'b.example.com.'))?.id).toBe(b.id);
      expect(await findTenantByDomain(store.db, 'c.example.com')).toBeUndefined();
      await expect(addTenantDomain(store.db, b.id, 'login.a.example.com')).rejects.toThrow(/another tenant/);
      expect(await listTenantDomains(store.db, a.id)).toEqual(['a.example.com', 'login.a.example.com']);
    });

    it('round-trips tenant settings and keeps times as numbers', async () => {
      const t = await newTenant(`s-${randomBytes(3).toString('hex')}.example.com`);
      await updateTenant(store.db, t.id, { settings: { rate_limits: { jwks: { capacity: 5, per_second: 0.5 } }, allow_insecure_webhooks: true } });
      const read = await findTenantById(store.db, t.id);
      expect(read?.settings).toEqual({ rate_limits: { jwks: { capacity: 5, per_second: 0.5 } }, allow_insecure_webhooks: true });
      const row = await store.db.selectFrom('tenants').select(['created_at', 'updated_at']).where('id', '=', t.id).executeTakeFirstOrThrow();
      expect(typeof row.created_at).toBe('number');
      expect(row.updated_at).toBeGreaterThanOrEqual(row.created_at);
    });

    it('keeps current, next and previous signing keys through rotations, and revokes the oldest', async () => {
      const t = await newTenant(`k-${randomBytes(3).toString('hex')}.example.com`);
      const ring = new KeyRing(store.db, sealer);
      await ring.ensureKeys(t.id);
      await ring.ensureKeys(t.id); // idempotent
      const first = await listPublishedKeys(store.db, t.id);
      expect(first.map((k) => k.status)).toEqual(['current', 'next']);
      const [current, next] = first;

      expect(await ring.rotate(t.id)).toBe(next!.kid);
      const second = await listPublishedKeys(store.db, t.id);
      expect(second.map((k) => [k.status, k.kid])).toEqual([
        ['current', next!.kid],
        ['next', expect.any(String)],
        ['previous', current!.kid],
      ]);

      await ring.rotate(t.id);
      const third = await listPublishedKeys(store.db, t.id);
      expect(third.map((k) => k.kid)).not.toContain(current!.kid);
      const all = await listAllKeys(store.db, t.id);
      expect(all.find((k) => k.kid === current!.kid)?.status).toBe('revoked');
      expect(all).toHaveLength(4);
    });

    it('serialises concurrent rotations: every rotation promotes a different key', async () => {
      const t = await newTenant(`r-${randomBytes(3).toString('hex')}.example.com`);
      const ring = new KeyRing(store.db, sealer);
      await ring.ensureKeys(t.id);
      const promoted = await Promise.all([ring.rotate(t.id), new KeyRing(store.db, sealer).rotate(t.id)]);
      expect(new Set(promoted).size).toBe(2);
      const statuses = (await listAllKeys(store.db, t.id)).map((k) => k.status).sort();
      expect(statuses).toEqual(['current', 'next', 'previous', 'revoked']);
    });

    it('round-trips clients with their JSON properties and flags', async () => {
      const t = await newTenant(`c-${randomBytes(3).toString('hex')}.example.com`);
      const c = client(t.id, { is_first_party: false, client_secret_sealed: 'sealed', is_system: true });
      await insertClient(store.db, c);
      const read = await findClient(store.db, t.id, c.client_id);
      expect(read).toMatchObject({ ...c, is_first_party: false });
      await replaceClient(store.db, { ...c, callbacks: ['https://other.example/cb'], is_first_party: true });
      const updated = await findClient(store.db, t.id, c.client_id);
      expect(updated?.callbacks).toEqual(['https://other.example/cb']);
      expect(updated?.is_first_party).toBe(true);
      // A client is invisible from another tenant.
      const other = await newTenant(`o-${randomBytes(3).toString('hex')}.example.com`);
      expect(await findClient(store.db, other.id, c.client_id)).toBeUndefined();
      expect(await listClients(store.db, other.id)).toEqual([]);
    });

    it('stores resource servers, client grants (one per client and audience) and connections', async () => {
      const t = await newTenant(`g-${randomBytes(3).toString('hex')}.example.com`);
      const c = client(t.id);
      await insertClient(store.db, c);
      await insertResourceServer(store.db, {
        id: newId.resourceServer(),
        tenant_id: t.id,
        identifier: 'https://api.example/',
        name: 'API',
        is_system: false,
        scopes: [{ value: 'read:things', description: 'Read things' }],
        signing_alg: 'RS256',
        token_lifetime: 3600,
        token_lifetime_for_web: 600,
        allow_offline_access: false,
        skip_consent_for_verifiable_first_party_clients: true,
      });
      expect((await findResourceServerByIdentifier(store.db, t.id, 'https://api.example/'))?.scopes).toHaveLength(1);

      const grant = { id: newId.clientGrant(), tenant_id: t.id, client_id: c.client_id, audience: 'https://api.example/', scope: ['read:things'] };
      await insertClientGrant(store.db, grant);
      await expect(insertClientGrant(store.db, { ...grant, id: newId.clientGrant() })).rejects.toThrow();
      expect(await findClientGrant(store.db, t.id, c.client_id, 'https://api.example/')).toEqual(grant);
      expect(await listClientGrants(store.db, t.id, c.client_id)).toHaveLength(1);

      const connection = { id: newId.connection(), tenant_id: t.id, name: 'Users', strategy: 'auth0', options: { passwordPolicy: 'good' } };
      await insertConnection(store.db, connection, [c.client_id]);
      await enableConnectionForClient(store.db, connection, c.client_id); // idempotent
      expect(await findConnectionByName(store.db, t.id, 'Users')).toEqual(connection);
      expect(await listEnabledClients(store.db, connection.id)).toEqual([c.client_id]);
      await expect(insertConnection(store.db, { ...connection, id: newId.connection() }, [])).rejects.toThrow();
    });

    it('deletes everything of a tenant with the tenant', async () => {
      const t = await newTenant(`d-${randomBytes(3).toString('hex')}.example.com`);
      const c = client(t.id);
      await insertClient(store.db, c);
      await new KeyRing(store.db, sealer).ensureKeys(t.id);
      expect(await deleteTenant(store.db, t.id)).toBe(true);
      expect(await findClient(store.db, t.id, c.client_id)).toBeUndefined();
      expect(await listAllKeys(store.db, t.id)).toEqual([]);
      expect(await findTenantByDomain(store.db, `${t.baseUrl.slice('https://'.length)}`)).toBeUndefined();
    });
  });
}
