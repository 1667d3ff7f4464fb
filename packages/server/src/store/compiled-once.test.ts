/**
 * Queries compiled once (store/compiled-once.ts) on both dialects: each call runs with its own values (not the
 * first call's), inside a transaction as outside, and a query built without one of its slots is refused. Through
 * the login path's three statements: the user by email, the login record, an identifier's blocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUserId } from '../crypto/ids.js';
import { storesOnEachDialect } from '../test-support/stores.js';
import { compiledOnce } from './compiled-once.js';
import { insertConnection } from './connections.js';
import { migrateToLatest, type Store } from './db.js';
import { insertTenant } from './tenants.js';
import { findUser, findUserInConnection, insertUserBlock, insertUsers, listUserBlocks, newUser, recordLogin } from './users.js';

describe.each(await storesOnEachDialect('gatehouse-compiled-once-'))('queries compiled once on %s', (_name, open, dispose) => {
  let store: Store;
  const tenantId = 'ten_compiledonce0001';
  const connectionId = 'con_compiledonce0001';
  const ids = [newUserId('auth0'), newUserId('auth0')] as const;

  beforeAll(async () => {
    store = await open();
    await migrateToLatest(store);
    await insertTenant(store.db, { id: tenantId, name: 'once', friendlyName: 'Once', baseUrl: 'http://once.localhost:1', domains: ['once.localhost'] });
    await insertConnection(store.db, { id: connectionId, tenant_id: tenantId, name: 'once-db', strategy: 'auth0', options: {} }, []);
    await insertUsers(
      store.db,
      ids.map((user_id, i) => newUser({ user_id, tenant_id: tenantId, connection_id: connectionId, email: `user-${i}@once.example`, password_hash: `hash-${i}` })),
    );
  });

  afterAll(async () => {
    await store?.close();
    await dispose?.();
  });

  it('finds each user by its own email, and none for an unknown one or another connection', async () => {
    expect((await findUserInConnection(store.db, connectionId, { email: 'user-0@once.example' }))?.user_id).toBe(ids[0]);
    expect((await findUserInConnection(store.db, connectionId, { email: 'USER-1@once.example' }))?.user_id).toBe(ids[1]);
    expect(await findUserInConnection(store.db, connectionId, { email: 'nobody@once.example' })).toBeUndefined();
    expect(await findUserInConnection(store.db, 'con_other', { email: 'user-0@once.example' })).toBeUndefined();
  });

  it('records a login on the user named, in a transaction as outside', async () => {
    await recordLogin(store.db, tenantId, ids[0], '192.0.2.1', 1_700_000_000_000);
    await store.db.transaction().execute((trx) => recordLogin(trx, tenantId, ids[0], null, 1_700_000_000_001));
    const [first, second] = await Promise.all(ids.map((id) => findUser(store.db, tenantId, id)));
    expect(first).toMatchObject({ logins_count: 2, last_login: 1_700_000_000_001, last_ip: null });
    expect(second).toMatchObject({ logins_count: 0, last_login: null });
  });

  it("lists an identifier's blocks in force only, and no other identifier's", async () => {
    const block = { tenant_id: tenantId, user_id: null, ip: '192.0.2.2', created_at: 1_700_000_000_000 };
    await insertUserBlock(store.db, { ...block, identifier: 'user-0@once.example', expires_at: 1_700_000_100_000 });
    await insertUserBlock(store.db, { ...block, identifier: 'user-1@once.example', expires_at: 1_700_000_200_000 });
    const at = (now: number, identifier: string) => listUserBlocks(store.db, tenantId, { identifier }, now).then((rows) => rows.map((r) => r.identifier));
    expect(await at(1_700_000_050_000, 'User-0@once.example')).toEqual(['user-0@once.example']);
    expect(await at(1_700_000_150_000, 'user-0@once.example')).toEqual([]);
    expect(await at(1_700_000_150_000, 'user-1@once.example')).toEqual(['user-1@once.example']);
  });

  it('refuses a query built without one of its slots', async () => {
    const broken = compiledOnce(['tenantId', 'unused'], (db, slot) => db.selectFrom('tenants').select('id').where('id', '=', slot('tenantId')));
    await expect(broken.execute(store.db, { tenantId, unused: 1 })).rejects.toThrow(/no parameter for unused/);
  });
});
