/**
 * No request path reads a tenant's users, search terms, counts, events, deliveries or refresh tokens whole
 * (#18.5). The server runs the product's flows over real HTTP (Management reads, searches in every form, sorts,
 * totals, writes, links; signup; password-realm login; refresh; event fan-out and delivery listings) while
 * every query its store sends is recorded; then each recorded query on those tables is explained, on SQLite
 * (EXPLAIN QUERY PLAN, no statistics, as a server runs) and on PostgreSQL (EXPLAIN after ANALYZE over a seeded
 * tenant, with sequential scans disabled so that a missing index shows up as one), and its plan must:
 *  - never scan one of those tables (SQLite `SCAN t`, PostgreSQL `Seq Scan` or an index scan without a condition);
 *  - narrow by more than the tenant, or else read in an index's order under a LIMIT with no sort (a page).
 * Searches that match most of a tenant read their matches whatever the plan; the searches here are selective.
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { createClient, post, type TestClient } from '../auth-api/user-tokens/testing.js';
import { hashPassword } from '../crypto/passwords.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { findConnectionByName } from './connections.js';
import { insertUsers, newUser } from './users.js';

const GUARDED = ['users', 'user_search_terms', 'user_counts', 'events', 'event_deliveries', 'refresh_tokens'];
const SEEDED = 3000;
const PASSWORD = 'Corr3ct-Horse!';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

/** What is wrong with a SQLite plan (EXPLAIN QUERY PLAN rows), or nothing. */
function sqliteProblems(statement: string, rows: { detail: string }[]): string[] {
  const problems: string[] = [];
  const sorts = rows.some((r) => /USE TEMP B-TREE FOR (ORDER BY|RIGHT PART OF ORDER BY)/.test(r.detail));
  const limited = /\blimit\b/i.test(statement);
  for (const { detail } of rows) {
    const scan = /^SCAN (\w+)/.exec(detail);
    if (scan && GUARDED.includes(scan[1]!)) problems.push(detail);
    const search = /^SEARCH (\w+) .*\((.*)\)$/.exec(detail);
    // user_counts holds a few rows per connection of a tenant: reading a tenant's is the point.
    if (search && GUARDED.includes(search[1]!) && search[1] !== 'user_counts' && search[2] === 'tenant_id=?' && (!limited || sorts)) problems.push(`${detail} (the tenant alone, not a page in order)`);
  }
  return problems;
}

interface PgNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  Plans?: PgNode[];
}

