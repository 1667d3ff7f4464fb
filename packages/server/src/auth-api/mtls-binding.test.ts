/**
 * Certificate-bound access tokens (RFC 8705 §3) behind a trusted mTLS edge, over real HTTP: the edge forwards the
 * client certificate in `client-certificate` with the tenant's `cname-api-key` (client-auth/tls-client-auth.ts).
 *  - client_credentials for a client with `tls_client_certificate_bound_access_tokens`: `cnf["x5t#S256"]` is the
 *    certificate's SHA-256 thumbprint; the Management API takes the token with that certificate only;
 *  - the code flow and refresh for a confidential web app: bound access tokens, /userinfo with the certificate
 *    only; a FAPI `compliance_level` with an mTLS sender constraint binds the same way;
 *  - refusals: a bound client without a certificate, an API requiring mTLS-bound tokens from an unbound client,
 *    a forwarded certificate without the edge's key (spoofed headers bind nothing).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { decodeJwt } from 'jose';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTenantById, updateTenant } from '../store/tenants.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, createUser, logIn, management, TestBrowser } from '../test-support/sign-in.js';

const API_KEY = 'edge-api-key-mtls-binding-0123456789';
const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';

type Json = Record<string, unknown>;

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('certificate-bound access tokens (RFC 8705) (%s)', (dialect) => {
  let server: TestServer;
  let managementAudience: string;
  let certificate: string;
  let otherCertificate: string;
  let machine: { client_id: string };
  let unboundMachine: { client_id: string };

  /** The headers a trusted edge adds after the TLS handshake; `apiKey` wrong or null (absent) makes them untrusted. */
  const edge = (pem: string, apiKey: string | null = API_KEY): Record<string, string> => ({
    ...(apiKey !== null && { 'cname-api-key': apiKey }),
    'client-certificate': encodeURIComponent(pem),
    'client-certificate-ca-verified': 'SUCCESS',
  });
  const thumbprint = (pem: string) => createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url');

  async function token(body: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body) });
    return { status: res.status, body: (await res.json()) as Json };
  }
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await management(server, method, path, body);
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
    return (await res.json()) as Json;
  };

  /** A machine client authenticated by its self-signed certificate, with a grant for the Management API. */
  async function machineClient(extra: Json): Promise<{ client_id: string }> {
    const client = (await api('POST', '/clients', {
      name: `machine ${Object.keys(extra).join(' ') || 'unbound'}`,
      app_type: 'non_interactive',
      grant_types: ['client_credentials'],
      client_authentication_methods: { self_signed_tls_client_auth: { credentials: [{ credential_type: 'x509_cert', pem: certificate }] } },
      ...extra,
    })) as { client_id: string };
    await api('POST', '/client-grants', { client_id: client.client_id, audience: managementAudience, scope: ['read:users'] });
    return client;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const { tenant } = server.server.prepared.bootstrap!;
    managementAudience = server.server.prepared.bootstrap!.managementAudience;
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, custom_domain_api_key_sha256: createHash('sha256').update(API_KEY).digest('hex') },
    });
    server.server.services.tenants.invalidate();
    certificate = (await generate([{ name: 'commonName', value: 'bound-client' }], { keySize: 2048 })).cert;
    otherCertificate = (await generate([{ name: 'commonName', value: 'someone-else' }], { keySize: 2048 })).cert;
    machine = await machineClient({ tls_client_certificate_bound_access_tokens: true });
    unboundMachine = await machineClient({});
    await createUser(server, 'bound@example.com', PASSWORD);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('announces certificate-bound tokens and mTLS client authentication in discovery only with a trusted edge', async () => {
    const discovery = async () => (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Json;
    const mtlsMethods = ['tls_client_auth', 'self_signed_tls_client_auth'];
    const withEdge = await discovery();
    expect(withEdge.tls_client_certificate_bound_access_tokens).toBe(true);
    expect(withEdge.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(mtlsMethods));
    expect(withEdge.revocation_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(mtlsMethods));

    // Without the edge's key no certificate header counts: neither is offered, so neither is listed.
    const db = server.server.prepared.store.db;
    const { tenant } = server.server.prepared.bootstrap!;
    const settings = (await findTenantById(db, tenant.id))!.settings;
    await updateTenant(db, tenant.id, { settings: { ...settings, custom_domain_api_key_sha256: undefined } });
    server.server.services.tenants.invalidate();
    try {
      const withoutEdge = await discovery();
      expect(withoutEdge.tls_client_certificate_bound_access_tokens).toBe(false);
      for (const field of ['token_endpoint_auth_methods_supported', 'revocation_endpoint_auth_methods_supported']) {
        expect(withoutEdge[field]).toEqual(expect.arrayContaining(['private_key_jwt', 'client_secret_post']));
        for (const method of mtlsMethods) expect(withoutEdge[field], field).not.toContain(method);
      }
    } finally {
      await updateTenant(db, tenant.id, { settings });
      server.server.services.tenants.invalidate();
    }
  });

  it('binds a client_credentials token to the certificate, and the Management API takes it with that certificate only', async () => {
    const issued = await token({ grant_type: 'client_credentials', client_id: machine.client_id, audience: managementAudience }, edge(certificate));
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body.token_type).toBe('Bearer');
    const accessToken = issued.body.access_token as string;
    expect(decodeJwt(accessToken).cnf).toEqual({ 'x5t#S256': thumbprint(certificate) });

    const users = (headers: Record<string, string>) => fetch(`${server.url}/api/v2/users?per_page=1`, { headers: { authorization: `Bearer ${accessToken}`, ...headers } });
    expect((await users(edge(certificate))).status).toBe(200);
    for (const headers of [{}, edge(otherCertificate), edge(certificate, 'not-the-edge-key'), edge(certificate, null)]) {
      const refused = await users(headers);
      expect(refused.status, JSON.stringify(Object.keys(headers))).toBe(401);
      expect(((await refused.json()) as Json).errorCode).toBe('invalid_token');
    }
  });

  it('leaves tokens unbound for a client that does not ask, whatever certificate it shows', async () => {
    const issued = await token({ grant_type: 'client_credentials', client_id: unboundMachine.client_id, audience: managementAudience }, edge(certificate));
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(decodeJwt(issued.body.access_token as string).cnf).toBeUndefined();
  });

  it('refuses a bound client that calls without a certificate the edge vouches for', async () => {
    const app = (await api('POST', '/clients', {
      name: 'secret machine',
      app_type: 'non_interactive',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_post',
      tls_client_certificate_bound_access_tokens: true,
    })) as { client_id: string; client_secret: string };
    await api('POST', '/client-grants', { client_id: app.client_id, audience: managementAudience, scope: ['read:users'] });
    const body = { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, audience: managementAudience };
    for (const headers of [{}, edge(certificate, 'not-the-edge-key')]) {
      const refused = await token(body, headers);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('certificate-bound') });
    }
    // The secret authenticates, the certificate binds: the two are independent (RFC 8705 §3).
    const issued = await token(body, edge(otherCertificate));
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(decodeJwt(issued.body.access_token as string).cnf).toEqual({ 'x5t#S256': thumbprint(otherCertificate) });
  });

  it('gives an API that requires mTLS-bound tokens only bound ones', async () => {
    const identifier = 'https://mtls-only.example/';
    await api('POST', '/resource-servers', { name: 'mTLS only', identifier, scopes: [{ value: 'read:things' }], proof_of_possession: { mechanism: 'mtls', required: true } });
    for (const client of [machine, unboundMachine]) await api('POST', '/client-grants', { client_id: client.client_id, audience: identifier, scope: ['read:things'] });
    const unbound = await token({ grant_type: 'client_credentials', client_id: unboundMachine.client_id, audience: identifier }, edge(certificate));
    expect(unbound).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const bound = await token({ grant_type: 'client_credentials', client_id: machine.client_id, audience: identifier }, edge(certificate));
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
  });

  // A FAPI 1 level: the FAPI 2.0 levels also demand PAR, PKCE and private_key_jwt (fapi2-profile.test.ts).
  for (const setting of [{ tls_client_certificate_bound_access_tokens: true }, { compliance_level: 'fapi1_adv_mtls_par' }]) {
    it(`binds the code flow's and refresh's access tokens (${Object.keys(setting)[0]}), and /userinfo takes them with the certificate only`, async () => {
      const app = (await createApp(server, {
        app_type: 'regular_web',
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code', 'refresh_token'],
        ...setting,
      })) as { client_id: string; client_secret: string };
      const callback = await logIn(
        server,
        new TestBrowser(),
        { client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email offline_access', state: 'st' },
        { username: 'bound@example.com', password: PASSWORD },
      );
      const credentials = { client_id: app.client_id, client_secret: app.client_secret };
      const exchanged = await token({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, ...credentials }, edge(certificate));
      expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
      expect(decodeJwt(exchanged.body.access_token as string).cnf).toEqual({ 'x5t#S256': thumbprint(certificate) });

      const userinfo = (accessToken: string, headers: Record<string, string>) => fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${accessToken}`, ...headers } });
      const info = await userinfo(exchanged.body.access_token as string, edge(certificate));
      expect(info.status).toBe(200);
      expect(((await info.json()) as Json).email).toBe('bound@example.com');
      for (const headers of [{}, edge(otherCertificate)]) {
        const refused = await userinfo(exchanged.body.access_token as string, headers);
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      }

      // A refresh without the certificate gets nothing; with another certificate, a token bound to that one.
      expect((await token({ grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string, ...credentials })).status).toBe(400);
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string, ...credentials }, edge(otherCertificate));
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      expect(decodeJwt(refreshed.body.access_token as string).cnf).toEqual({ 'x5t#S256': thumbprint(otherCertificate) });
    });
  }
});
