/** grant_type=client_credentials: the token's claims, scope narrowing, and every refusal in its OAuth shape. */
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../crypto/ids.js';
import { insertResourceServer } from '../../store/resource-servers.js';
import { managementToken, startTestServer, type TestServer } from '../../test-support/server.js';

describe('POST /oauth/token with client_credentials', () => {
  let server: TestServer;
  let audience: string;
  const post = (body: Record<string, string>, json = false) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: json ? JSON.stringify(body) : new URLSearchParams(body),
    });
  const admin = () => ({ grant_type: 'client_credentials', client_id: server.admin.client_id, client_secret: server.admin.client_secret, audience });

  beforeAll(async () => {
    server = await startTestServer();
    audience = server.server.prepared.bootstrap!.managementAudience;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('issues an RS256 JWT with the documented claims, from form and JSON bodies alike', async () => {
    for (const json of [false, true]) {
      const res = await post({ ...admin(), scope: 'read:users update:users' }, json);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number; scope: string };
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 86_400, scope: 'read:users update:users' });
      expect(decodeProtectedHeader(body.access_token)).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
      const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(body.access_token, jwks, { issuer: server.issuer, audience });
      expect(payload).toMatchObject({
        sub: `${server.admin.client_id}@clients`,
        azp: server.admin.client_id,
        gty: 'client-credentials',
        scope: 'read:users update:users',
        jti: expect.any(String),
      });
      expect(payload.exp! - payload.iat!).toBe(86_400);
    }
  });

  it('grants every granted scope when none is asked for', async () => {
    const body = (await (await post(admin())).json()) as { scope: string };
    expect(body.scope.split(' ')).toHaveLength(244);
  });

  it.each([
    [{ scope: 'read:users not:granted' }, 400, 'invalid_scope'],
    [{ audience: 'https://unknown.example/' }, 403, 'access_denied'],
    [{ audience: '' }, 400, 'invalid_request'],
    [{ grant_type: 'urn:unknown' }, 400, 'unsupported_grant_type'],
    [{ grant_type: '' }, 400, 'invalid_request'],
  ])('refuses %o with %i %s', async (override, status, error) => {
    const res = await post({ ...admin(), ...override });
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ error, error_description: expect.any(String) });
  });

  it('scopes a token to an organization as the grant allows (organization_usage, associations, allow_any_organization)', async () => {
    const token = await managementToken(server);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/api/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return (res.status === 204 ? {} : await res.json()) as Record<string, string>;
    };
    const identifier = 'https://org-orders.example/';
    await api('POST', '/resource-servers', { identifier, name: 'Orders', scopes: [{ value: 'read:orders' }] });
    const worker = await api('POST', '/clients', { name: 'Org worker', app_type: 'non_interactive' });
    const grant = await api('POST', '/client-grants', { client_id: worker.client_id, audience: identifier, scope: ['read:orders'], organization_usage: 'allow' });
    const acme = await api('POST', '/organizations', { name: 'acme' });
    const other = await api('POST', '/organizations', { name: 'other' });
    await api('POST', `/organizations/${acme.id}/client-grants`, { grant_id: grant.id });
    const ask = async (organization?: string) => {
      const res = await post({ grant_type: 'client_credentials', client_id: worker.client_id!, client_secret: worker.client_secret!, audience: identifier, ...(organization !== undefined && { organization }) });
      const body = (await res.json()) as { access_token?: string; error?: string };
      return { status: res.status, error: body.error, org_id: body.access_token ? (JSON.parse(Buffer.from(body.access_token.split('.')[1]!, 'base64url').toString()) as { org_id?: string }).org_id : undefined };
    };
    expect(await ask()).toEqual({ status: 200, error: undefined, org_id: undefined });
    expect(await ask(acme.id)).toEqual({ status: 200, error: undefined, org_id: acme.id });
    expect(await ask('acme')).toEqual({ status: 200, error: undefined, org_id: acme.id });
    expect(await ask(other.id)).toMatchObject({ status: 403, error: 'access_denied' });
    expect(await ask('org_unknown1234567890')).toMatchObject({ status: 403, error: 'access_denied' });
    await api('PATCH', `/client-grants/${grant.id}`, { organization_usage: 'require', allow_any_organization: true });
    expect(await ask()).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(await ask(other.id)).toEqual({ status: 200, error: undefined, org_id: other.id });
    await api('PATCH', `/client-grants/${grant.id}`, { organization_usage: 'deny', allow_any_organization: false });
    expect(await ask(acme.id)).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(await ask()).toEqual({ status: 200, error: undefined, org_id: undefined });
  });

  it('refuses an API the client holds no grant for', async () => {
    const { tenant } = server.server.prepared.bootstrap!;
    await insertResourceServer(server.server.prepared.store.db, {
      id: newId.resourceServer(),
      tenant_id: tenant.id,
      identifier: 'https://orders.example/',
      name: 'Orders',
      is_system: false,
      scopes: [{ value: 'read:orders', description: '' }],
      signing_alg: 'RS256',
      token_lifetime: 600,
      token_lifetime_for_web: 600,
      allow_offline_access: false,
      skip_consent_for_verifiable_first_party_clients: true,
    });
    const res = await post({ ...admin(), audience: 'https://orders.example/' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(/client-grant/);
  });

  it('refuses a client that may not use the grant', async () => {
    const { defaultAppClientId } = server.server.prepared.bootstrap!;
    const res = await post({ grant_type: 'client_credentials', client_id: defaultAppClientId!, audience });
    expect(res.status).toBe(401); // a public client cannot authenticate for this grant at all
  });

  it('answers CORS only for origins a client of the tenant allows', async () => {
    const allowed = await fetch(`${server.url}/oauth/token`, {
      method: 'OPTIONS',
      headers: { origin: server.url, 'access-control-request-method': 'POST' },
    });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(server.url); // the Default App's origin
    const other = await fetch(`${server.url}/oauth/token`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