/** What is wrong with a PostgreSQL plan (EXPLAIN FORMAT JSON), or nothing. */
function postgresProblems(plan: PgNode): string[] {
  const problems: string[] = [];
  const visit = (node: PgNode, underLimit: boolean, sorted: boolean) => {
    const relation = node['Relation Name'];
    const here = `${node['Node Type']} on ${relation}${node['Index Cond'] ? ` (${node['Index Cond']})` : ''}`;
    if (relation && GUARDED.includes(relation)) {
      if (node['Node Type'] === 'Seq Scan') problems.push(here);
      if (/Index (Only )?Scan/.test(node['Node Type'])) {
        const condition = node['Index Cond'];
        // A whole index read in order under a LIMIT is a page too: with one tenant seeded the tenant is no filter
        // to the planner, which then reads the primary key in order for sort=user_id.
        if (condition === undefined) {
          if (!underLimit || sorted) problems.push(`${here}: a whole index`);
        } else if (relation !== 'user_counts' && /^\(?\(?tenant_id = /.test(condition) && !/ AND /.test(condition) && (!underLimit || sorted)) problems.push(`${here}: the tenant alone, not a page in order`);
      }
    }
    const limit = underLimit || node['Node Type'] === 'Limit';
    const sort = sorted || (limit && /Sort/.test(node['Node Type']));
    for (const child of node.Plans ?? []) visit(child, limit, sort);
  };
  visit(plan, false, false);
  return problems;
}

describe.each(dialects)('query plans on %s (#18.5)', (dialect) => {
  let server: TestServer;
  let token: string;
  let app: TestClient;
  const recorded = new Map<string, readonly unknown[]>();
  let recording = false;
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
    return res;
  };

  beforeAll(async () => {
    server = await startTestServer({
      dialect,
      onQuery: (query) => {
        if (recording && GUARDED.some((t) => new RegExp(`\\b${t}\\b`).test(query.sql)) && !recorded.has(query.sql)) recorded.set(query.sql, query.parameters);
      },
    });
    token = await managementToken(server);
    const { store, bootstrap } = server.server.prepared;
    const tenantId = bootstrap!.tenant.id;
    const connection = (await findConnectionByName(store.db, tenantId, DATABASE_CONNECTION_NAME))!;
    // A tenant of some size, so that PostgreSQL's statistics (and so its plans) are those of a real one.
    const hash = await hashPassword(PASSWORD);
    const users = Array.from({ length: SEEDED }, (_, i) =>
      newUser(
        {
          user_id: `auth0|seed${String(i).padStart(8, '0')}`,
          tenant_id: tenantId,
          connection_id: connection.id,
          email: `seed${i}@seed${i % 50}.example`,
          password_hash: hash,
          profile: { name: `Seeded Person ${i}` },
          user_metadata: { plan: `p${i % 100}` },
          app_metadata: { tier: `tier${i % 200}` },
        },
        1_700_000_000_000 + i,
      ),
    );
    await store.db.transaction().execute((trx) => insertUsers(trx, users));
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT, 'refresh_token'] });
    const now = Date.now();
    await store.db
      .insertInto('refresh_tokens')
      .values(
        users.map((u, i) => ({
          id: `rt_seed${i}`,
          token_hash: `seed-hash-${i}`,
          tenant_id: tenantId,
          family_id: `rtf_seed${i}`,
          parent_id: null,
          client_id: app.client.client_id,
          user_id: u.user_id,
          audience: null,
          scopes: '["openid","offline_access"]',
          session_id: null,
          authenticated_at: now,
          rotating: 1,
          created_at: now,
          last_used_at: null,
          rotated_at: null,
          revoked_at: null,
          expires_at: null,
          idle_expires_at: null,
        })).slice(0, 1000),
      )
      .execute();
    if (dialect === 'postgres') await sql`analyze`.execute(store.db);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('runs the product flows without reading a tenant whole', async () => {
    recording = true;
    const stream = (await (
      await call('POST', '/event-streams', {
        name: 'plans',
        subscriptions: [{ event_type: 'user.created' }, { event_type: 'user.updated' }, { event_type: 'user.deleted' }],
        destination: { type: 'webhook', configuration: { webhook_endpoint: 'https://hooks.example.com/plans', webhook_authorization: { method: 'bearer', token: 'x'.repeat(32) } } },
      })
    ).json()) as { id: string };

    // Management writes.
    const made = (await (await call('POST', '/users', { connection: DATABASE_CONNECTION_NAME, email: 'plan@plans.test', password: PASSWORD, name: 'Plan Person', user_metadata: { plan: 'gold' } })).json()) as { user_id: string };
    const other = (await (await call('POST', '/users', { connection: DATABASE_CONNECTION_NAME, email: 'other@plans.test', password: PASSWORD })).json()) as { user_id: string };
    const id = encodeURIComponent(made.user_id);
    await call('PATCH', `/users/${id}`, { user_metadata: { plan: 'silver' }, app_metadata: { tier: 'x' } });
    const [provider, secondary] = other.user_id.split('|') as [string, string];
    await call('POST', `/users/${id}/identities`, { provider, user_id: secondary });

    // Management reads and searches.
    await call('GET', `/users/${id}`);
    await call('GET', '/users-by-email?email=plan@plans.test');
    await call('GET', '/users');
    await call('GET', '/users?include_totals=true&page=19&per_page=50');
    await call('GET', `/users?connection=${DATABASE_CONNECTION_NAME}&include_totals=true`);
    await call('GET', '/users?take=50');
    for (const field of ['created_at', 'updated_at', 'last_login', 'logins_count', 'email', 'user_id', 'username']) {
      await call('GET', `/users?sort=${field}:1`);
      await call('GET', `/users?sort=${field}:-1&page=3&per_page=50`);
    }
    // Selective searches (a search matching most of the tenant reads its matches, whatever the plan).
    for (const q of [
      'email:"plan@plans.test"',
      'email:seed12*',
      'email.domain:seed7.example',
      'name:"seeded person 12"',
      'name:"seeded person 12*"',
      'nickname:seed12',
      'given_name:x',
      'family_name:x*',
      'username:x',
      'phone_number:x',
      '1234',
      'user_id:"auth0|seed00000007"',
      'user_id:auth0|seed0000001*',
      'user_metadata.plan:"p7"',
      'app_metadata.tier:tier19*',
      'email_verified:false AND name:"seeded person 99*"',
      'blocked:false AND user_metadata.plan:p9',
      `identities.connection:"${DATABASE_CONNECTION_NAME}" AND 1234`,
    ]) {
      await call('GET', `/users?include_totals=true&q=${encodeURIComponent(q)}`);
      await call('GET', `/users?sort=email:1&q=${encodeURIComponent(q)}`);
    }

    // Signup, login, refresh.
    const signup = await fetch(`${server.url}/dbconnections/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.client.client_id, connection: DATABASE_CONNECTION_NAME, email: 'signup@plans.test', password: PASSWORD }),
    });
    expect(signup.status).toBe(200);
    const login = await post(server, '/oauth/token', { grant_type: PASSWORD_REALM_GRANT, ...app.auth, realm: DATABASE_CONNECTION_NAME, username: 'seed5@seed5.example', password: PASSWORD, scope: 'openid offline_access' });
    expect(login.status, login.text).toBe(200);
    const refreshed = await post(server, '/oauth/token', { grant_type: 'refresh_token', ...app.auth, refresh_token: login.body.refresh_token as string });
    expect(refreshed.status, refreshed.text).toBe(200);

    // Events: the deliveries raised above, listed and counted.
    await call('GET', `/event-streams/${stream.id}/deliveries`);
    await call('GET', `/event-streams/${stream.id}/stats`);

    // Unlink and delete.
    await call('DELETE', `/users/${id}/identities/${provider}/${encodeURIComponent(secondary)}`);
    await call('DELETE', `/users/${id}`);
    recording = false;

    const db = server.server.prepared.store.db;
    const problems: string[] = [];
    expect(recorded.size).toBeGreaterThan(40);
    for (const [statement, parameters] of recorded) {
      if (dialect === 'sqlite') {
        const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement}`, [...parameters]));
        for (const problem of sqliteProblems(statement, rows)) problems.push(`${statement}\n    ${problem}`);
      } else {
        const plan = await db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          const { rows } = await trx.executeQuery<{ 'QUERY PLAN': { Plan: PgNode }[] }>(CompiledQuery.raw(`explain (format json) ${statement}`, [...parameters]));
          return rows[0]!['QUERY PLAN'][0]!.Plan;
        });
        for (const problem of postgresProblems(plan)) problems.push(`${statement}\n    ${problem}`);
      }
    }
    expect(problems, problems.join('\n\n')).toEqual([]);
  }, 120_000);
});
