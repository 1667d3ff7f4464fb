/**
 * GET /api/v2/users?q= on both databases: the query's complexity is bounded (a clear 400 in the Management
 * shape, never the database's "Expression tree is too large"), and the search forms answer the same on SQLite
 * and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { SEARCH_LIMITS } from './user-search.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('user search: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

describe.each(dialects)('user search (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const search = async (q: string, extra = '') => {
    const res = await call('GET', `/users?q=${encodeURIComponent(q)}${extra}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { user_id: string }[]).map((u) => u.user_id);
  };
  const refused = async (q: string, message: RegExp) => {
    const res = await call('GET', `/users?q=${encodeURIComponent(q)}`);
    const body = (await res.json()) as Json;
    expect({ status: res.status, body }).toMatchObject({ status: 400, body: { statusCode: 400, error: 'Bad Request', errorCode: 'invalid_query_string' } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    expect(body.message).toMatch(message);
  };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const make = async (email: string, extra: Json = {}) => {
      const res = await call('POST', '/users', { connection: 'Username-Password-Authentication', email, password: 'Corr3ct-Horse!', ...extra });
      expect(res.status, await res.clone().text()).toBe(201);
      ids[email.split('@')[0]!] = ((await res.json()) as { user_id: string }).user_id;
    };
    await make('ada@engines.test', { name: 'Ada Lovelace', user_metadata: { plan: 'gold', seats: 3 }, app_metadata: { tier: 'Enterprise', flags: { beta: true } } });
    await make('grace@compilers.test', { name: 'Grace Hopper', user_metadata: { plan: 'silver' }, app_metadata: { tier: 'free' } });
    await make('alan@engines.test', { name: 'Alan Turing', user_metadata: { plan: 'gold' } });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a query of too many terms with a 400, whatever its length (#19.3)', async () => {
    // About 1,000 terms within the 2,000-character limit: a 500 ("Expression tree is too large") before the bound.
    await refused(Array.from({ length: 999 }, () => 'a').join(' '), /^q: the query is too complex: at most 16 terms/);
    await refused(Array.from({ length: 300 }, () => 'a').join(' AND '), /too complex/);
    await refused(Array.from({ length: 150 }, () => 'email:a').join(' && '), /too complex/);
    await refused(Array.from({ length: SEARCH_LIMITS.terms + 1 }, (_, i) => `t${i}`).join(' '), /at most 16 terms/);
    await refused(Array.from({ length: SEARCH_LIMITS.wildcards + 1 }, () => 'name:a*').join(' '), /at most 4 terms with a wildcard/);
    await refused(`${'('.repeat(600)}a${')'.repeat(600)}`, /grouping with parentheses is not supported/);
    // At the bounds it answers.
    expect(await search(Array.from({ length: SEARCH_LIMITS.terms }, () => 'engines').join(' '))).toEqual([ids.ada, ids.alan]);
    expect(await search(Array.from({ length: SEARCH_LIMITS.wildcards }, () => 'name:a*').join(' '))).toEqual([ids.ada, ids.alan]);
  });

  it('finds users by metadata fields, exact or by prefix, any case (#18.5)', async () => {
    expect(await search('user_metadata.plan:"gold"')).toEqual([ids.ada, ids.alan]);
    expect(await search('user_metadata.plan:GOLD AND app_metadata.tier:enterprise')).toEqual([ids.ada]);
    expect(await search('app_metadata.tier:ent*')).toEqual([ids.ada]);
    expect(await search('app_metadata.flags.beta:true')).toEqual([ids.ada]);
    expect(await search('user_metadata.seats:3')).toEqual([ids.ada]);
    expect(await search('user_metadata.plan:bronze')).toEqual([]);
    expect(await search('user_metadata.nothing:gold')).toEqual([]);
    // A PATCH rewrites what a search finds.
    expect((await call('PATCH', `/users/${encodeURIComponent(ids.grace!)}`, { user_metadata: { plan: 'gold' } })).status).toBe(200);
    expect(await search('user_metadata.plan:gold')).toEqual([ids.ada, ids.grace, ids.alan]);
    expect((await call('PATCH', `/users/${encodeURIComponent(ids.grace!)}`, { user_metadata: { plan: 'silver' } })).status).toBe(200);
    expect(await search('user_metadata.plan:gold')).toEqual([ids.ada, ids.alan]);
  });

  it('finds by names, word starts, emails and domains, with totals and sorts', async () => {
    expect(await search('name:ada*')).toEqual([ids.ada]);
    expect(await search('name:"grace hopper"')).toEqual([ids.grace]);
    expect(await search('love')).toEqual([ids.ada]); // the start of a word of the name
    expect(await search('engines.test')).toEqual([ids.ada, ids.alan]); // the email's domain
    expect(await search('email.domain:engines.test', '&sort=email:-1')).toEqual([ids.alan, ids.ada]);
    expect(await search('email.domain:engines.test', '&sort=email:1')).toEqual([ids.ada, ids.alan]);
    expect(await search('email:"GRACE@compilers.test"')).toEqual([ids.grace]);
    expect(await search('email:a* AND name:alan*')).toEqual([ids.alan]);
    expect(await search('email:"ada@engines.test" AND email:"alan@engines.test"')).toEqual([]);
    const totals = (await (await call('GET', `/users?include_totals=true&per_page=1&q=${encodeURIComponent('engines')}`)).json()) as Json;
    expect(totals).toMatchObject({ start: 0, limit: 1, length: 1, total: 2 });
    const all = (await (await call('GET', '/users?include_totals=true&per_page=1')).json()) as Json;
    expect(all).toMatchObject({ length: 1, total: 3 });
  });

  it('keeps the totals right through deletes and links (counted by triggers)', async () => {
    const total = async (extra = '') => ((await (await call('GET', `/users?include_totals=true&per_page=1${extra}`)).json()) as { total: number }).total;
    const res = await call('POST', '/users', { connection: 'Username-Password-Authentication', email: 'temp@count.test', password: 'Corr3ct-Horse!' });
    const temp = ((await res.json()) as { user_id: string }).user_id;
    expect(await total()).toBe(4);
    expect(await total('&connection=Username-Password-Authentication')).toBe(4);
    expect(await total('&connection=nope')).toBe(0);
    const [provider, id] = temp.split('|') as [string, string];
    expect((await call('POST', `/users/${encodeURIComponent(ids.ada!)}/identities`, { provider, user_id: id })).status).toBe(201);
    expect(await total()).toBe(3);
    expect(await search('email:temp@count.test')).toEqual([]);
    expect((await call('DELETE', `/users/${encodeURIComponent(ids.ada!)}/identities/${provider}/${id}`)).status).toBe(200);
    expect(await total()).toBe(4);
    expect(await search('email:temp@count.test')).toEqual([temp]);
    expect((await call('DELETE', `/users/${encodeURIComponent(temp)}`)).status).toBe(204);
    expect(await total()).toBe(3);
    expect(await search('temp')).toEqual([]);
  });
});
