/**
 * /api/v2/clients over real HTTP (clients.ts): create defaults per app type, documented fields stored and
 * echoed, secret visibility by scope, paging and filters, PATCH rules (secrets, auth methods, nulls), deletion
 * with its grants, rotation checked at /oauth/token, client_authentication_methods with real keys and
 * certificates, CORS cache invalidation, tenant isolation, bad input, and each route's scopes.
 * Runs on SQLite, and on PostgreSQL when reachable.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT, importPKCS8 } from 'jose';
import { generate as generateCertificate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalClientId } from './global-client.js';
import { newId } from '../crypto/ids.js';
import { listClientGrants } from '../store/client-grants.js';
import { findClient, insertClient } from '../store/clients.js';
import { insertTenant, updateTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('clients: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped (see the notice above)', () => undefined);
  });
}

const CLIENT_ID = /^[A-Za-z0-9]{32}$/;
const CREDENTIAL_ID = /^cred_[A-Za-z0-9]{16}$/;

function rsaKeys(bits = 2048) {
  return generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

describe.each(dialects)('Management API clients (%s)', (dialect) => {
  let server: TestServer;
  let token: string;
  const db = () => server.server.prepared.store.db;
  const other = { tenantId: newId.tenant(), clientId: newId.client() };

  async function call(method: string, path: string, options: { body?: unknown; token?: string; raw?: string } = {}) {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.token ?? token}`,
        ...((options.body !== undefined || options.raw !== undefined) && { 'content-type': 'application/json' }),
      },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.raw !== undefined && { body: options.raw }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json, headers: res.headers };
  }

  async function expectError(res: Promise<{ status: number; body: Json }>, status: number, errorCode: string, message?: RegExp): Promise<Json> {
    const { status: actual, body } = await res;
    expect({ status: actual, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    if (message) expect(body.message).toMatch(message);
    return body;
  }

  async function create(body: Json = {}): Promise<Json> {
    const res = await call('POST', '/clients', { body: { name: `app ${randomUUID().slice(0, 8)}`, ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  async function tokenRequest(params: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  /** An API with one scope, granted to the client, so it can use client credentials. */
  async function grantApi(clientId: string): Promise<string> {
    const identifier = `https://api-${randomUUID().slice(0, 8)}.example/`;
    expect((await call('POST', '/resource-servers', { body: { identifier, scopes: [{ value: 'read:things' }] } })).status).toBe(201);
    expect((await call('POST', '/client-grants', { body: { client_id: clientId, audience: identifier, scope: ['read:things'] } })).status).toBe(201);
    return identifier;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    // The scope matrix and the token round trips come in bursts: lift this tenant's buckets.
    const tenant = server.server.prepared.bootstrap!.tenant;
    const unlimited = { capacity: 100_000, per_second: 100_000 };
    await updateTenant(db(), tenant.id, { settings: { ...tenant.settings, rate_limits: { management: unlimited, token: unlimited } } });
    server.server.services.tenants.invalidate();
    // Another tenant with a client: it must never be reachable from the default tenant.
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
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('create', () => {
    it('makes a regular web app by default: confidential, with a generated secret and the default grant types', async () => {
      const client = await create({ name: 'My app' });
      expect(client).toMatchObject({
        name: 'My app',
        tenant: 'default',
        global: false,
        app_type: 'regular_web',
        is_first_party: true,
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code', 'implicit', 'refresh_token', 'client_credentials'],
        callbacks: [],
        allowed_logout_urls: [],
        web_origins: [],
        allowed_origins: [],
        jwt_configuration: { alg: 'RS256' },
      });
      expect(client.client_id).toMatch(CLIENT_ID);
      expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
      for (const internal of ['tenant_id', 'client_secret_sealed', 'is_system', 'is_default_app', 'created_at', 'updated_at']) {
        expect(client).not.toHaveProperty(internal);
      }
      // Sealed at rest, never stored in clear.
      const stored = await findClient(db(), server.server.prepared.bootstrap!.tenant.id, client.client_id as string);
      expect(stored!.client_secret_sealed).toMatch(/^v1\./);
      expect(JSON.stringify(stored)).not.toContain(client.client_secret as string);
    });

    it.each([
      ['spa', 'none', ['authorization_code', 'implicit', 'refresh_token'], false],
      ['native', 'none', ['authorization_code', 'implicit', 'refresh_token'], false],
      ['non_interactive', 'client_secret_post', ['client_credentials'], true],
    ] as const)('defaults for app_type %s', async (appType, method, grants, hasSecret) => {
      const client = await create({ app_type: appType });
      expect(client).toMatchObject({ app_type: appType, token_endpoint_auth_method: method, grant_types: grants });
      expect('client_secret' in client).toBe(hasSecret);
    });

    it('stores and echoes the documented fields as sent', async () => {
      const fields = {
        description: 'A test application',
        logo_uri: 'https://cdn.example/logo.png',
        callbacks: ['https://app.example/callback', 'http://localhost:3000/cb'],
        allowed_logout_urls: ['https://app.example/'],
        client_aliases: ['urn:alias'],
        allowed_clients: ['someclient'],
        grant_types: ['authorization_code', 'refresh_token', 'password'],
        token_endpoint_auth_method: 'client_secret_basic',
        is_first_party: true,
        oidc_conformant: true,
        sso: true,
        sso_disabled: false,
        cross_origin_authentication: true,
        cross_origin_loc: 'https://app.example/co-verify',
        custom_login_page_on: false,
        jwt_configuration: { lifetime_in_seconds: 3600, secret_encoded: false, alg: 'RS256' },
        refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 3, token_lifetime: 86400, idle_token_lifetime: 3600 },
        client_metadata: { team: 'blue', 'cost center': '42' },
        initiate_login_uri: 'https://app.example/login?org={organization_name}',
        organization_usage: 'allow',
        organization_require_behavior: 'pre_login_prompt',
        addons: { samlp: { audience: 'urn:x' } },
        mobile: { ios: { team_id: 'T1' } },
        require_pushed_authorization_requests: false,
        par_request_expiry: 60,
        compliance_level: 'none',
        is_token_endpoint_ip_header_trusted: true,
        oidc_logout: { backchannel_logout_urls: ['https://app.example/bcl'] },
      };
      const created = await create(fields);
      expect(created).toMatchObject(fields);
      const read = await call('GET', `/clients/${created.client_id}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject(fields);
      expect(read.body).toEqual({ ...created, client_secret: created.client_secret });
    });

    it('normalises origins to what a browser sends in Origin', async () => {
      const client = await create({ web_origins: ['https://App.Example:443/'], allowed_origins: ['http://localhost:3000'] });
      expect(client).toMatchObject({ web_origins: ['https://app.example'], allowed_origins: ['http://localhost:3000'] });
    });

    it('accepts a private-use scheme callback for native apps only', async () => {
      const native = await create({ app_type: 'native', callbacks: ['com.example.app:/oauth2redirect', 'myapp://callback'] });
      expect(native.callbacks).toEqual(['com.example.app:/oauth2redirect', 'myapp://callback']);
      await expectError(call('POST', '/clients', { body: { name: 'x', app_type: 'spa', callbacks: ['myapp://callback'] } }), 400, 'invalid_body', /http or https/);
      await expectError(
        call('POST', '/clients', { body: { name: 'x', app_type: 'native', callbacks: ['javascript:alert(1)'] } }),
        400,
        'invalid_body',
      );
    });

    it('accepts a caller-chosen secret of at least 32 characters', async () => {
      const secret = 'x'.repeat(40);
      const client = await create({ app_type: 'non_interactive', client_secret: secret });
      expect(client.client_secret).toBe(secret);
      const api = await grantApi(client.client_id as string);
      const res = await tokenRequest({ grant_type: 'client_credentials', client_id: client.client_id as string, client_secret: secret, audience: api });
      expect(res.status).toBe(200);
      await expectError(call('POST', '/clients', { body: { name: 'x', client_secret: 'short' } }), 400, 'invalid_body');
      await expectError(call('POST', '/clients', { body: { name: 'x', app_type: 'spa', client_secret: 'y'.repeat(40) } }), 400, 'invalid_body', /public client/);
    });

    it('refuses bad input with 400 in the management shape, and writes nothing', async () => {
      const before = (await call('GET', '/clients?include_totals=true&per_page=1')).body.total;
      const cases: [unknown, RegExp?][] = [
        [{}],
        [{ name: '' }],
        [{ name: 'a<b>' }],
        [{ name: { x: 1 } }],
        [{ name: 'x', unknown_field: 1, other: 2 }, /additional properties not allowed: unknown_field, other/],
        [{ name: 'x', client_id: 'abc' }, /client_id is generated/],
        [{ name: 'x', description: 'd'.repeat(141) }],
        [{ name: 'x', app_type: 'box' }],
        [{ name: 'x', is_first_party: 'maybe' }],
        [{ name: 'x', callbacks: ['not a url'] }, /not an absolute URL/],
        [{ name: 'x', callbacks: [{}] }],
        [{ name: 'x', callbacks: ['https://*.example.com/cb'] }, /wildcards/],
        [{ name: 'x', callbacks: ['https://app.example/cb#frag'] }, /fragment/],
        [{ name: 'x', callbacks: ['https://user:pw@app.example/cb'] }, /credentials/],
        [{ name: 'x', allowed_logout_urls: ['ftp://app.example/'] }],
        [{ name: 'x', web_origins: ['https://app.example/path'] }, /origin/],
        [{ name: 'x', allowed_origins: ['https://app.example?x=1'] }, /origin/],
        [{ name: 'x', cross_origin_loc: 'nope' }],
        [{ name: 'x', logo_uri: 'javascript:alert(1)' }],
        [{ name: 'x', initiate_login_uri: 'http://app.example/login' }, /https/],
        [{ name: 'x', grant_types: ['magic'] }, /grant type/],
        [{ name: 'x', token_endpoint_auth_method: 'private_key_jwt' }],
        [{ name: 'x', jwt_configuration: { alg: 'HS256' } }, /RS256 only/],
        [{ name: 'x', jwt_configuration: { alg: 'RS256', extra: 1 } }],
        [{ name: 'x', refresh_token: { rotation_type: 'rotating' } }],
        [{ name: 'x', client_metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) }],
        [{ name: 'x', client_metadata: { a: { nested: true } } }],
        [{ name: 'x', client_metadata: { 'bad{key}': 'v' } }, /client_metadata/],
        [{ name: 'x', par_request_expiry: 5 }],
        [{ name: 'x', organization_usage: 'sometimes' }],
        [{ name: 'x', token_endpoint_auth_method: 'client_secret_post', client_authentication_methods: { tls_client_auth: { credentials: [{ credential_type: 'cert_subject_dn', subject_dn: 'CN=a' }] } } }, /mutually exclusive/],
        [[1, 2]],
      ];
      for (const [body, message] of cases) {
        const res = await call('POST', '/clients', { body });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        await expectError(Promise.resolve(res), 400, 'invalid_body', message);
      }
      await expectError(call('POST', '/clients', { raw: '{"name": ' }), 400, 'invalid_body');
      expect((await call('GET', '/clients?include_totals=true&per_page=1')).body.total).toBe(before);
    });

    it('keeps organizations to first-party clients (403, as the reference)', async () => {
      await expectError(
        call('POST', '/clients', { body: { name: 'x', is_first_party: false, organization_usage: 'allow' } }),
        403,
        'operation_not_supported',
        /first party/,
      );
      const thirdParty = await create({ is_first_party: false });
      expect(thirdParty.is_first_party).toBe(false);
    });
  });

  describe('read', () => {
    it('shows client_secret only to a token with read:client_keys, in get and list alike', async () => {
      const client = await create({ app_type: 'non_interactive' });
      const readOnly = await managementToken(server, ['read:clients']);
      const keys = await managementToken(server, ['read:client_keys']);

      const plain = await call('GET', `/clients/${client.client_id}`, { token: readOnly });
      expect(plain.status).toBe(200);
      expect(plain.body).not.toHaveProperty('client_secret');
      const withKeys = await call('GET', `/clients/${client.client_id}`, { token: keys });
      expect(withKeys.body.client_secret).toBe(client.client_secret);

      const listPlain = (await call('GET', '/clients?per_page=100', { token: readOnly })).body as unknown as Json[];
      expect(listPlain.find((c) => c.client_id === client.client_id)).not.toHaveProperty('client_secret');
      expect(listPlain.every((c) => !('client_secret' in c))).toBe(true);
      const listKeys = (await call('GET', '/clients?per_page=100', { token: keys })).body as unknown as Json[];
      expect(listKeys.find((c) => c.client_id === client.client_id)!.client_secret).toBe(client.client_secret);
    });

    it('lists the bootstrap clients with paging in both styles', async () => {
      const all = (await call('GET', '/clients?per_page=100')).body as unknown as Json[];
      expect(Array.isArray(all)).toBe(true);
      expect(all.map((c) => c.client_id)).toContain(server.admin.client_id);
      expect(all.map((c) => c.name)).toContain('Default App');

      const totals = await call('GET', '/clients?page=0&per_page=2&include_totals=true');
      expect(totals.body).toMatchObject({ start: 0, limit: 2, length: 2, total: all.length });
      expect((totals.body.clients as Json[]).map((c) => c.client_id)).toEqual(all.slice(0, 2).map((c) => c.client_id));

      const seen: string[] = [];
      let next: string | undefined;
      do {
        const page = await call('GET', `/clients?take=3${next ? `&from=${next}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...(page.body.clients as Json[]).map((c) => c.client_id as string));
        next = page.body.next as string | undefined;
      } while (next);
      expect(seen).toEqual(all.map((c) => c.client_id));
      await expectError(call('GET', '/clients?per_page=101'), 400, 'invalid_query_string');
      await expectError(call('GET', '/clients?from=garbage'), 400, 'invalid_query_string');
    });

    it('filters by app_type, is_first_party, is_global and q', async () => {
      const spa = await create({ app_type: 'spa' });
      const third = await create({ app_type: 'native', is_first_party: false });
      const ids = async (query: string) => ((await call('GET', `/clients?per_page=100&${query}`)).body as unknown as Json[]).map((c) => c.client_id);

      const spas = (await call('GET', '/clients?per_page=100&app_type=spa')).body as unknown as Json[];
      expect(spas.every((c) => c.app_type === 'spa')).toBe(true);
      expect(spas.map((c) => c.client_id)).toContain(spa.client_id);
      const both = await ids('app_type=spa,native');
      expect(both).toEqual(expect.arrayContaining([spa.client_id, third.client_id]));
      expect(await ids('is_first_party=false')).toContain(third.client_id);
      expect(await ids('is_first_party=true')).not.toContain(third.client_id);
      // Only the tenant's global client (management/global-client.test.ts) is global.
      expect(await ids('is_global=true')).toEqual([globalClientId(server.server.prepared.bootstrap!.tenant)]);
      expect(await ids('is_global=false')).toContain(spa.client_id);
      expect(await ids('is_global=false')).not.toContain(globalClientId(server.server.prepared.bootstrap!.tenant));
      await expectError(call('GET', '/clients?app_type=mainframe'), 400, 'invalid_query_string');
      await expectError(call('GET', '/clients?is_first_party=perhaps'), 400, 'invalid_query_string');
      await expectError(call('GET', '/clients?q=name:foo'), 400, 'invalid_query_string');
      await expectError(call('GET', '/clients?unknown=1'), 400, 'invalid_query_string');

      const machine = await create({ app_type: 'non_interactive' });
      const api = await grantApi(machine.client_id as string);
      const grants = await listClientGrants(db(), server.server.prepared.bootstrap!.tenant.id, machine.client_id as string);
      expect((await call('PATCH', `/client-grants/${grants[0]!.id}`, { body: { allow_any_organization: true } })).status).toBe(200);
      expect(api).toBeTruthy();
      expect(await ids('q=client_grant.allow_any_organization:true')).toEqual([machine.client_id]);
    });

    it('includes or excludes fields', async () => {
      const client = await create({ description: 'd', jwt_configuration: { lifetime_in_seconds: 60 } });
      const only = await call('GET', `/clients/${client.client_id}?fields=client_id,name,jwt_configuration.alg`);
      expect(only.body).toEqual({ client_id: client.client_id, name: client.name, jwt_configuration: { alg: 'RS256' } });
      const without = await call('GET', `/clients/${client.client_id}?fields=callbacks,description,jwt_configuration.alg&include_fields=false`);
      expect(without.body).not.toHaveProperty('callbacks');
      expect(without.body).not.toHaveProperty('description');
      expect(without.body.jwt_configuration).toEqual({ lifetime_in_seconds: 60 });
      expect(without.body.name).toBe(client.name);
      const list = (await call('GET', '/clients?fields=client_id&per_page=100')).body as unknown as Json[];
      expect(list.every((c) => Object.keys(c).join() === 'client_id')).toBe(true);
      await expectError(call('GET', `/clients/${client.client_id}?fields=password`), 400, 'invalid_query_string');
    });

    it('answers 404 inexistent_client for unknown ids and for another tenant\'s client; 400 for malformed ids', async () => {
      for (const id of [newId.client(), other.clientId]) {
        await expectError(call('GET', `/clients/${id}`), 404, 'inexistent_client');
        await expectError(call('PATCH', `/clients/${id}`, { body: { description: 'x' } }), 404, 'inexistent_client');
        await expectError(call('DELETE', `/clients/${id}`), 404, 'inexistent_client');
        await expectError(call('POST', `/clients/${id}/rotate-secret`), 404, 'inexistent_client');
      }
      const list = (await call('GET', '/clients?per_page=100')).body as unknown as Json[];
      expect(list.map((c) => c.client_id)).not.toContain(other.clientId);
      expect(await findClient(db(), other.tenantId, other.clientId)).toBeDefined();
      await expectError(call('GET', '/clients/abc%3Cscript%3E'), 400, 'invalid_uri');
      await expectError(call('GET', `/clients/${'a'.repeat(65)}`), 400, 'invalid_uri');
    });
  });

  describe('update', () => {
    it('changes the fields sent, unsets nullable ones with null, and keeps the rest', async () => {
      const client = await create({ description: 'before', cross_origin_loc: 'https://a.example/co', organization_usage: 'allow', callbacks: ['https://a.example/cb'] });
      const res = await call('PATCH', `/clients/${client.client_id}`, {
        body: { name: 'Renamed', description: 'after', cross_origin_loc: null, organization_usage: null, web_origins: ['https://A.example'] },
        token: await managementToken(server, ['update:clients']),
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ client_id: client.client_id, name: 'Renamed', description: 'after', callbacks: ['https://a.example/cb'], web_origins: ['https://a.example'] });
      expect(res.body).not.toHaveProperty('cross_origin_loc');
      expect(res.body).not.toHaveProperty('organization_usage');
      // update:clients alone does not read keys back.
      expect(res.body).not.toHaveProperty('client_secret');
      const read = await call('GET', `/clients/${client.client_id}`);
      expect(read.body).toMatchObject({ name: 'Renamed', description: 'after', client_secret: client.client_secret });
    });

    it('refuses bad updates: client_id, empty body, undocumented fields, bad values', async () => {
      const client = await create();
      const path = `/clients/${client.client_id}`;
      await expectError(call('PATCH', path, { body: { client_id: newId.client() } }), 400, 'invalid_body', /client_id cannot be changed/);
      await expectError(call('PATCH', path, { body: {} }), 400, 'invalid_body');
      await expectError(call('PATCH', path, { body: { nickname: 'x' } }), 400, 'invalid_body', /nickname/);
      await expectError(call('PATCH', path, { body: { name: null } }), 400, 'invalid_body');
      await expectError(call('PATCH', path, { body: { callbacks: ['nope'] } }), 400, 'invalid_body');
      await expectError(call('PATCH', path, { body: { token_endpoint_auth_method: null } }), 400, 'invalid_body', /client_authentication_methods/);
      await expectError(call('PATCH', path, { body: { resource_server_identifier: 'https://x/' } }), 400, 'invalid_body');
      expect((await call('GET', path)).body).toEqual({ ...client });
    });

    it('needs update:client_keys to set client_secret directly', async () => {
      const client = await create({ app_type: 'non_interactive' });
      const secret = 's'.repeat(48);
      const clientsOnly = await managementToken(server, ['update:clients']);
      const denied = await expectError(
        call('PATCH', `/clients/${client.client_id}`, { body: { client_secret: secret }, token: clientsOnly }),
        403,
        'insufficient_scope',
      );
      expect(denied.message).toContain('update:client_keys');
      const keys = await managementToken(server, ['update:client_keys']);
      const res = await call('PATCH', `/clients/${client.client_id}`, { body: { client_secret: secret }, token: keys });
      expect(res.status).toBe(200);
      expect(res.body.client_secret).toBe(secret);
      const api = await grantApi(client.client_id as string);
      const ok = await tokenRequest({ grant_type: 'client_credentials', client_id: client.client_id as string, client_secret: secret, audience: api });
      expect(ok.status).toBe(200);
      const old = await tokenRequest({ grant_type: 'client_credentials', client_id: client.client_id as string, client_secret: client.client_secret as string, audience: api });
      expect(old).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    });

    it('gives a public client that becomes confidential a secret, and drops it when it becomes public again', async () => {
      const spa = await create({ app_type: 'spa' });
      expect(spa).not.toHaveProperty('client_secret');
      const confidential = await call('PATCH', `/clients/${spa.client_id}`, {
        body: { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'] },
        token: await managementToken(server, ['update:clients', 'read:client_keys']),
      });
      expect(confidential.status).toBe(200);
      expect(confidential.body.token_endpoint_auth_method).toBe('client_secret_basic');
      const secret = confidential.body.client_secret as string;
      expect(secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
      const api = await grantApi(spa.client_id as string);
      const basic = Buffer.from(`${spa.client_id}:${secret}`).toString('base64');
      expect((await tokenRequest({ grant_type: 'client_credentials', audience: api }, { authorization: `Basic ${basic}` })).status).toBe(200);

      const publicAgain = await call('PATCH', `/clients/${spa.client_id}`, { body: { token_endpoint_auth_method: 'none' } });
      expect(publicAgain.status).toBe(200);
      const stored = await findClient(db(), server.server.prepared.bootstrap!.tenant.id, spa.client_id as string);
      expect(stored!.client_secret_sealed).toBeNull();
      expect((await call('GET', `/clients/${spa.client_id}`)).body).not.toHaveProperty('client_secret');
      expect((await tokenRequest({ grant_type: 'client_credentials', audience: api }, { authorization: `Basic ${basic}` })).status).toBe(401);
    });

    it('keeps the admin client usable: no public method, no dropping client_credentials', async () => {
      const path = `/clients/${server.admin.client_id}`;
      await expectError(call('PATCH', path, { body: { token_endpoint_auth_method: 'none' } }), 403, 'operation_not_supported');
      await expectError(call('PATCH', path, { body: { grant_types: ['authorization_code'] } }), 403, 'operation_not_supported');
      expect((await call('PATCH', path, { body: { description: 'The operator client' } })).status).toBe(200);
    });
  });

  describe('delete', () => {
    it('deletes the client and its client grants together', async () => {
      const client = await create({ app_type: 'non_interactive' });
      await grantApi(client.client_id as string);
      const tenantId = server.server.prepared.bootstrap!.tenant.id;
      expect(await listClientGrants(db(), tenantId, client.client_id as string)).toHaveLength(1);
      const res = await call('DELETE', `/clients/${client.client_id}`);
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      await expectError(call('GET', `/clients/${client.client_id}`), 404, 'inexistent_client');
      expect(await listClientGrants(db(), tenantId, client.client_id as string)).toEqual([]);
      await expectError(call('DELETE', `/clients/${client.client_id}`), 404, 'inexistent_client');
    });

    it('refuses to delete the admin client', async () => {
      await expectError(call('DELETE', `/clients/${server.admin.client_id}`), 403, 'operation_not_supported');
      expect((await call('GET', `/clients/${server.admin.client_id}`)).status).toBe(200);
    });
  });

  describe('rotate-secret', () => {
    it('replaces the secret: the old one stops working at /oauth/token, the new one works', async () => {
      const client = await create({ app_type: 'non_interactive' });
      const api = await grantApi(client.client_id as string);
      const params = (secret: string) => ({ grant_type: 'client_credentials', client_id: client.client_id as string, client_secret: secret, audience: api });
      expect((await tokenRequest(params(client.client_secret as string))).status).toBe(200);

      const rotated = await call('POST', `/clients/${client.client_id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toMatchObject({ client_id: client.client_id, name: client.name });
      expect(rotated.body.client_secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
      expect(rotated.body.client_secret).not.toBe(client.client_secret);

      expect(await tokenRequest(params(client.client_secret as string))).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      // As clients that label every request JSON send it (curl -H 'content-type: application/json', Postman): no body.
      const labelled = await fetch(`${server.url}/api/v2/clients/${client.client_id}/rotate-secret`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
      expect(labelled.status).toBe(200);
      const latest = ((await labelled.json()) as { client_secret: string }).client_secret;
      expect(latest).not.toBe(rotated.body.client_secret);
      rotated.body.client_secret = latest;
      const fresh = await tokenRequest(params(rotated.body.client_secret as string));
      expect(fresh).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'read:things' } });
    });

    it('refuses public clients and clients without a secret method', async () => {
      const spa = await create({ app_type: 'spa' });
      await expectError(call('POST', `/clients/${spa.client_id}/rotate-secret`), 400, 'invalid_body', /public client/);
      const { publicKey } = rsaKeys();
      const pkjwt = await create({
        app_type: 'non_interactive',
        client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: publicKey }] } },
      });
      await expectError(call('POST', `/clients/${pkjwt.client_id}/rotate-secret`), 400, 'invalid_body', /private_key_jwt/);
    });
  });

  describe('client_authentication_methods', () => {
    it('registers private_key_jwt keys that then authenticate at /oauth/token', async () => {
      const { publicKey, privateKey } = rsaKeys();
      const client = await create({
        app_type: 'non_interactive',
        client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', name: 'primary', pem: publicKey, alg: 'RS256' }] } },
      });
      expect(client.token_endpoint_auth_method).toBeNull();
      expect(client).not.toHaveProperty('client_secret');
      const credentials = (client.client_authentication_methods as { private_key_jwt: { credentials: Json[] } }).private_key_jwt.credentials;
      expect(credentials).toEqual([
        { id: expect.stringMatching(CREDENTIAL_ID), credential_type: 'public_key', name: 'primary', pem: publicKey, alg: 'RS256', created_at: expect.any(String) },
      ]);

      // Keys are shown to read:client_keys only, as the reference says.
      const plain = await call('GET', `/clients/${client.client_id}`, { token: await managementToken(server, ['read:clients']) });
      expect(plain.body).not.toHaveProperty('client_authentication_methods');
      expect((await call('GET', `/clients/${client.client_id}`)).body.client_authentication_methods).toEqual(client.client_authentication_methods);

      const api = await grantApi(client.client_id as string);
      const assertion = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(client.client_id as string)
        .setSubject(client.client_id as string)
        .setAudience(server.issuer)
        .setIssuedAt()
        .setExpirationTime('1m')
        .setJti(randomUUID())
        .sign(await importPKCS8(privateKey, 'RS256'));
      const res = await tokenRequest({
        grant_type: 'client_credentials',
        client_id: client.client_id as string,
        client_assertion: assertion,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        audience: api,
      });
      expect(res).toMatchObject({ status: 200, body: { scope: 'read:things' } });
    });

    it('keeps registered credentials by id in a PATCH, adds new ones, and can switch back to a secret', async () => {
      const first = rsaKeys();
      const second = rsaKeys();
      const client = await create({
        app_type: 'non_interactive',
        client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: first.publicKey }] } },
      });
      const [kept] = (client.client_authentication_methods as { private_key_jwt: { credentials: Json[] } }).private_key_jwt.credentials;
      const updated = await call('PATCH', `/clients/${client.client_id}`, {
        body: { client_authentication_methods: { private_key_jwt: { credentials: [{ id: kept!.id }, { credential_type: 'public_key', pem: second.publicKey, alg: 'PS256' }] } } },
      });
      expect(updated.status).toBe(200);
      const credentials = (updated.body.client_authentication_methods as { private_key_jwt: { credentials: Json[] } }).private_key_jwt.credentials;
      expect(credentials[0]).toEqual(kept);
      expect(credentials[1]).toMatchObject({ id: expect.stringMatching(CREDENTIAL_ID), alg: 'PS256', pem: second.publicKey });

      await expectError(
        call('PATCH', `/clients/${client.client_id}`, { body: { client_authentication_methods: { private_key_jwt: { credentials: [{ id: 'cred_AAAAAAAAAAAAAAAA' }] } } } }),
        400,
        'invalid_body',
        /not registered/,
      );

      const back = await call('PATCH', `/clients/${client.client_id}`, {
        body: { token_endpoint_auth_method: 'client_secret_post' },
        token: await managementToken(server, ['update:clients', 'read:client_keys']),
      });
      expect(back.status).toBe(200);
      expect(back.body).not.toHaveProperty('client_authentication_methods');
      expect(back.body.token_endpoint_auth_method).toBe('client_secret_post');
      expect(back.body.client_secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
    });

    it('registers mTLS credentials: a subject DN, or a self-signed certificate', async () => {
      const dn = await create({
        app_type: 'non_interactive',
        client_authentication_methods: { tls_client_auth: { credentials: [{ credential_type: 'cert_subject_dn', subject_dn: 'CN=client.example, O=Example, C=US' }] } },
      });
      expect((dn.client_authentication_methods as { tls_client_auth: { credentials: Json[] } }).tls_client_auth.credentials[0]).toMatchObject({
        id: expect.stringMatching(CREDENTIAL_ID),
        credential_type: 'cert_subject_dn',
        subject_dn: 'CN=client.example, O=Example, C=US',
      });
      const pems = await generateCertificate([{ name: 'commonName', value: 'client.example' }], { keySize: 2048, algorithm: 'sha256' });
      const selfSigned = await create({
        app_type: 'non_interactive',
        client_authentication_methods: { self_signed_tls_client_auth: { credentials: [{ credential_type: 'x509_cert', pem: pems.cert }] } },
      });
      expect((selfSigned.client_authentication_methods as { self_signed_tls_client_auth: { credentials: Json[] } }).self_signed_tls_client_auth.credentials[0]).toMatchObject({
        id: expect.stringMatching(CREDENTIAL_ID),
        credential_type: 'x509_cert',
        pem: pems.cert,
      });
      // A certificate also works as a private_key_jwt key, with its expiry read from it.
      const fromCert = await create({
        app_type: 'non_interactive',
        client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: pems.cert, parse_expiry_from_cert: true }] } },
      });
      expect((fromCert.client_authentication_methods as { private_key_jwt: { credentials: Json[] } }).private_key_jwt.credentials[0]!.expires_at).toMatch(/^\d{4}-/);
    });

    it('refuses weak, private, malformed and mismatched keys', async () => {
      const small = rsaKeys(1024);
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
      const good = rsaKeys();
      const pkjwt = (credential: Json) => ({ name: 'x', client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', ...credential }] } } });
      const cases: [Json, RegExp?][] = [
        [pkjwt({ pem: small.publicKey }), /1024 bits/],
        [pkjwt({ pem: good.privateKey }), /private key/],
        [pkjwt({ pem: ec.publicKey }), /RSA/],
        [pkjwt({ pem: '-----BEGIN PUBLIC KEY-----\nnotbase64\n-----END PUBLIC KEY-----' }), /not a valid/],
        [pkjwt({ pem: 'hello' }), /PEM/],
        [pkjwt({ pem: good.publicKey, alg: 'ES256' })],
        [pkjwt({ pem: good.publicKey, parse_expiry_from_cert: true }), /certificate/],
        [pkjwt({ pem: good.publicKey, credential_type: 'x509_cert' })],
        [{ name: 'x', client_authentication_methods: {} }],
        [{ name: 'x', client_authentication_methods: { private_key_jwt: { credentials: [] } } }],
        [
          {
            name: 'x',
            client_authentication_methods: {
              private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: good.publicKey }] },
              tls_client_auth: { credentials: [{ credential_type: 'cert_subject_dn', subject_dn: 'CN=a' }] },
            },
          },
        ],
        [{ name: 'x', client_authentication_methods: { tls_client_auth: { credentials: [{ credential_type: 'cert_subject_dn', subject_dn: 'no equals sign' }] } } }, /distinguished name/],
        [{ name: 'x', client_authentication_methods: { self_signed_tls_client_auth: { credentials: [{ credential_type: 'x509_cert', pem: good.publicKey }] } } }, /X.509/],
      ];
      for (const [body, message] of cases) {
        const res = await call('POST', '/clients', { body });
        expect({ status: res.status, message: res.body.message }).toMatchObject({ status: 400 });
        await expectError(Promise.resolve(res), 400, 'invalid_body', message);
      }
    });
  });

  it('makes CORS at /oauth/token follow allowed_origins at once (the origin cache is invalidated)', async () => {
    const origin = `https://cors-${randomUUID().slice(0, 8)}.example`;
    const preflight = async () =>
      (
        await fetch(`${server.url}/oauth/token`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        })
      ).headers.get('access-control-allow-origin');
    expect(await preflight()).toBeNull();
    const client = await create({ app_type: 'spa', allowed_origins: [origin] });
    expect(await preflight()).toBe(origin);
    expect((await call('PATCH', `/clients/${client.client_id}`, { body: { allowed_origins: [] } })).status).toBe(200);
    expect(await preflight()).toBeNull();
    expect((await call('PATCH', `/clients/${client.client_id}`, { body: { web_origins: [origin] } })).status).toBe(200);
    expect(await preflight()).toBe(origin);
    expect((await call('DELETE', `/clients/${client.client_id}`)).status).toBe(204);
    expect(await preflight()).toBeNull();
  });

  describe('scopes', () => {
    const unrelated = ['read:resource_servers'];

    it.each([
      ['GET', '/clients', ['read:clients', 'read:client_keys'], undefined, 200],
      ['GET', '/clients/{id}', ['read:clients', 'read:client_keys'], undefined, 200],
      ['POST', '/clients', ['create:clients'], { name: 'scoped' }, 201],
      ['PATCH', '/clients/{id}', ['update:clients', 'update:client_keys'], { description: 'scoped' }, 200],
      ['POST', '/clients/{id}/rotate-secret', ['update:client_keys'], undefined, 200],
      ['DELETE', '/clients/{id}', ['delete:clients'], undefined, 204],
    ] as const)('%s %s: 403 without its scopes, allowed by any one of them', async (method, template, scopes, body, success) => {
      const target = await create({ app_type: 'non_interactive' });
      const path = template.replace('{id}', target.client_id as string);
      const denied = await expectError(call(method, path, { body, token: await managementToken(server, unrelated) }), 403, 'insufficient_scope');
      expect(denied.message).toBe(`Insufficient scope, expected any of: ${scopes.join(',')}`);
      for (const scope of scopes) {
        const fresh = method === 'DELETE' ? ((await create({ app_type: 'non_interactive' })).client_id as string) : (target.client_id as string);
        const res = await call(method, template.replace('{id}', fresh), { body, token: await managementToken(server, [scope]) });
        expect({ scope, status: res.status }).toEqual({ scope, status: success });
      }
    });

    it('refuses a missing or foreign token with 401', async () => {
      const res = await fetch(`${server.url}/api/v2/clients`);
      expect(res.status).toBe(401);
      await expectError(call('GET', '/clients', { token: 'a.b.c' }), 401, 'invalid_token');
    });
  });
});
