/**
 * Reference features we do not offer, over real HTTP: every list reads as the reference's empty shape in each
 * paging style, every write is a 501 in the management error shape naming the feature (and nothing is kept:
 * the list stays empty after it), and scopes are still checked. Stateless, so SQLite alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementCaller } from '../test-support/management-api.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { NOT_OFFERED } from './not-offered.js';

describe('Management API: reference features not offered', () => {
  let server: TestServer;

  const call = managementCaller(() => server);

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reads answer the reference’s empty shapes', async () => {
    expect(await call('GET', '/rules')).toEqual({ status: 200, body: [] });
    expect(await call('GET', '/rules?page=2&per_page=10&include_totals=true&enabled=true')).toEqual({
      status: 200,
      body: { start: 20, limit: 10, length: 0, total: 0, rules: [] },
    });
    expect(await call('GET', '/hooks?take=10')).toEqual({ status: 200, body: { hooks: [] } });
    expect(await call('GET', '/rules-configs')).toEqual({ status: 200, body: [] });
    expect(await call('GET', '/actions/actions?page=0&per_page=100&deployed=true')).toEqual({ status: 200, body: { actions: [], total: 0, page: 0, per_page: 100 } });
    expect(await call('GET', '/actions/triggers')).toEqual({ status: 200, body: { triggers: [] } });
    expect(await call('GET', '/actions/triggers/post-login/bindings')).toEqual({ status: 200, body: { bindings: [], total: 0, page: 0, per_page: 50 } });
    expect(await call('GET', '/token-exchange-profiles')).toEqual({ status: 200, body: { token_exchange_profiles: [] } });
    expect(await call('GET', '/forms?include_totals=true')).toMatchObject({ status: 200, body: { forms: [], total: 0 } });
    expect((await call('GET', '/rules?per_page=1000')).status).toBe(400);
  });

  it('writes answer 501 naming the feature, and keep nothing', async () => {
    const created = await call('POST', '/rules', { name: 'r', script: 'function (user, context, cb) { cb(null, user, context); }' });
    expect(created.status).toBe(501);
    expect(created.body).toEqual({ statusCode: 501, error: 'Not Implemented', message: expect.stringMatching(/^Rules are not offered by this server \(/), errorCode: 'not_offered' });
    expect(await call('GET', '/rules')).toEqual({ status: 200, body: [] });
    const binding = await call('PATCH', '/actions/triggers/post-login/bindings', { bindings: [] });
    expect(binding).toMatchObject({ status: 501, body: { message: expect.stringMatching(/^Actions are not offered/) } });
    expect((await call('DELETE', '/network-acls/acl_1')).body).toMatchObject({ message: expect.stringMatching(/^Network ACLs are not offered/) });
    // Every write of every feature.
    for (const entry of NOT_OFFERED) {
      for (const write of entry.writes) {
        const res = await call(write.method, write.path.replace(/:[A-Za-z]+/g, 'x'), {});
        expect(res.status, `${write.method} ${write.path}`).toBe(501);
        expect((res.body as { message: string }).message.startsWith(entry.feature)).toBe(true);
      }
    }
  });

  it('still checks scopes', async () => {
    const narrow = await managementToken(server, ['read:users']);
    expect((await call('GET', '/rules', undefined, { token: narrow })).status).toBe(403);
    expect((await call('POST', '/hooks', {}, { token: narrow })).status).toBe(403);
  });
});
