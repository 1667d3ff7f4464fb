/**
 * /api/v2/client-grants over real HTTP (client-grants.ts): CRUD and shapes, the end-to-end path from a new
 * client to a client-credentials token, scopes checked against the API, user grants to the Management API,
 * allow_all_scopes, conflicts (also under a race), the admin's system grant, paging and filters, tenant
 * isolation, bad input and each route's scopes. Runs on SQLite, and on PostgreSQL when reachable.
 */
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../crypto/ids.js';
import { insertClientGrant } from '../store/client-grants.js';
import { insertClient } from '../store/clients.js';
import { insertResourceServer } from '../store/resource-servers.js';
import { insertTenant, updateTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { CURRENT_USER_SCOPES } from './client-grants.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('client grants: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

const GRANT_ID = /^cgr_[A-Za-z0-9]{16}$/;

describe.each(dialects)('Management API client grants (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  let managementApi: string;
  const db = () => server.server.prepared.store.db;
  const other = { tenantId: newId.tenant(), clientId: newId.client(), api: 'https://other-tenant.example/', grantId: newId.clientGrant() };

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
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  }

  async function expectError(res: Promise<{ status: number; body: Json }>, status: number, errorCode: string, message?: RegExp): Promise<Json> {
    const { status: actual, body } = await res;
    expect({ status: actual, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    if (message) expect(body.message).toMatch(message);
    return body;
  }

  /** A machine client made through the API, with its secret. */
  async function newClient(body: Json = {}): Promise<{ client_id: string; client_secret: string }> {
    const res = await call('POST', '/clients', { body: { name: `m2m ${randomUUID().slice(0, 8)}`, app_type: 'non_interactive', ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { client_id: string; client_secret: string };
  }

  /** An API made through the API, with the given scopes. */
  async function newApi(scopes: string[] = ['read:things', 'write:things']): Promise<string> {
    const identifier = `https://api-${randomUUID().slice(0, 8)}.example/`;
    const res = await call('POST', '/resource-servers', { body: { identifier, scopes: scopes.map((value) => ({ value })) } });
    expect(res.status).toBe(201);
    return identifier;
  }

  async function grant(body: Json): Promise<Json> {
    const res = await call('POST', '/client-grants', { body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  async function tokenFor(client: { client_id: string; client_secret: string }, audience: string, scope?: string) {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret,
        audience,
        ...(scope !== undefined && { scope }),
      }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const tenant = server.server.prepared.bootstrap!.tenant;
    managementApi = server.server.prepared.bootstrap!.managementAudience;
    const unlimited = { capacity: 100_000, per_second: 100_000 };
    await updateTenant(db(), tenant.id, { settings: { ...tenant.settings, rate_limits: { management: unlimited, token: unlimited } } });
    server.server.services.tenants.invalidate();

    // Another tenant with a client, an API and a grant: none may be reachable from the default tenant.
    await insertTenant(db(), { id: other.tenantId, name: 'other', friendlyName: 'Other', baseUrl: 'http://other.localhost:1', domains: ['other.localhost'] });
    await server.server.prepared.keyRing.ensureKeys(other.tenantId);
    await insertClient(db(), {
      tenant_id: other.tenantId,
      client_id: other.clientId,
      name: 'Other tenant app',
      app_type: 'non_interactive',
      is_first_party: true,
      token_endpoint_auth_method: 'client_secret_post',
      client_secret_sealed: null,
      callbacks: [],
      allowed_logout_urls: [],
      web_origins: [],
      allowed_origins: [],
      grant_types: ['client_credentials'],
    });
    await insertResourceServer(db(), {
      id: newId.resourceServer(),
      tenant_id: other.tenantId,
      identifier: other.api,
      name: 'Other API',
      is_system: false,
      scopes: [{ value: 'read:things', description: '' }],
      signing_alg: 'RS256',
      token_lifetime: 3600,
      token_lifetime_for_web: 3600,
      allow_offline_access: false,
      skip_consent_for_verifiable_first_party_clients: true,
    });
    await insertClientGrant(db(), { id: other.grantId, tenant_id: other.tenantId, client_id: other.clientId, audience: other.api, scope: ['read:things'] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('takes a client made through the API to a client-credentials token for an API made through the API', async () => {
    const client = await newClient();
    const api = await newApi();
    expect(await tokenFor(client, api)).toMatchObject({ status: 403, body: { error: 'access_denied' } });

    const created = await grant({ client_id: client.client_id, audience: api, scope: ['read:things'] });
    expect(created).toEqual({
      id: expect.stringMatching(GRANT_ID),
      client_id: client.client_id,
      audience: api,
      scope: ['read:things'],
      subject_type: 'client',
      allow_any_organization: false,
      is_system: false,
    });
    const issued = await tokenFor(client, api);
    expect(issued).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'read:things' } });
    expect(decodeJwt(issued.body.access_token as string)).toMatchObject({ aud: api, sub: `${client.client_id}@clients`, scope: 'read:things' });
    expect(await tokenFor(client, api, 'write:things')).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });

    // Widening the grant widens the next token; deleting it ends access.
    const widened = await call('PATCH', `/client-grants/${created.id}`, { body: { scope: ['read:things', 'write:things'] } });
    expect(widened).toMatchObject({ status: 200, body: { id: created.id, scope: ['read:things', 'write:things'] } });
    expect((await tokenFor(client, api)).body.scope).toBe('read:things write:things');
    expect((await call('DELETE', `/client-grants/${created.id}`)).status).toBe(204);
    expect(await tokenFor(client, api)).toMatchObject({ status: 403, body: { error: 'access_denied' } });
  });

  it('reads a grant by id and stores the documented options', async () => {
    const client = await newClient();
    const api = await newApi();
    const created = await grant({
      client_id: client.client_id,
      audience: api,
      scope: ['write:things', 'read:things', 'read:things'],
      organization_usage: 'allow',
      allow_any_organization: true,
      authorization_details_types: ['payment_initiation'],
    });
    expect(created).toMatchObject({
      scope: ['write:things', 'read:things'],
      organization_usage: 'allow',
      allow_any_organization: true,
      authorization_details_types: ['payment_initiation'],
    });
    expect((await call('GET', `/client-grants/${created.id}`)).body).toEqual(created);

    const cleared = await call('PATCH', `/client-grants/${created.id}`, { body: { organization_usage: null, allow_any_organization: null, scope: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ ...created, scope: [], allow_any_organization: false, organization_usage: undefined });
    expect(cleared.body).not.toHaveProperty('organization_usage');
    expect((await call('GET', `/client-grants/${created.id}`)).body).toEqual(cleared.body);
  });

  it('checks each scope against the API, naming the one it does not define', async () => {
    const client = await newClient();
    const api = await newApi(['read:things']);
    await expectError(
      call('POST', '/client-grants', { body: { client_id: client.client_id, audience: api, scope: ['read:things', 'delete:everything'] } }),
      400,
      'invalid_body',
      /"delete:everything" is not a scope of the API/,
    );
    const created = await grant({ client_id: client.client_id, audience: api, scope: ['read:things'] });
    await expectError(call('PATCH', `/client-grants/${created.id}`, { body: { scope: ['nope'] } }), 400, 'invalid_body', /"nope"/);
    expect((await call('GET', `/client-grants/${created.id}`)).body.scope).toEqual(['read:things']);
  });

  it('grants every current and future scope of the API with allow_all_scopes', async () => {
    const client = await newClient();
    const api = await newApi(['a:one']);
    await grant({ client_id: client.client_id, audience: api, scope: [], allow_all_scopes: true });
    expect((await tokenFor(client, api)).body.scope).toBe('a:one');
    const rs = await call('GET', `/resource-servers/${encodeURIComponent(api)}`);
    expect((await call('PATCH', `/resource-servers/${rs.body.id}`, { body: { scopes: [{ value: 'a:one' }, { value: 'a:two' }] } })).status).toBe(200);
    expect((await tokenFor(client, api)).body.scope).toBe('a:one a:two');
  });

  describe('user access to the Management API', () => {
    it('allows only the current_user scopes of the contract, and is never used for client credentials', async () => {
      const client = await newClient();
      await expectError(
        call('POST', '/client-grants', { body: { client_id: client.client_id, audience: managementApi, subject_type: 'user', scope: ['read:current_user', 'read:users'] } }),
        400,
        'invalid_body',
        /"read:users" cannot be granted to users/,
      );
      await expectError(
        call('POST', '/client-grants', { body: { client_id: client.client_id, audience: managementApi, subject_type: 'user', allow_all_scopes: true } }),
        400,
        'invalid_body',
      );
      const created = await grant({ client_id: client.client_id, audience: managementApi, subject_type: 'user', scope: [...CURRENT_USER_SCOPES] });
      expect(created).toMatchObject({ subject_type: 'user', scope: CURRENT_USER_SCOPES });
      await expectError(call('PATCH', `/client-grants/${created.id}`, { body: { scope: ['read:clients'] } }), 400, 'invalid_body');
      // A user grant gives nothing to the client itself.
      expect(await tokenFor(client, managementApi)).toMatchObject({ status: 403, body: { error: 'access_denied' } });
      const users = (await call('GET', `/client-grants?subject_type=user&client_id=${client.client_id}`)).body as unknown as Json[];
      expect(users.map((g) => g.id)).toEqual([created.id]);
    });

    it('lets a client grant to the Management API hold any catalogue scope', async () => {
      const client = await newClient();
      await grant({ client_id: client.client_id, audience: managementApi, scope: ['read:clients'] });
      const issued = await tokenFor(client, managementApi);
      expect(issued).toMatchObject({ status: 200, body: { scope: 'read:clients' } });
      const listed = await call('GET', '/clients?fields=client_id', { token: issued.body.access_token as string });
      expect(listed.status).toBe(200);
      expect((await call('GET', '/client-grants', { token: issued.body.access_token as string })).status).toBe(403);
    });
  });

  it('answers 409 for a second grant of one client and audience, also when two race', async () => {
    const client = await newClient();
    const api = await newApi();
    await grant({ client_id: client.client_id, audience: api, scope: ['read:things'] });
    await expectError(call('POST', '/client-grants', { body: { client_id: client.client_id, audience: api, scope: [] } }), 409, 'conflict');

    const racer = await newClient();
    const results = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/client-grants', { body: { client_id: racer.client_id, audience: api, scope: ['read:things'] } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.errorCode).toBe('conflict');
    expect((await call('GET', `/client-grants?client_id=${racer.client_id}`)).body).toHaveLength(1);
  });

  it('answers 404 for an unknown client or API, including those of another tenant', async () => {
    const client = await newClient();
    const api = await newApi();
    await expectError(call('POST', '/client-grants', { body: { client_id: newId.client(), audience: api } }), 404, 'inexistent_client');
    await expectError(call('POST', '/client-grants', { body: { client_id: other.clientId, audience: api } }), 404, 'inexistent_client');
    await expectError(call('POST', '/client-grants', { body: { client_id: client.client_id, audience: 'https://nowhere.example/' } }), 404, 'inexistent_resource_server');
    await expectError(call('POST', '/client-grants', { body: { client_id: client.client_id, audience: other.api } }), 404, 'inexistent_resource_server');
    expect((await call('GET', `/client-grants?client_id=${client.client_id}`)).body).toEqual([]);
  });

  it('answers 404 inexistent_client_grant for unknown ids and another tenant\'s grant; 400 for malformed ids', async () => {
    for (const id of [newId.clientGrant(), other.grantId]) {
      await expectError(call('GET', `/client-grants/${id}`), 404, 'inexistent_client_grant');
      await expectError(call('PATCH', `/client-grants/${id}`, { body: { scope: [] } }), 404, 'inexistent_client_grant');
      await expectError(call('DELETE', `/client-grants/${id}`), 404, 'inexistent_client_grant');
    }
    const all = (await call('GET', '/client-grants?take=100')).body.client_grants as Json[];
    expect(all.map((g) => g.id)).not.toContain(other.grantId);
    for (const id of ['cgr_short', 'abc', 'cgr_AAAAAAAAAAAAAAA%3C']) {
      await expectError(call('GET', `/client-grants/${id}`), 400, 'invalid_uri');
    }
  });

  it('deletes a grant once', async () => {
    const client = await newClient();
    const created = await grant({ client_id: client.client_id, audience: await newApi(), scope: [] });
    const res = await call('DELETE', `/client-grants/${created.id}`);
    expect(res).toEqual({ status: 204, body: undefined });
    await expectError(call('GET', `/client-grants/${created.id}`), 404, 'inexistent_client_grant');
    await expectError(call('DELETE', `/client-grants/${created.id}`), 404, 'inexistent_client_grant');
  });

  it("shows the admin client's Management API grant as a system grant that cannot be changed or deleted", async () => {
    const list = (await call('GET', `/client-grants?client_id=${server.admin.client_id}&audience=${encodeURIComponent(managementApi)}`)).body as unknown as Json[];
    expect(list).toHaveLength(1);
    const [system] = list;
    expect(system).toMatchObject({ client_id: server.admin.client_id, audience: managementApi, is_system: true });
    expect((system!.scope as string[]).length).toBeGreaterThan(200);
    expect((await call('GET', `/client-grants/${system!.id}`)).body.is_system).toBe(true);
    await expectError(call('PATCH', `/client-grants/${system!.id}`, { body: { scope: ['read:clients'] } }), 403, 'operation_not_supported');
    await expectError(call('DELETE', `/client-grants/${system!.id}`), 403, 'operation_not_supported');
    // The operator keeps full access.
    expect((await call('GET', '/client-grants')).status).toBe(200);
  });

  it('pages in both styles and filters by audience, client_id, allow_any_organization and subject_type', async () => {
    const client = await newClient();
    const apis = [await newApi(), await newApi(), await newApi()];
    for (const [i, audience] of apis.entries()) {
      await grant({ client_id: client.client_id, audience, scope: [], ...(i === 0 && { allow_any_organization: true }) });
    }
    const mine = (await call('GET', `/client-grants?client_id=${client.client_id}`)).body as unknown as Json[];
    expect(mine.map((g) => g.audience)).toEqual(apis);
    expect(((await call('GET', `/client-grants?audience=${encodeURIComponent(apis[1]!)}`)).body as unknown as Json[]).map((g) => g.client_id)).toEqual([client.client_id]);
    const anyOrg = (await call('GET', `/client-grants?client_id=${client.client_id}&allow_any_organization=true`)).body as unknown as Json[];
    expect(anyOrg.map((g) => g.audience)).toEqual([apis[0]]);
    expect((await call('GET', `/client-grants?client_id=${client.client_id}&subject_type=user`)).body).toEqual([]);
    expect((await call('GET', '/client-grants?default_for=third_party_clients')).body).toEqual([]);

    const first = await call('GET', `/client-grants?client_id=${client.client_id}&take=2`);
    expect(first.body).toEqual({ client_grants: mine.slice(0, 2), next: expect.any(String) });
    const second = await call('GET', `/client-grants?client_id=${client.client_id}&take=2&from=${first.body.next}`);
    expect(second.body).toEqual({ client_grants: mine.slice(2) });
    const totals = await call('GET', `/client-grants?client_id=${client.client_id}&page=1&per_page=2&include_totals=true`);
    expect(totals.body).toEqual({ start: 2, limit: 2, length: 1, total: 3, client_grants: mine.slice(2) });

    await expectError(call('GET', '/client-grants?subject_type=robot'), 400, 'invalid_query_string');
    await expectError(call('GET', '/client-grants?take=0'), 400, 'invalid_query_string');
    await expectError(call('GET', '/client-grants?colour=blue'), 400, 'invalid_query_string');
  });

  it('refuses bad input with 400 in the management shape, and writes nothing', async () => {
    const client = await newClient();
    const api = await newApi();
    const cases: [unknown, RegExp?][] = [
      [{}],
      [{ client_id: client.client_id }],
      [{ audience: api }],
      [{ client_id: client.client_id, audience: '' }],
      [{ client_id: client.client_id, audience: api, scope: 'read:things other' }],
      [{ client_id: client.client_id, audience: api, scope: [{}] }],
      [{ client_id: client.client_id, audience: api, scope: ['x'.repeat(281)] }],
      [{ client_id: client.client_id, audience: api, extra: true }],
      [{ client_id: client.client_id, audience: api, subject_type: 'robot' }],
      [{ client_id: client.client_id, audience: api, organization_usage: 'sometimes' }],
      [{ client_id: client.client_id, audience: api, allow_any_organization: 'yes please' }],
      [{ client_id: client.client_id, audience: api, default_for: 'third_party_clients' }, /default_for/],
      [{ client_id: 'not a client id!', audience: api }],
      ['just a string'],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', '/client-grants', { body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      await expectError(Promise.resolve(res), 400, 'invalid_body', message);
    }
    expect((await call('GET', `/client-grants?client_id=${client.client_id}`)).body).toEqual([]);

    const created = await grant({ client_id: client.client_id, audience: api, scope: ['read:things'] });
    for (const body of [{}, { client_id: newId.client() }, { audience: api }, { subject_type: 'user' }, { scope: [{}] }, { allow_all_scopes: 'sure' }]) {
      const res = await call('PATCH', `/client-grants/${created.id}`, { body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect((await call('GET', `/client-grants/${created.id}`)).body).toEqual(created);
  });

  describe('scopes', () => {
    it.each([
      ['GET', '/client-grants', 'read:client_grants', undefined, 200],
      ['GET', '/client-grants/{id}', 'read:client_grants', undefined, 200],
      ['POST', '/client-grants', 'create:client_grants', 'create', 201],
      ['PATCH', '/client-grants/{id}', 'update:client_grants', { scope: [] }, 200],
      ['DELETE', '/client-grants/{id}', 'delete:client_grants', undefined, 204],
    ] as const)('%s %s: 403 without %s, allowed with it', async (method, template, scope, body, success) => {
      const client = await newClient();
      const api = await newApi();
      const existing = method === 'POST' ? undefined : await grant({ client_id: client.client_id, audience: api, scope: ['read:things'] });
      const path = template.replace('{id}', (existing?.id as string | undefined) ?? '');
      const payload = body === 'create' ? { client_id: client.client_id, audience: api } : body;
      const unrelated = await managementToken(server, ['read:clients', 'create:clients', 'update:clients', 'delete:clients']);
      const denied = await expectError(call(method, path, { body: payload, token: unrelated }), 403, 'insufficient_scope');
      expect(denied.message).toBe(`Insufficient scope, expected any of: ${scope}`);
      const res = await call(method, path, { body: payload, token: await managementToken(server, [scope]) });
      expect(res.status).toBe(success);
    });
  });
});
