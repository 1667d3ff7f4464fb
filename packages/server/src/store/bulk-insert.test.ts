/**
 * Bulk inserts (store/bulk-insert.ts) on both dialects, through insertUsers as an import uses them: counts on
 * either side of every SQLite chunk size come back whole, value for value (nulls, numbers, JSON text), with
 * their search terms; and new user ids keep their format and sort by creation time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUserId } from '../crypto/ids.js';
import { storesOnEachDialect } from '../test-support/stores.js';
import { insertConnection } from './connections.js';
import { migrateToLatest, type Store } from './db.js';
import { insertTenant } from './tenants.js';
import { insertUsers, listUsers, newUser, type User } from './users.js';

describe('new user ids', () => {
  it('are the reference 24 hex digits after the provider, ordered by creation time', () => {
    const first = newUserId('auth0', 1_700_000_000_000);
    const later = newUserId('auth0', 1_700_000_000_001);
    expect(first).toMatch(/^auth0\|[0-9a-f]{24}$/);
    expect(newUserId('email')).toMatch(/^email\|[0-9a-f]{24}$/);
    expect(first < later).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => newUserId('auth0', 1_700_000_000_000))).size).toBe(1000);
  });
});

describe.each(await storesOnEachDialect('gatehouse-bulk-'))('bulk inserts on %s', (_name, open, dispose) => {
  let store: Store;
  const tenantId = 'ten_bulkinserttest01';
  const connectionId = 'con_bulkinserttest01';

  beforeAll(async () => {
    store = await open();
    await migrateToLatest(store);
    await insertTenant(store.db, { id: tenantId, name: 'bulk', friendlyName: 'Bulk', baseUrl: 'http://bulk.localhost:1', domains: ['bulk.localhost'] });
    await insertConnection(store.db, { id: connectionId, tenant_id: tenantId, name: 'bulk-db', strategy: 'auth0', options: {} }, []);
  });

  afterAll(async () => {
    await store?.close();
    await dispose?.();
  });

  const makeUsers = (prefix: string, count: number): User[] =>
    Array.from({ length: count }, (_, i) =>
      newUser(
        {
          user_id: newUserId('auth0'),
          tenant_id: tenantId,
          connection_id: connectionId,
          email: `${prefix}-${i}@bulk.example`,
          email_verified: i % 2 === 0,
          password_hash: i % 3 === 0 ? null : `$import$sealed-${i}`,
          profile: { name: `Bulk ${prefix} ${i}` },
          user_metadata: { n: i, quote: `it's "${i}"` },
          last_login: i % 5 === 0 ? null : 1_700_000_000_000 + i,
        },
        1_700_000_000_000,
      ),
    );

  // 0, 1 and counts around SQLite's chunk sizes (256, 64, 16, 4, 1): every remainder path.
  it.each([0, 1, 3, 255, 256, 257, 341, 600])('writes %i users with their search terms, value for value', async (count) => {
    const prefix = `c${count}`;
    const users = makeUsers(prefix, count);
    await store.db.transaction().execute((trx) => insertUsers(trx, users));
    const { users: stored, total } = await listUsers(store.db, tenantId, { terms: [{ field: 'email', value: `${prefix}-`, prefix: true }] }, { offset: 0, limit: 1000 }, { total: true });
    expect(total).toBe(count);
    const byId = new Map(stored.map((u) => [u.user_id, u]));
    for (const user of users) expect(byId.get(user.user_id)).toEqual(user);
    if (count > 0) {
      // A bare term finds a word inside the name: the search terms went in with the users.
      const last = users[count - 1]!;
      const found = await listUsers(store.db, tenantId, { terms: [{ field: '_any', value: `${prefix} ${count - 1}`, prefix: false }] }, { offset: 0, limit: 10 });
      expect(found.users.map((u) => u.user_id)).toEqual([last.user_id]);
    }
  });
});
