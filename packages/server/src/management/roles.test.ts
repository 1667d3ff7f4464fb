/**
 * Roles over real HTTP (roles.ts and user-roles.ts): CRUD, paging shapes, name conflicts, permissions checked
 * against resource server scopes, memberships from both sides, cascades, tenant isolation, bad input, and
 * each route's scopes. Users are rows written straight into the table (the users API is separate).
 * Runs on SQLite, and on PostgreSQL when reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { insertConnection } from '../store/connections.js';
import { insertResourceServer } from '../store/resource-servers.js';
import { insertTenant, updateTenant } from '../store/tenants.js';
import { findConnectionByName } from '../store/connections.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('roles: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

const ROLE_ID = /^rol_[A-Za-z0-9]{16}$/;

describe.each(dialects)('Management API roles (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  let tenantId: string;
  let connectionId: string;
  const API = 'https://api.roles.example/';
  const OTHER_API = 'https://other.roles.example/';

  /** Another tenant with its own role, user and resource server: none of them may be reachable from here. */
  const other = { tenantId: '', roleId: newId.role(), userId: 'auth0|othertenantuser', api: 'https://other-tenant.example/' };

  const db = () => server.server.prepared.store.db;

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

  async function expectError(res: Promise<{ status: number; body: unknown }>, status: number, errorCode: string): Promise<Json> {
    const { status: actual, body } = await res;
    expect({ status: actual, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
    expect(Object.keys(body as Json).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    return body as Json;
  }

  async function createRole(name: string, description?: string): Promise<{ id: string; name: string; description: string }> {
    const res = await call('POST', '/roles', { body: { name, ...(description !== undefined && { description }) } });
    expect(res.status).toBe(200);
    return res.body as { id: string; name: string; description: string };
  }

  let userCounter = 0;
  async function insertUser(
    fields: { user_id?: string; email?: string | null; name?: string; picture?: string; linked_to?: string; tenant_id?: string; connection_id?: string } = {},
  ): Promise<string> {
    userCounter += 1;
    const user_id = fields.user_id ?? `auth0|${userCounter.toString(16).padStart(24, '0')}`;
    const now = Date.now() + userCounter;
    await db()
      .insertInto('users')
      .values({
        user_id,
        tenant_id: fields.tenant_id ?? tenantId,
        connection_id: fields.connection_id ?? connectionId,
        email: fields.email === undefined ? `user${userCounter}@example.com` : fields.email,
        email_verified: 0,
        username: null,
        phone_number: null,
        phone_verified: 0,
        password_hash: null,
        blocked: 0,
        profile: JSON.stringify({ ...(fields.name && { name: fields.name }), ...(fields.picture && { picture: fields.picture }) }),
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

  const enc = encodeURIComponent;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const tenant = server.server.prepared.bootstrap!.tenant;
    tenantId = tenant.id;
    // The scope matrix below makes a few hundred calls in a burst: lift the management bucket for this tenant.
    await updateTenant(db(), tenantId, { settings: { ...tenant.settings, rate_limits: { management: { capacity: 100_000, per_second: 100_000 } } } });
    server.server.services.tenants.invalidate();
    connectionId = (await findConnectionByName(db(), tenantId, DATABASE_CONNECTION_NAME))!.id;

    for (const [identifier, name, scopes] of [
      [API, 'Roles API', [{ value: 'read:data', description: 'Read data' }, { value: 'write:data', description: 'Write data' }, { value: 'admin' }]],
      [OTHER_API, 'Other API', [{ value: 'read:other', description: 'Read other' }]],
    ] as const) {
      const res = await call('POST', '/resource-servers', { body: { identifier, name, scopes } });
      expect(res.status).toBe(201);
    }

    // The other tenant, written directly.
    other.tenantId = newId.tenant();
    await insertTenant(db(), { id: other.tenantId, name: 'other', friendlyName: 'Other', baseUrl: 'https://other.example', domains: ['other.example'] });
    const otherConnection = newId.connection();
    await insertConnection(db(), { id: otherConnection, tenant_id: other.tenantId, name: DATABASE_CONNECTION_NAME, strategy: 'auth0', options: {} }, []);
    await insertUser({ user_id: other.userId, tenant_id: other.tenantId, connection_id: otherConnection });
    const now = Date.now();
    await db().insertInto('roles').values({ id: other.roleId, tenant_id: other.tenantId, name: 'other-admin', description: '', created_at: now, updated_at: now }).execute();
    await insertResourceServer(db(), {
      id: newId.resourceServer(),
      tenant_id: other.tenantId,
      identifier: other.api,
      name: 'Other tenant API',
      is_system: false,
      scopes: [{ value: 'read:x', description: '' }],
      signing_alg: 'RS256',
      token_lifetime: 86400,
      token_lifetime_for_web: 7200,
      allow_offline_access: false,
      skip_consent_for_verifiable_first_party_clients: true,
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  describe('roles CRUD', () => {
    it('creates (200), reads, updates and deletes a role', async () => {
      const created = await createRole('crud-editor', 'Edits things');
      expect(created).toStrictEqual({ id: expect.stringMatching(ROLE_ID), name: 'crud-editor', description: 'Edits things' });

      expect((await call('GET', `/roles/${created.id}`)).body).toStrictEqual(created);

      const patched = await call('PATCH', `/roles/${created.id}`, { body: { name: 'crud-writer' } });
      expect(patched).toMatchObject({ status: 200, body: { id: created.id, name: 'crud-writer', description: 'Edits things' } });
      const described = await call('PATCH', `/roles/${created.id}`, { body: { description: '' } });
      expect(described.body).toStrictEqual({ id: created.id, name: 'crud-writer', description: '' });
      expect((await call('PATCH', `/roles/${created.id}`, { body: {} })).body).toStrictEqual(described.body);
      expect((await call('GET', `/roles/${created.id}`)).body).toStrictEqual(described.body);

      const deleted = await call('DELETE', `/roles/${created.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      await expectError(call('GET', `/roles/${created.id}`), 404, 'inexistent_role');
      await expectError(call('DELETE', `/roles/${created.id}`), 404, 'inexistent_role');
    });

    it('defaults the description to an empty string', async () => {
      expect(await createRole('crud-no-description')).toMatchObject({ description: '' });
    });

    it('refuses a duplicate name with 409 conflict, on create and on rename', async () => {
      const a = await createRole('dup-a');
      await createRole('dup-b');
      const body = await expectError(call('POST', '/roles', { body: { name: 'dup-a' } }), 409, 'conflict');
      expect(body.message).toMatch(/already exists/);
      await expectError(call('PATCH', `/roles/${a.id}`, { body: { name: 'dup-b' } }), 409, 'conflict');
      // Keeping its own name is no conflict.
      expect((await call('PATCH', `/roles/${a.id}`, { body: { name: 'dup-a', description: 'same name' } })).status).toBe(200);
    });

    it('answers 400 in the management shape for bad bodies and queries', async () => {
      const role = await createRole('bad-input');
      await expectError(call('POST', '/roles', { body: {} }), 400, 'invalid_body');
      await expectError(call('POST', '/roles', { body: { name: '' } }), 400, 'invalid_body');
      await expectError(call('POST', '/roles', { body: { name: '   ' } }), 400, 'invalid_body');
      await expectError(call('POST', '/roles', { body: { name: 'x'.repeat(51) } }), 400, 'invalid_body');
      await expectError(call('POST', '/roles', { body: { name: 'ok', permissions: [] } }), 400, 'invalid_body');
      await expectError(call('POST', '/roles', { body: { name: 'ok', description: 'x'.repeat(256) } }), 400, 'invalid_body');
      await expectError(call('POST', '/roles', { body: ['name'] }), 400, 'invalid_body');
      await expectError(call('PATCH', `/roles/${role.id}`, { body: { id: 'rol_AAAAAAAAAAAAAAAA' } }), 400, 'invalid_body');
      await expectError(call('PATCH', `/roles/${role.id}`, { body: { name: '' } }), 400, 'invalid_body');
      // NUL cannot be stored (PostgreSQL text): refused as input, never a database error.
      await expectError(call('POST', '/roles', { body: { name: 'a\u0000b' } }), 400, 'invalid_body');
      await expectError(call('PATCH', `/roles/${role.id}`, { body: { description: '\u0000' } }), 400, 'invalid_body');
      await expectError(call('GET', '/roles/rol_%00'), 400, 'invalid_uri');
      await expectError(call('GET', '/users/auth0%7C%00/roles'), 400, 'invalid_uri');
      await expectError(call('POST', `/roles/${role.id}/users`, { body: { users: ['auth0|\u0000'] } }), 400, 'invalid_body');
      await expectError(call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [{ resource_server_identifier: '\u0000', permission_name: 'x' }] } }), 400, 'invalid_body');
      expect((await call('POST', '/roles', { body: { name: ' spaced\nname ' } })).status).toBe(200);
      await expectError(call('GET', '/roles?per_page=101'), 400, 'invalid_query_string');
      await expectError(call('GET', '/roles?page=-1'), 400, 'invalid_query_string');
      await expectError(call('GET', '/roles?sort=name:1'), 400, 'invalid_query_string');
      await expectError(call('GET', '/roles?page=20&per_page=50'), 400, 'invalid_query_string');
      // type=tenant (auth0-deploy-cli sends it) selects every role; other types are refused.
      const all = (await call('GET', '/roles?per_page=100')).body as unknown as { id: string }[];
      const tenantRoles = (await call('GET', '/roles?per_page=100&page=0&include_totals=true&type=tenant')).body as unknown as { roles: { id: string }[] };
      expect(tenantRoles.roles.map((r) => r.id)).toEqual(all.map((r) => r.id));
      await expectError(call('GET', '/roles?type=organization'), 400, 'invalid_query_string');
    });

    it('answers 404 for unknown, malformed and other-tenant role ids on every role route, never 500', async () => {
      for (const id of ['rol_AAAAAAAAAAAAAAAA', 'not-a-role', enc('rol_/../x'), enc("rol_' OR 1=1 --"), other.roleId]) {
        await expectError(call('GET', `/roles/${id}`), 404, 'inexistent_role');
        await expectError(call('PATCH', `/roles/${id}`, { body: { name: 'x' } }), 404, 'inexistent_role');
        await expectError(call('DELETE', `/roles/${id}`), 404, 'inexistent_role');
        await expectError(call('GET', `/roles/${id}/permissions`), 404, 'inexistent_role');
        const permissions = { permissions: [{ resource_server_identifier: API, permission_name: 'read:data' }] };
        await expectError(call('POST', `/roles/${id}/permissions`, { body: permissions }), 404, 'inexistent_role');
        await expectError(call('DELETE', `/roles/${id}/permissions`, { body: permissions }), 404, 'inexistent_role');
        await expectError(call('GET', `/roles/${id}/users`), 404, 'inexistent_role');
        await expectError(call('POST', `/roles/${id}/users`, { body: { users: ['auth0|nobody'] } }), 404, 'inexistent_role');
      }
      // The other tenant's role is untouched.
      expect(await db().selectFrom('roles').select('name').where('id', '=', other.roleId).executeTakeFirst()).toEqual({ name: 'other-admin' });
    });
  });

  describe('listing roles', () => {
    let names: string[];
    beforeAll(async () => {
      names = ['list-Charlie', 'list-alpha', 'list-Bravo'];
      for (const name of names) await createRole(name, `${name} description`);
    });

    it('answers a plain array without paging, and never lists another tenant’s roles', async () => {
      const res = await call('GET', '/roles');
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      const roles = res.body as Json[];
      expect(roles.map((r) => r.name)).not.toContain('other-admin');
      for (const role of roles) expect(Object.keys(role).sort()).toEqual(['description', 'id', 'name']);
    });

    it('filters by name_filter, case-insensitively, as a substring', async () => {
      const res = await call('GET', '/roles?name_filter=LIST-');
      expect((res.body as Json[]).map((r) => r.name)).toEqual(['list-alpha', 'list-Bravo', 'list-Charlie']);
      expect((await call('GET', '/roles?name_filter=bRaVo')).body).toMatchObject([{ name: 'list-Bravo', description: 'list-Bravo description' }]);
      expect((await call('GET', '/roles?name_filter=no-such-role')).body).toEqual([]);
    });

    it('pages with page/per_page, and with include_totals answers {start, limit, length, total, roles}', async () => {
      const page1 = await call('GET', '/roles?name_filter=list-&per_page=2&page=1');
      expect((page1.body as Json[]).map((r) => r.name)).toEqual(['list-Charlie']);
      const totals = await call('GET', '/roles?name_filter=list-&per_page=2&page=0&include_totals=true');
      expect(totals.body).toStrictEqual({
        start: 0,
        limit: 2,
        length: 2,
        total: 3,
        roles: [expect.objectContaining({ name: 'list-alpha' }), expect.objectContaining({ name: 'list-Bravo' })],
      });
    });
  });

  describe('role permissions', () => {
    const readData = { resource_server_identifier: API, permission_name: 'read:data' };
    const writeData = { resource_server_identifier: API, permission_name: 'write:data' };
    const admin = { resource_server_identifier: API, permission_name: 'admin' };
    const readOther = { resource_server_identifier: OTHER_API, permission_name: 'read:other' };

    it('adds (201, idempotent), lists with descriptions and API names, and removes (204) permissions', async () => {
      const role = await createRole('perm-role');
      expect((await call('GET', `/roles/${role.id}/permissions`)).body).toEqual([]);

      const added = await call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [readOther, writeData, readData, readData] } });
      expect(added.status).toBe(201);
      expect((await call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [readData, admin] } })).status).toBe(201);

      const listed = await call('GET', `/roles/${role.id}/permissions`);
      expect(listed).toMatchObject({ status: 200 });
      expect(listed.body).toStrictEqual([
        { permission_name: 'admin', description: '', resource_server_identifier: API, resource_server_name: 'Roles API' },
        { permission_name: 'read:data', description: 'Read data', resource_server_identifier: API, resource_server_name: 'Roles API' },
        { permission_name: 'write:data', description: 'Write data', resource_server_identifier: API, resource_server_name: 'Roles API' },
        { permission_name: 'read:other', description: 'Read other', resource_server_identifier: OTHER_API, resource_server_name: 'Other API' },
      ]);

      const paged = await call('GET', `/roles/${role.id}/permissions?per_page=3&page=1&include_totals=true`);
      expect(paged.body).toStrictEqual({ start: 3, limit: 3, length: 1, total: 4, permissions: [expect.objectContaining({ permission_name: 'read:other' })] });

      const removed = await call('DELETE', `/roles/${role.id}/permissions`, { body: { permissions: [readData, readOther] } });
      expect(removed.status).toBe(204);
      // Removing what the role does not hold is a no-op.
      expect((await call('DELETE', `/roles/${role.id}/permissions`, { body: { permissions: [readData] } })).status).toBe(204);
      expect(((await call('GET', `/roles/${role.id}/permissions`)).body as Json[]).map((p) => p.permission_name)).toEqual(['admin', 'write:data']);
    });

    it('checks every permission against the tenant’s resource servers and their scopes, writing nothing on failure', async () => {
      const role = await createRole('perm-validation');
      const unknownApi = await expectError(
        call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [readData, { resource_server_identifier: 'https://nope.example/', permission_name: 'read:data' }] } }),
        404,
        'inexistent_resource_server',
      );
      expect(unknownApi.message).toContain('https://nope.example/');
      const unknownScope = await expectError(
        call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [readData, { resource_server_identifier: API, permission_name: 'delete:data' }] } }),
        400,
        'invalid_body',
      );
      expect(unknownScope.message).toContain('delete:data');
      expect(unknownScope.message).toContain(API);
      // Another tenant's API is unknown here.
      await expectError(
        call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [{ resource_server_identifier: other.api, permission_name: 'read:x' }] } }),
        404,
        'inexistent_resource_server',
      );
      expect((await call('GET', `/roles/${role.id}/permissions`)).body).toEqual([]);
    });

    it('refuses malformed permission bodies with 400', async () => {
      const role = await createRole('perm-bad-body');
      for (const method of ['POST', 'DELETE']) {
        const path = `/roles/${role.id}/permissions`;
        await expectError(call(method, path, { body: { permissions: [] } }), 400, 'invalid_body');
        await expectError(call(method, path, { body: {} }), 400, 'invalid_body');
        await expectError(call(method, path, { body: { permissions: [{ resource_server_identifier: API }] } }), 400, 'invalid_body');
        await expectError(call(method, path, { body: { permissions: [{ ...readData, extra: 1 }] } }), 400, 'invalid_body');
        await expectError(call(method, path, { body: { permissions: [{ ...readData, permission_name: '' }] } }), 400, 'invalid_body');
        await expectError(call(method, path, { body: { permissions: [readData], extra: true } }), 400, 'invalid_body');
      }
    });

    it('stops listing (and granting) permissions whose resource server was deleted', async () => {
      const identifier = 'https://short-lived.example/';
      const rs = await call('POST', '/resource-servers', { body: { identifier, scopes: [{ value: 'x' }] } });
      const role = await createRole('perm-dangling');
      await call('POST', `/roles/${role.id}/permissions`, { body: { permissions: [readData, { resource_server_identifier: identifier, permission_name: 'x' }] } });
      expect((await call('GET', `/roles/${role.id}/permissions`)).body).toHaveLength(2);
      expect((await call('DELETE', `/resource-servers/${(rs.body as Json).id as string}`)).status).toBe(204);
      expect((await call('GET', `/roles/${role.id}/permissions`)).body).toMatchObject([{ permission_name: 'read:data' }]);
    });
  });

  describe('memberships', () => {
    it('assigns users to a role (200) and lists them with user_id, email, picture and name', async () => {
      const role = await createRole('members-role');
      const ann = await insertUser({ name: 'Ann', picture: 'https://pics.example/ann.png', email: 'ann@example.com' });
      const bob = await insertUser({ email: null });
      const res = await call('POST', `/roles/${role.id}/users`, { body: { users: [ann, bob, ann] } });
      expect(res.status).toBe(200);
      // Assigning again is a no-op.
      expect((await call('POST', `/roles/${role.id}/users`, { body: { users: [ann] } })).status).toBe(200);

      const listed = await call('GET', `/roles/${role.id}/users`);
      expect(listed.body).toStrictEqual([{ user_id: ann, email: 'ann@example.com', picture: 'https://pics.example/ann.png', name: 'Ann' }, { user_id: bob }]);

      const totals = await call('GET', `/roles/${role.id}/users?per_page=1&page=1&include_totals=true`);
      expect(totals.body).toStrictEqual({ start: 1, limit: 1, length: 1, total: 2, users: [{ user_id: bob }] });

      const first = await call('GET', `/roles/${role.id}/users?take=1`);
      expect(first.body).toStrictEqual({ users: [expect.objectContaining({ user_id: ann })], next: expect.any(String) });
      const second = await call('GET', `/roles/${role.id}/users?take=1&from=${enc((first.body as { next: string }).next)}`);
      expect(second.body).toStrictEqual({ users: [{ user_id: bob }] });
      await expectError(call('GET', `/roles/${role.id}/users?from=garbage`), 400, 'invalid_query_string');
    });

    it('refuses unknown, other-tenant and linked (secondary) users with 404 inexistent_user, assigning none', async () => {
      const role = await createRole('members-refused');
      const primary = await insertUser();
      const secondary = await insertUser({ linked_to: primary });
      for (const bad of ['auth0|nobody', other.userId, secondary]) {
        const body = await expectError(call('POST', `/roles/${role.id}/users`, { body: { users: [primary, bad] } }), 404, 'inexistent_user');
        expect(body.message).toContain(bad);
        expect(body.message).not.toContain(primary);
      }
      expect((await call('GET', `/roles/${role.id}/users`)).body).toEqual([]);
      await expectError(call('POST', `/roles/${role.id}/users`, { body: { users: [] } }), 400, 'invalid_body');
      await expectError(call('POST', `/roles/${role.id}/users`, { body: { users: [''] } }), 400, 'invalid_body');
      await expectError(call('POST', `/roles/${role.id}/users`, { body: { user_ids: [primary] } }), 400, 'invalid_body');
    });

    it('assigns, lists and removes roles from the user side (ids with | URL-encoded)', async () => {
      const user = await insertUser({ name: 'Cat' });
      const r1 = await createRole('user-side-b');
      const r2 = await createRole('user-side-a');
      expect((await call('GET', `/users/${enc(user)}/roles`)).body).toEqual([]);

      const assigned = await call('POST', `/users/${enc(user)}/roles`, { body: { roles: [r1.id, r2.id, r1.id] } });
      expect(assigned.status).toBe(204);
      expect((await call('POST', `/users/${enc(user)}/roles`, { body: { roles: [r1.id] } })).status).toBe(204);
      expect((await call('GET', `/users/${enc(user)}/roles`)).body).toStrictEqual([r2, r1]);
      expect((await call('GET', `/users/${enc(user)}/roles?include_totals=true&per_page=1`)).body).toStrictEqual({
        start: 0,
        limit: 1,
        length: 1,
        total: 2,
        roles: [r2],
      });
      // Visible from the role side too.
      expect((await call('GET', `/roles/${r1.id}/users`)).body).toEqual([expect.objectContaining({ user_id: user, name: 'Cat' })]);

      expect((await call('DELETE', `/users/${enc(user)}/roles`, { body: { roles: [r1.id] } })).status).toBe(204);
      expect((await call('DELETE', `/users/${enc(user)}/roles`, { body: { roles: [r1.id] } })).status).toBe(204);
      expect((await call('GET', `/users/${enc(user)}/roles`)).body).toStrictEqual([r2]);
      expect((await call('GET', `/roles/${r1.id}/users`)).body).toEqual([]);
    });

    it('refuses unknown users and roles on the user side with 404, and bad bodies with 400', async () => {
      const user = await insertUser();
      const secondary = await insertUser({ linked_to: user });
      const role = await createRole('user-side-refused');
      for (const bad of ['auth0|nobody', other.userId, secondary]) {
        await expectError(call('GET', `/users/${enc(bad)}/roles`), 404, 'inexistent_user');
        await expectError(call('POST', `/users/${enc(bad)}/roles`, { body: { roles: [role.id] } }), 404, 'inexistent_user');
        await expectError(call('DELETE', `/users/${enc(bad)}/roles`, { body: { roles: [role.id] } }), 404, 'inexistent_user');
        await expectError(call('GET', `/users/${enc(bad)}/permissions`), 404, 'inexistent_user');
      }
      for (const badRole of ['rol_AAAAAAAAAAAAAAAA', 'nope', other.roleId]) {
        for (const method of ['POST', 'DELETE']) {
          const body = await expectError(call(method, `/users/${enc(user)}/roles`, { body: { roles: [role.id, badRole] } }), 404, 'inexistent_role');
          expect(body.message).toContain(badRole);
        }
      }
      expect((await call('GET', `/users/${enc(user)}/roles`)).body).toEqual([]);
      await expectError(call('POST', `/users/${enc(user)}/roles`, { body: { roles: [] } }), 400, 'invalid_body');
      await expectError(call('POST', `/users/${enc(user)}/roles`, { body: {} }), 400, 'invalid_body');
      await expectError(call('DELETE', `/users/${enc(user)}/roles`, { body: { roles: [role.id], users: [] } }), 400, 'invalid_body');
      await expectError(call('GET', `/users/${enc(user)}/roles?per_page=0`), 400, 'invalid_query_string');
    });

    it('lists a user’s permissions as the union over their roles, with each source role', async () => {
      const user = await insertUser();
      const editor = await createRole('union-editor');
      const viewer = await createRole('union-viewer');
      const unrelated = await createRole('union-unrelated');
      const readData = { resource_server_identifier: API, permission_name: 'read:data' };
      const writeData = { resource_server_identifier: API, permission_name: 'write:data' };
      const readOther = { resource_server_identifier: OTHER_API, permission_name: 'read:other' };
      await call('POST', `/roles/${editor.id}/permissions`, { body: { permissions: [readData, writeData] } });
      await call('POST', `/roles/${viewer.id}/permissions`, { body: { permissions: [readData] } });
      await call('POST', `/roles/${unrelated.id}/permissions`, { body: { permissions: [readOther] } });
      expect((await call('GET', `/users/${enc(user)}/permissions`)).body).toEqual([]);
      await call('POST', `/users/${enc(user)}/roles`, { body: { roles: [editor.id, viewer.id] } });

      const source = (r: { id: string; name: string }) => ({ source_id: r.id, source_name: r.name, source_type: 'ROLE' });
      const res = await call('GET', `/users/${enc(user)}/permissions`);
      expect(res.status).toBe(200);
      const permissions = res.body as Json[];
      expect(permissions).toHaveLength(2);
      expect(permissions[0]).toStrictEqual({
        permission_name: 'read:data',
        description: 'Read data',
        resource_server_identifier: API,
        resource_server_name: 'Roles API',
        sources: expect.arrayContaining([source(editor), source(viewer)]),
      });
      expect(permissions[0]!.sources).toHaveLength(2);
      expect(permissions[1]).toStrictEqual({
        permission_name: 'write:data',
        description: 'Write data',
        resource_server_identifier: API,
        resource_server_name: 'Roles API',
        sources: [source(editor)],
      });
      expect((await call('GET', `/users/${enc(user)}/permissions?include_totals=true&per_page=1&page=1`)).body).toMatchObject({
        start: 1,
        limit: 1,
        length: 1,
        total: 2,
        permissions: [{ permission_name: 'write:data' }],
      });
    });

    it('deleting a role removes its permissions and memberships in the same step', async () => {
      const user = await insertUser();
      const doomed = await createRole('cascade-doomed');
      const kept = await createRole('cascade-kept');
      await call('POST', `/roles/${doomed.id}/permissions`, { body: { permissions: [{ resource_server_identifier: API, permission_name: 'read:data' }] } });
      await call('POST', `/roles/${doomed.id}/users`, { body: { users: [user] } });
      await call('POST', `/roles/${kept.id}/users`, { body: { users: [user] } });

      expect((await call('DELETE', `/roles/${doomed.id}`)).status).toBe(204);
      expect((await call('GET', `/users/${enc(user)}/roles`)).body).toStrictEqual([kept]);
      expect((await call('GET', `/users/${enc(user)}/permissions`)).body).toEqual([]);
      expect(await db().selectFrom('role_permissions').selectAll().where('role_id', '=', doomed.id).execute()).toEqual([]);
      expect(await db().selectFrom('user_roles').selectAll().where('role_id', '=', doomed.id).execute()).toEqual([]);
      // A new role with the old name starts empty.
      const again = await createRole('cascade-doomed');
      expect((await call('GET', `/roles/${again.id}/permissions`)).body).toEqual([]);
      expect((await call('GET', `/roles/${again.id}/users`)).body).toEqual([]);
    });
  });

  describe('scopes', () => {
    interface Route {
      method: string;
      scopes: string[];
      /** Builds a fresh request (path and body) that succeeds with `status`. */
      request: () => Promise<{ path: string; body?: unknown }>;
      status: number;
    }
    const perm = { permissions: [{ resource_server_identifier: API, permission_name: 'read:data' }] };
    let n = 0;
    const fresh = async () => (await createRole(`scopes-${++n}`)).id;
    const routes: Route[] = [
      { method: 'GET', scopes: ['read:roles'], status: 200, request: async () => ({ path: '/roles' }) },
      { method: 'POST', scopes: ['create:roles'], status: 200, request: async () => ({ path: '/roles', body: { name: `scopes-created-${++n}` } }) },
      { method: 'GET', scopes: ['read:roles'], status: 200, request: async () => ({ path: `/roles/${await fresh()}` }) },
      { method: 'PATCH', scopes: ['update:roles'], status: 200, request: async () => ({ path: `/roles/${await fresh()}`, body: { description: 'd' } }) },
      { method: 'DELETE', scopes: ['delete:roles'], status: 204, request: async () => ({ path: `/roles/${await fresh()}` }) },
      { method: 'GET', scopes: ['read:roles'], status: 200, request: async () => ({ path: `/roles/${await fresh()}/permissions` }) },
      { method: 'POST', scopes: ['update:roles'], status: 201, request: async () => ({ path: `/roles/${await fresh()}/permissions`, body: perm }) },
      { method: 'DELETE', scopes: ['update:roles'], status: 204, request: async () => ({ path: `/roles/${await fresh()}/permissions`, body: perm }) },
      { method: 'GET', scopes: ['read:users', 'read:roles', 'read:role_members'], status: 200, request: async () => ({ path: `/roles/${await fresh()}/users` }) },
      {
        method: 'POST',
        scopes: ['create:role_members', 'update:roles'],
        status: 200,
        request: async () => ({ path: `/roles/${await fresh()}/users`, body: { users: [await insertUser()] } }),
      },
      { method: 'GET', scopes: ['read:users', 'read:roles'], status: 200, request: async () => ({ path: `/users/${enc(await insertUser())}/roles` }) },
      {
        method: 'POST',
        scopes: ['create:role_members', 'update:users'],
        status: 204,
        request: async () => ({ path: `/users/${enc(await insertUser())}/roles`, body: { roles: [await fresh()] } }),
      },
      {
        method: 'DELETE',
        scopes: ['delete:role_members', 'update:users'],
        status: 204,
        request: async () => ({ path: `/users/${enc(await insertUser())}/roles`, body: { roles: [await fresh()] } }),
      },
      { method: 'GET', scopes: ['read:users'], status: 200, request: async () => ({ path: `/users/${enc(await insertUser())}/permissions` }) },
    ];

    it.each(routes.map((r) => [`${r.method} ${r.scopes.join('|')}`, r] as const))(
      '%s: 403 without its scopes, success with any one of them',
      async (_name, route) => {
        const { path, body } = await route.request();
        const unrelated = await managementToken(server, ['read:clients', 'create:users', 'delete:users', 'read:logs']);
        const refused = await expectError(call(route.method, path, { body, token: unrelated }), 403, 'insufficient_scope');
        expect(refused.message).toBe(`Insufficient scope, expected any of: ${route.scopes.join(',')}`);
        for (const scope of route.scopes) {
          const fresh = await route.request();
          const res = await call(route.method, fresh.path, { body: fresh.body, token: await managementToken(server, [scope]) });
          expect({ scope, status: res.status, body: res.body }).toMatchObject({ scope, status: route.status });
        }
      },
    );

    it('documents every role route with its scopes in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${server.url}/api/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, { security: unknown }>> };
      for (const route of routes) {
        const { path } = await route.request();
        const template = path.replace(/^\/roles\/[^/]+/, '/roles/{id}').replace(/^\/users\/[^/]+/, '/users/{id}');
        expect(doc.paths[template]?.[route.method.toLowerCase()]?.security).toEqual([{ managementApiToken: route.scopes }]);
      }
    });

    it('refuses a request without a token with 401', async () => {
      const res = await fetch(`${server.url}/api/v2/roles`);
      expect(res.status).toBe(401);
    });
  });
});
