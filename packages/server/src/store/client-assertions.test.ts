/**
 * Used client-assertion jtis (client-assertions.ts) on a real store, both dialects: a jti works once per client,
 * and lapsed ones are purged as inserts go (every 500th), while live ones stay.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { storesOnEachDialect } from '../test-support/stores.js';
import { recordClientAssertion } from './client-assertions.js';
import { migrateToLatest, type Store } from './db.js';
import { insertTenant } from './tenants.js';

describe.each(await storesOnEachDialect('gatehouse-client-assertions-'))('used client assertions (%s)', (_name, open, dispose) => {
  let store: Store | undefined;
  afterAll(async () => {
    await store?.close();
    await dispose();
  });

  it('refuses a jti used before by the same client, takes it from another, and purges lapsed ones as it goes', async () => {
    store = await open();
    await migrateToLatest(store);
    const db = store.db;
    const tenant_id = newId.tenant();
    await insertTenant(db, { id: tenant_id, name: 'assertions', friendlyName: 'Assertions', baseUrl: 'https://assertions.example', domains: ['assertions.example'] });
    const now = 1_800_000_000_000;
    const use = (client_id: string, jti: string, expires_at = now + 60_000) => recordClientAssertion(db, { tenant_id, client_id, jti, expires_at }, now);

    expect(await use('client-a', 'jti-1')).toBe(true);
    expect(await use('client-a', 'jti-1')).toBe(false);
    expect(await use('client-b', 'jti-1')).toBe(true);
    // Every 500th insert of this process purges: 500 after the lapsed ones (expired before now) include one.
    for (let i = 0; i < 500; i++) await use('client-a', `lapsed-${i}`, now - 1);
    for (let i = 0; i < 500; i++) await use('client-a', `live-${i}`);
    const left = async (prefix: string) => (await db.selectFrom('used_client_assertions').select('jti').where('jti', 'like', `${prefix}%`).execute()).length;
    expect(await left('lapsed-')).toBe(0);
    expect(await left('live-')).toBe(500);
    expect(await use('client-a', 'jti-1')).toBe(false);
  });
});
