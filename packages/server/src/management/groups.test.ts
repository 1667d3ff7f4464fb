/**
 * Groups over real HTTP (groups.ts): create (our extension), list with filters and both paging styles, get,
 * rename, delete, members (users) and roles, cascades, tenant isolation, bad input, and each route's scopes.
 * Runs on SQLite, and on PostgreSQL when reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { findConnectionByName } from '../store/connections.js';
import { insertTenant, updateTenant } from '../store/tenants.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('groups: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

const GROUP_ID = /^grp_[1-9a-km-zA-HJ-NP-Z]{22}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(dialects)('Management API groups (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  let tenantId: string;
  let tenantName: string;
  let connectionId: string;
  const otherGroupId = 'grp_OtherTenantGroup1234567';
  const db = () => server.server.prepared.store.db;
  const enc = encodeURIComponent;

  async function call(method: string, path: string, options: { body?: unknown; token?: string } = {}) {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.token ?? token}`,
        ...(options.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as unknown, text };
  }

  async function ok(method: string, path: string, body?: unknown, status = 200): Promise<unknown> {
    const res = await call(method, path, { body });
    expect({ method, path, status: res.status, body: res.body }).toMatchObject({ status });
    return res.body;
  }

  async function expectError(res: Promise<{ status: number; body: unknown }>, status: number, errorCode: string): Promise<Json> {
    const { status: actual, body } = await res;
    expect({ status: actual, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
    expect(Object.keys(body as Json).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    return body as Json;
  }

  let n = 0;
  const unique = () => `${Date.now().toString(36)}-${++n}`;
  const createGroup = async (extra: Json = {}) => (await ok('POST', '/groups', { name: `group-${unique()}`, ...extra }, 201)) as Json & { id: string; name: string };
  const createRole = async () => (await ok('POST', '/roles', { name: `role-${unique()}` })) as { id: string; name: string; description: string };

  let userCounter = 0;
  async function insertUser(fields: { linked_to?: string } = {}) {
    userCounter += 1;
    const user_id = `auth0|${(Date.now() * 1000 + userCounter).toString(16).padStart(24, '0')}`;
    const now = Date.now() + userCounter;
    await db()
      .insertInto('users')
      .values({
        user_id,
        tenant_id: tenantId,
        connection_id: connectionId,
        email: `g${userCounter}-${now}@example.com`,
        email_verified: 0,
        username: null,
        phone_number: null,
        phone_verified: 0,
        password_hash: null,
        blocked: 0,
        profile: '{}',
        user_metadata: '{}',
        app_metadata: '{}',
        linked_to: fields.linked_to ?? null,
        logins_count: 0,
        last_login: null,
        last_ip: null,
        last_password_reset: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return user_id;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const tenant = server.server.prepared.bootstrap!.tenant;
    tenantId = tenant.id;
    tenantName = tenant.name;
    await updateTenant(db(), tenantId, { settings: { ...tenant.settings, rate_limits: { management: { capacity: 100_000, per_second: 100_000 } } } });
    server.server.services.tenants.invalidate();
    connectionId = (await findConnectionByName(db(), tenantId, DATABASE_CONNECTION_NAME))!.id;
    const otherTenant = newId.tenant();
    await insertTenant(db(), { id: otherTenant, name: 'other', friendlyName: 'Other', baseUrl: 'https://other.example', domains: ['other.example'] });
    const now = Date.now();
    await db()
      .insertInto('groups')
      .values({ id: otherGroupId, tenant_id: otherTenant, name: 'other', external_id: null, type: 'tenant', connection_id: null, organization_id: null, scope: '', created_at: now, updated_at: now })
      .execute();
  });

  afterAll(async () => {
    await server?.close();
  });

  describe('groups CRUD', () => {
    it('creates tenant, connection and organization groups (201), gets, renames and deletes them', async () => {
      const tenantGroup = await createGroup({ external_id: 'scim-7' });
      expect(tenantGroup).toStrictEqual({
        id: expect.stringMatching(GROUP_ID),
        name: tenantGroup.name,
        external_id: 'scim-7',
        type: 'tenant',
        tenant_name: tenantName,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      expect(await ok('GET', `/groups/${tenantGroup.id}`)).toStrictEqual(tenantGroup);
      expect(await createGroup({ connection_id: connectionId })).toMatchObject({ type: 'connection', connection_id: connectionId });
      const org = (await ok('POST', '/organizations', { name: `org-${unique()}` }, 201)) as { id: string };
      expect(await createGroup({ organization_id: org.id })).toMatchObject({ type: 'organization', organization_id: org.id });

      const renamed = await ok('PATCH', `/groups/${tenantGroup.id}`, { name: 'Renamed group', external_id: null });
      const { external_id: _removed, ...withoutExternalId } = tenantGroup;
      expect(renamed).toStrictEqual({ ...withoutExternalId, name: 'Renamed group', updated_at: expect.stringMatching(ISO) });

      const deleted = await call('DELETE', `/groups/${tenantGroup.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      await expectError(call('GET', `/groups/${tenantGroup.id}`), 404, 'inexistent_group');
      await expectError(call('DELETE', `/groups/${tenantGroup.id}`), 404, 'inexistent_group');
    });

    it('keeps names unique within their owner (409), not across owners', async () => {
      const name = `same-${unique()}`;
      const a = await createGroup({ name });
      await expectError(call('POST', '/groups', { body: { name } }), 409, 'conflict');
      expect(await createGroup({ name, connection_id: connectionId })).toMatchObject({ name, type: 'connection' });
      const b = await createGroup();
      await expectError(call('PATCH', `/groups/${b.id}`, { body: { name } }), 409, 'conflict');
      expect(await ok('PATCH', `/groups/${a.id}`, { name })).toMatchObject({ name });
    });

    it('answers 400 or 404 for bad bodies, unknown owners and bad queries', async () => {
      const group = await createGroup();
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(129) }, { name: 'tab\there' }, { name: 'ünïcode' }, { name: 'ok', extra: 1 }, { name: 'ok', external_id: 'x'.repeat(257) }]) {
        await expectError(call('POST', '/groups', { body }), 400, 'invalid_body');
      }
      await expectError(call('POST', '/groups', { body: { name: 'ok', connection_id: connectionId, organization_id: 'org_x' } }), 400, 'invalid_body');
      await expectError(call('POST', '/groups', { body: { name: 'ok', connection_id: 'con_AAAAAAAAAAAAAAAA' } }), 404, 'inexistent_connection');
      await expectError(call('POST', '/groups', { body: { name: 'ok', organization_id: 'org_AAAAAAAAAAAAAAAA' } }), 404, 'inexistent_organization');
      await expectError(call('PATCH', `/groups/${group.id}`, { body: { connection_id: connectionId } }), 400, 'invalid_body');
      await expectError(call('GET', '/groups?take=0'), 400, 'invalid_query_string');
      await expectError(call('GET', '/groups?from=zzz'), 400, 'invalid_query_string');
      await expectError(call('GET', `/groups/${group.id}/members?page=1`), 400, 'invalid_query_string');
      await expectError(call('GET', '/groups/grp_%00'), 400, 'invalid_uri');
    });

    it('answers 404 for unknown, malformed and other-tenant ids on every group route, never 500', async () => {
      const user = await insertUser();
      const role = await createRole();
      for (const id of ['grp_1111111111111111111111', 'nope', enc('grp_/../x'), enc("' OR 1=1 --"), 'x'.repeat(255), otherGroupId]) {
        const checks: [string, string, unknown?][] = [
          ['GET', `/groups/${id}`],
          ['PATCH', `/groups/${id}`, { name: 'x' }],
          ['DELETE', `/groups/${id}`],
          ['GET', `/groups/${id}/members`],
          ['POST', `/groups/${id}/members`, { members: [user] }],
          ['DELETE', `/groups/${id}/members`, { members: [user] }],
          ['GET', `/groups/${id}/roles`],
          ['POST', `/groups/${id}/roles`, { roles: [role.id] }],
          ['DELETE', `/groups/${id}/roles`, { roles: [role.id] }],
        ];
        for (const [method, path, body] of checks) await expectError(call(method, path, { body }), 404, 'inexistent_group');
      }
    });
  });

  describe('listing groups', () => {
    it('filters by connection, name, external id and search, in both paging styles, never showing another tenant’s groups', async () => {
      const tag = unique();
      const a = await createGroup({ name: `list-${tag}-alpha`, external_id: `ext-${tag}-1` });
      const b = await createGroup({ name: `list-${tag}-beta`, connection_id: connectionId });
      const c = await createGroup({ name: `list-${tag}-gamma` });

      const all = (await ok('GET', '/groups?per_page=100')) as { groups: Json[]; start: number; limit: number; total: number };
      expect(all).toMatchObject({ start: 0, limit: 100, total: all.groups.length });
      expect(all.groups.map((g) => g.id)).toEqual(expect.arrayContaining([a.id, b.id, c.id]));
      expect(all.groups.map((g) => g.id)).not.toContain(otherGroupId);

      expect(((await ok('GET', `/groups?search=${tag}`)) as { groups: Json[] }).groups.map((g) => g.id)).toEqual([a.id, b.id, c.id]);
      expect(((await ok('GET', `/groups?search=EXT-${tag}`)) as { groups: Json[] }).groups.map((g) => g.id)).toEqual([a.id]);
      expect(((await ok('GET', `/groups?connection_id=${connectionId}&search=${tag}`)) as { groups: Json[] }).groups).toStrictEqual([b]);
      expect(((await ok('GET', `/groups?name=${enc(c.name)}`)) as { groups: Json[] }).groups).toStrictEqual([c]);
      expect(((await ok('GET', `/groups?external_id=ext-${tag}-1`)) as { groups: Json[] }).groups).toStrictEqual([a]);
      expect(await ok('GET', `/groups?search=${tag}&fields=id,name&include_fields=true`)).toMatchObject({
        groups: [{ id: a.id, name: a.name }, { id: b.id, name: b.name }, { id: c.id, name: c.name }],
      });
      expect(Object.keys(((await ok('GET', `/groups?search=${tag}&fields=id,name`)) as { groups: Json[] }).groups[0]!).sort()).toEqual(['id', 'name']);

      const first = (await ok('GET', `/groups?search=${tag}&include_totals=true&take=2`)) as { groups: Json[]; next: string };
      expect(first).toStrictEqual({ groups: [a, b], next: expect.any(String) });
      expect(await ok('GET', `/groups?search=${tag}&take=2&from=${enc(first.next)}`)).toStrictEqual({ groups: [c] });
    });
  });

  describe('members', () => {
    it('adds (204, idempotent), lists with checkpoints and removes users', async () => {
      const group = await createGroup({ connection_id: connectionId });
      const u1 = await insertUser();
      const u2 = await insertUser();
      await ok('POST', `/groups/${group.id}/members`, { members: [u1, u2, u1] }, 204);
      await ok('POST', `/groups/${group.id}/members`, { members: [u1] }, 204);
      const page = (await ok('GET', `/groups/${group.id}/members?take=1`)) as { members: Json[]; next: string };
      expect(page).toStrictEqual({
        members: [{ id: u1, member_type: 'user', type: 'connection', connection_id: connectionId, created_at: expect.stringMatching(ISO) }],
        next: expect.any(String),
      });
      expect(await ok('GET', `/groups/${group.id}/members?take=1&from=${enc(page.next)}`)).toMatchObject({ members: [{ id: u2 }] });
      expect(((await ok('GET', `/groups/${group.id}/members`)) as { members: Json[] }).members).toHaveLength(2);
      expect(await ok('GET', `/groups/${group.id}/members?fields=id`)).toStrictEqual({ members: [{ id: u1 }, { id: u2 }] });

      await ok('DELETE', `/groups/${group.id}/members`, { members: [u1, 'auth0|never-a-member'] }, 204);
      expect(await ok('GET', `/groups/${group.id}/members?fields=id`)).toStrictEqual({ members: [{ id: u2 }] });
    });

    it('refuses unknown users and linked secondaries with 404, adding none of the batch', async () => {
      const group = await createGroup();
      const primary = await insertUser();
      const secondary = await insertUser({ linked_to: primary });
      await expectError(call('POST', `/groups/${group.id}/members`, { body: { members: [primary, 'auth0|ghost'] } }), 404, 'inexistent_user');
      await expectError(call('POST', `/groups/${group.id}/members`, { body: { members: [secondary] } }), 404, 'inexistent_user');
      expect(await ok('GET', `/groups/${group.id}/members`)).toStrictEqual({ members: [] });
      await expectError(call('POST', `/groups/${group.id}/members`, { body: { members: [] } }), 400, 'invalid_body');
    });
  });

  describe('roles', () => {
    it('assigns (204, idempotent), lists with checkpoints and removes roles; unknown roles are 404', async () => {
      const group = await createGroup();
      const r1 = await createRole();
      const r2 = await createRole();
      await ok('POST', `/groups/${group.id}/roles`, { roles: [r1.id, r2.id] }, 204);
      await ok('POST', `/groups/${group.id}/roles`, { roles: [r1.id] }, 204);
      const all = (await ok('GET', `/groups/${group.id}/roles`)) as { roles: Json[] };
      expect(all.roles).toHaveLength(2);
      expect(all.roles).toEqual(expect.arrayContaining([r1, r2]));
      expect(await ok('GET', `/groups/${group.id}/roles?take=1`)).toStrictEqual({ roles: [all.roles[0]], next: expect.any(String) });
      await ok('DELETE', `/groups/${group.id}/roles`, { roles: [r1.id] }, 204);
      expect(await ok('GET', `/groups/${group.id}/roles`)).toStrictEqual({ roles: [r2] });
      const missing = await expectError(call('POST', `/groups/${group.id}/roles`, { body: { roles: ['rol_missing', r1.id] } }), 404, 'inexistent_role');
      expect(missing.message).toContain('rol_missing');
      expect(await ok('GET', `/groups/${group.id}/roles`)).toStrictEqual({ roles: [r2] });
    });
  });

  describe('no dangling rows', () => {
    it('deleting a user or a role removes its group links; deleting a connection removes its groups; deleting a group removes its links', async () => {
      const connection = (await ok('POST', '/connections', { name: `grp-conn-${unique()}`, strategy: 'auth0' }, 201)) as { id: string };
      const connectionGroup = await createGroup({ connection_id: connection.id });
      const group = await createGroup();
      const role = await createRole();
      const user = await insertUser();
      await ok('POST', `/groups/${group.id}/members`, { members: [user] }, 204);
      await ok('POST', `/groups/${group.id}/roles`, { roles: [role.id] }, 204);

      await ok('DELETE', `/users/${enc(user)}`, undefined, 204);
      expect(await ok('GET', `/groups/${group.id}/members`)).toStrictEqual({ members: [] });
      await ok('DELETE', `/roles/${role.id}`, undefined, 204);
      expect(await ok('GET', `/groups/${group.id}/roles`)).toStrictEqual({ roles: [] });
      await ok('DELETE', `/connections/${connection.id}`, undefined, 204);
      await expectError(call('GET', `/groups/${connectionGroup.id}`), 404, 'inexistent_group');

      const other = await insertUser();
      const otherRole = await createRole();
      await ok('POST', `/groups/${group.id}/members`, { members: [other] }, 204);
      await ok('POST', `/groups/${group.id}/roles`, { roles: [otherRole.id] }, 204);
      await ok('DELETE', `/groups/${group.id}`, undefined, 204);
      expect(await db().selectFrom('group_members').selectAll().where('group_id', '=', group.id).execute()).toEqual([]);
      expect(await db().selectFrom('group_roles').selectAll().where('group_id', '=', group.id).execute()).toEqual([]);
    });
  });

  describe('scopes', () => {
    const expected: [string, string, string[]][] = [
      ['get', '/groups', ['read:groups']],
      ['post', '/groups', ['create:directory_provisionings']],
      ['get', '/groups/{id}', ['read:groups']],
      ['patch', '/groups/{id}', ['update:directory_provisionings']],
      ['delete', '/groups/{id}', ['delete:groups']],
      ['get', '/groups/{id}/members', ['read:group_members']],
      ['post', '/groups/{id}/members', ['update:directory_provisionings']],
      ['delete', '/groups/{id}/members', ['update:directory_provisionings']],
      ['get', '/groups/{id}/roles', ['read:group_roles']],
      ['post', '/groups/{id}/roles', ['create:group_roles']],
      ['delete', '/groups/{id}/roles', ['delete:group_roles']],
    ];

    it('documents every group route with its scopes in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${server.url}/api/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, { security: unknown }>> };
      for (const [method, path, scopes] of expected) {
        expect({ method, path, security: doc.paths[path]?.[method]?.security }).toEqual({ method, path, security: [{ managementApiToken: scopes }] });
      }
    });

    it('refuses a token without the scope (403) and accepts one with it', async () => {
      const group = await createGroup();
      const readOnly = await managementToken(server, ['read:groups']);
      expect((await call('GET', `/groups/${group.id}`, { token: readOnly })).status).toBe(200);
      const refused = await expectError(call('DELETE', `/groups/${group.id}`, { token: readOnly }), 403, 'insufficient_scope');
      expect(refused.message).toBe('Insufficient scope, expected any of: delete:groups');
      await expectError(call('POST', '/groups', { body: { name: `x-${unique()}` }, token: readOnly }), 403, 'insufficient_scope');
      const creator = await managementToken(server, ['create:directory_provisionings']);
      expect((await call('POST', '/groups', { body: { name: `x-${unique()}` }, token: creator })).status).toBe(201);
      expect((await call('DELETE', `/groups/${group.id}`, { token: await managementToken(server, ['delete:groups']) })).status).toBe(204);
    });
  });
});
