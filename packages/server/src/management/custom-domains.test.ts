/**
 * /api/v2/custom-domains over real HTTP, and the tenant answering on a ready domain: requests go to loopback with
 * the custom host in the Host header. Verification by real name resolution (this machine's host name resolves
 * to it through the system resolver; a `.invalid` name never does) and by an operator's mark; discovery and issuer follow the host; tokens
 * from either host validate on both. Runs on SQLite, and on PostgreSQL when reachable.
 */
import http from 'node:http';
import os from 'node:os';
import { lookup } from 'node:dns/promises';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCustomDomainByName, markCustomDomainReady } from '../store/custom-domains.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { managementCaller } from '../test-support/management-api.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
type Dialect = 'sqlite' | 'postgres';

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];

/** This machine's own name resolves to one of its addresses (/etc/hosts), so it "resolves to this server". */
const LOCAL_NAME = os.hostname().toLowerCase();

describe.each(dialects)('custom domains (%s)', (dialect) => {
  let server: TestServer;
  let port: string;

  const call = managementCaller(() => server);

  /** A request to loopback that names `host` in its Host header (fetch will not send one). */
  function onHost(host: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: Json }> {
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method, path, headers: { host: `${host}:${port}`, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: (text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : { text }) as Json });
        });
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  const clientCredentials = (host: string) =>
    onHost(
      host,
      'POST',
      '/oauth/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: server.admin.client_id,
        client_secret: server.admin.client_secret,
        audience: `${server.url}/api/v2/`,
      }).toString(),
    );

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    port = new URL(server.url).port;
    expect((await lookup(LOCAL_NAME)).address).toMatch(/^127\./);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('configures, lists, updates and refuses what it does not offer', async () => {
    const created = await call('POST', '/custom-domains', { domain: 'Login.Example.INVALID', type: 'self_managed_certs', domain_metadata: { team: 'web' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      domain: 'login.example.invalid',
      primary: true,
      status: 'pending_verification',
      type: 'self_managed_certs',
      tls_policy: 'recommended',
      custom_client_ip_header: null,
      domain_metadata: { team: 'web' },
      verification: { status: 'pending', methods: [{ name: 'txt', domain: '_gatehouse-verification.login.example.invalid' }] },
    });
    const id = created.body.custom_domain_id as string;
    expect(id).toMatch(/^cd_[A-Za-z0-9]{16}$/);

    expect((await call('POST', '/custom-domains', { domain: 'login.example.invalid', type: 'self_managed_certs' })).status).toBe(409);
    // The tenant's own host name is taken too.
    expect((await call('POST', '/custom-domains', { domain: new URL(server.url).hostname + '.', type: 'self_managed_certs' })).status).toBe(409);
    expect((await call('POST', '/custom-domains', { domain: 'localhost.example', type: 'self_managed_certs' })).status).toBe(201);
    const managed = await call('POST', '/custom-domains', { domain: 'other.example.invalid', type: 'auth0_managed_certs' });
    expect(managed).toMatchObject({ status: 400, body: { statusCode: 400, error: 'Bad Request' } });
    expect(managed.body.message).toMatch(/self_managed_certs/);
    const header = await call('POST', '/custom-domains', { domain: 'other.example.invalid', type: 'self_managed_certs', custom_client_ip_header: 'x-forwarded-for' });
    expect(header.status).toBe(400);
    expect((await call('POST', '/custom-domains', { domain: '10.0.0.1', type: 'self_managed_certs' })).status).toBe(400);

    const patched = await call('PATCH', `/custom-domains/${id}`, { domain_metadata: { team: 'identity' } });
    expect(patched).toMatchObject({ status: 200, body: { domain_metadata: { team: 'identity' } } });
    expect((await call('GET', `/custom-domains/${id}`)).body).toMatchObject({ domain_metadata: { team: 'identity' } });
    const list = await call('GET', '/custom-domains');
    expect((list.body as unknown as Json[]).map((d) => d.domain)).toEqual(['login.example.invalid', 'localhost.example']);
    expect((list.body as unknown as Json[])[1]).toMatchObject({ primary: false });
    expect((await call('GET', '/custom-domains/cd_nothinghere000000')).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_custom_domain' });

    // Not verified: the tenant does not answer on it; a verification that finds nothing leaves it pending.
    expect((await onHost('login.example.invalid', 'GET', '/.well-known/openid-configuration')).status).toBe(404);
    const verify = await call('POST', `/custom-domains/${id}/verify`);
    expect(verify).toMatchObject({ status: 200, body: { status: 'pending_verification', verification: { status: 'pending' } } });
    expect(verify.body).not.toHaveProperty('cname_api_key');

    // The operator vouches for it (what `gatehouse custom-domains ready DOMAIN` does).
    await markCustomDomainReady(server.server.prepared.store.db, (await findCustomDomainByName(server.server.prepared.store.db, 'login.example.invalid'))!);
    server.server.services.tenants.invalidate();
    expect((await call('GET', `/custom-domains/${id}`)).body).toMatchObject({ status: 'ready', verification: { status: 'verified' } });
    const discovery = await onHost('login.example.invalid', 'GET', '/.well-known/openid-configuration');
    expect(discovery).toMatchObject({ status: 200, body: { issuer: `http://login.example.invalid:${port}/` } });

    expect((await call('DELETE', `/custom-domains/${id}`)).status).toBe(204);
    server.server.services.tenants.invalidate();
    expect((await onHost('login.example.invalid', 'GET', '/.well-known/openid-configuration')).status).toBe(404);
    expect((await call('DELETE', `/custom-domains/${id}`)).status).toBe(404);
  });

  it('verifies a domain that resolves to this server, issuing the edge API key once', async () => {
    const created = await call('POST', '/custom-domains', { domain: LOCAL_NAME, type: 'self_managed_certs' });
    expect(created.status).toBe(201);
    const verified = await call('POST', `/custom-domains/${created.body.custom_domain_id}/verify`);
    expect(verified).toMatchObject({ status: 200, body: { status: 'ready', verification: { status: 'verified' } } });
    const key = verified.body.cname_api_key as string;
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await call('POST', `/custom-domains/${created.body.custom_domain_id}/verify`)).body).not.toHaveProperty('cname_api_key');
    expect((await call('GET', `/custom-domains/${created.body.custom_domain_id}`)).body).not.toHaveProperty('cname_api_key');
    expect(await onHost(LOCAL_NAME, 'GET', '/.well-known/openid-configuration')).toMatchObject({ status: 200, body: { issuer: `http://${LOCAL_NAME}:${port}/` } });
    // The key is the one mTLS edges present: the tenant now holds its digest.
    const tenant = server.server.prepared.bootstrap!.tenant;
    const stored = await server.server.prepared.store.db.selectFrom('tenants').select('settings').where('id', '=', tenant.id).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.settings)).toMatchObject({ custom_domain_api_key_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(stored.settings).not.toContain(key);
  });

  it('serves discovery and tokens on the custom host; tokens from either host validate on both', async () => {
    const host = 'id.example.invalid';
    const created = await call('POST', '/custom-domains', { domain: host, type: 'self_managed_certs' });
    await markCustomDomainReady(server.server.prepared.store.db, (await findCustomDomainByName(server.server.prepared.store.db, host))!);
    server.server.services.tenants.invalidate();
    expect(created.status).toBe(201);

    const custom = await onHost(host, 'GET', '/.well-known/openid-configuration');
    const customBase = `http://${host}:${port}`;
    expect(custom.body).toMatchObject({
      issuer: `${customBase}/`,
      authorization_endpoint: `${customBase}/authorize`,
      token_endpoint: `${customBase}/oauth/token`,
      jwks_uri: `${customBase}/.well-known/jwks.json`,
    });
    const canonical = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Json;
    expect(canonical.issuer).toBe(server.issuer);

    const jwks = createLocalJWKSet((await onHost(host, 'GET', '/.well-known/jwks.json')).body as unknown as JSONWebKeySet);
    const onCustom = await clientCredentials(host);
    expect(onCustom.status).toBe(200);
    const customToken = onCustom.body.access_token as string;
    // Issued on the custom host: its issuer; the Management API audience stays the tenant's own.
    await jwtVerify(customToken, jwks, { issuer: `${customBase}/`, audience: `${server.url}/api/v2/` });
    const fromCanonical = await clientCredentials(new URL(server.url).hostname);
    const canonicalToken = fromCanonical.body.access_token as string;
    await jwtVerify(canonicalToken, jwks, { issuer: server.issuer });

    for (const bearer of [customToken, canonicalToken]) {
      expect((await fetch(`${server.url}/api/v2/custom-domains`, { headers: { authorization: `Bearer ${bearer}` } })).status).toBe(200);
      expect((await onHost(host, 'GET', '/api/v2/custom-domains', { authorization: `Bearer ${bearer}` })).status).toBe(200);
    }
    // A token of a removed domain's issuer no longer validates.
    expect((await call('DELETE', `/custom-domains/${created.body.custom_domain_id}`)).status).toBe(204);
    server.server.services.tenants.invalidate();
    expect((await fetch(`${server.url}/api/v2/custom-domains`, { headers: { authorization: `Bearer ${customToken}` } })).status).toBe(401);
  });

  it('sends verification and reset links on the host the signup or the reset request came on', async () => {
    const host = 'mail.example.invalid';
    const created = await call('POST', '/custom-domains', { domain: host, type: 'self_managed_certs' });
    await markCustomDomainReady(server.server.prepared.store.db, (await findCustomDomainByName(server.server.prepared.store.db, host))!);
    server.server.services.tenants.invalidate();
    const clientId = server.server.prepared.bootstrap!.defaultAppClientId!;
    const json = { 'content-type': 'application/json' };
    /** The links of the newest dev-mailbox email to `to` that has one to `path`. */
    const linkTo = async (to: string, path: string) => {
      let found: string | undefined;
      await expect
        .poll(async () => {
          const page = await (await fetch(`${server.url}/dev/mailbox`)).text();
          const emails = page.split('<article').filter((email) => email.includes(`To ${to} `));
          const links = emails.flatMap((email) => [...email.matchAll(/href="(https?:\/\/[^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&')));
          found = links.find((link) => new URL(link).pathname === path);
          return found;
        })
        .toBeDefined();
      return new URL(found!);
    };

    const onCustom = 'custom-host@example.com';
    const signup = await onHost(host, 'POST', '/dbconnections/signup', json, JSON.stringify({ client_id: clientId, connection: DATABASE_CONNECTION_NAME, email: onCustom, password: 'Custom-Host-Passw0rd!' }));
    expect(signup.status).toBe(200);
    expect((await linkTo(onCustom, '/u/email-verification')).host).toBe(`${host}:${port}`);
    expect((await onHost(host, 'POST', '/dbconnections/change_password', json, JSON.stringify({ client_id: clientId, connection: DATABASE_CONNECTION_NAME, email: onCustom }))).status).toBe(200);
    expect((await linkTo(onCustom, '/u/reset-password/ticket')).host).toBe(`${host}:${port}`);

    // The same on the tenant's own host: its own links.
    const onOwn = 'own-host@example.com';
    const own = await fetch(`${server.url}/dbconnections/signup`, { method: 'POST', headers: json, body: JSON.stringify({ client_id: clientId, connection: DATABASE_CONNECTION_NAME, email: onOwn, password: 'Own-Host-Passw0rd!' }) });
    expect(own.status).toBe(200);
    expect((await linkTo(onOwn, '/u/email-verification')).host).toBe(new URL(server.url).host);
    expect((await call('DELETE', `/custom-domains/${created.body.custom_domain_id}`)).status).toBe(204);
    server.server.services.tenants.invalidate();
  });
});
