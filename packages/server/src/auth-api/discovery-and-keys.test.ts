/**
 * Discovery and JWKS over real HTTP, on both dialects: the issuer, tokens that verify against the published
 * keys (with jose, as any relying party would), rotation that never breaks a token in flight, and keys,
 * tenant and admin credentials that survive a restart.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPublishedKeys } from '../store/signing-keys.js';
import { ADMIN_CREDENTIALS_FILE } from '../tenancy/bootstrap.js';
import { postgresAvailable } from '../test-support/services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('discovery and signing keys on %s', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves the same metadata at both well-known addresses, with the issuer plus trailing slash', async () => {
    const oidc = await fetch(`${server.url}/.well-known/openid-configuration`);
    expect(oidc.status).toBe(200);
    expect(oidc.headers.get('access-control-allow-origin')).toBe('*');
    const metadata = (await oidc.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: server.issuer,
      jwks_uri: `${server.url}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: ['RS256'],
    });
    // Nothing is advertised that this build does not serve.
    for (const [key, value] of Object.entries(metadata)) {
      if (key.endsWith('_endpoint') && typeof value === 'string') {
        expect((await fetch(value, { method: 'OPTIONS' })).status, key).not.toBe(404);
      }
    }
    const rfc8414 = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    expect(await rfc8414.json()).toEqual(metadata);
  });

  it('publishes RS256 public keys only, cacheable, readable from any origin', async () => {
    const res = await fetch(`${server.url}/.well-known/jwks.json`);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toMatch(/public, max-age=\d+/);
    const { keys } = (await res.json()) as { keys: Record<string, string>[] };
    expect(keys).toHaveLength(2); // current and next
    for (const key of keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
      expect(Buffer.from(key.n!, 'base64url').length).toBe(256); // 2048-bit modulus
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
    }
  });

  it('answers a poll naming the current ETag with 304, and a rotation with a new ETag and the new keys', async () => {
    const url = `${server.url}/.well-known/jwks.json`;
    const first = await fetch(url);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await first.json()) as { keys: { kid: string }[] };
    const again = await fetch(url, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await fetch(url, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    await server.server.prepared.keyRing.rotate(server.server.prepared.bootstrap!.tenant.id);
    const rotated = await fetch(url, { headers: { 'if-none-match': etag! } });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('etag')).not.toBe(etag);
    const keys = ((await rotated.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    expect(keys).toHaveLength(3); // current, next and the previous current
    expect(keys).toEqual(expect.arrayContaining(body.keys.map((k) => k.kid)));
  });

  it('keeps tokens verifiable across rotations until their key is revoked', async () => {
    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`), { cacheMaxAge: 0, cooldownDuration: 0 });
    const { managementAudience, tenant } = server.server.prepared.bootstrap!;
    const verify = (token: string) => jwtVerify(token, jwks, { issuer: server.issuer, audience: managementAudience });

    const before = await managementToken(server);
    await expect(verify(before)).resolves.toMatchObject({ payload: { sub: `${server.admin.client_id}@clients` } });

    const ring = server.server.prepared.keyRing;
    await ring.rotate(tenant.id);
    const after = await managementToken(server);
    await expect(verify(before)).resolves.toBeTruthy(); // signed by what is now `previous`
    await expect(verify(after)).resolves.toBeTruthy();
    expect(decodeKid(after)).not.toBe(decodeKid(before));

    await ring.rotate(tenant.id);
    await expect(verify(before)).rejects.toThrow(); // its key is revoked now
    await expect(verify(after)).resolves.toBeTruthy();
  });

  it('keeps keys, tenant and admin credentials across a restart, and bootstraps nothing twice', async () => {
    const db = () => server.server.prepared.store.db;
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const kidsBefore = (await listPublishedKeys(db(), tenantId)).map((k) => k.kid);
    const credentialsFile = path.join(server.dataDir, ADMIN_CREDENTIALS_FILE);
    const credentialsBefore = readFileSync(credentialsFile, 'utf8');
    const counts = async () =>
      Promise.all(
        (['tenants', 'clients', 'resource_servers', 'client_grants', 'connections', 'signing_keys'] as const).map(async (table) => {
          const row = await db().selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
          return [table, Number(row.n)] as const;
        }),
      );
    const countsBefore = await counts();

    server = await server.restart();

    expect(server.server.prepared.bootstrap!.tenant.id).toBe(tenantId);
    expect(server.server.prepared.bootstrap!.admin.created).toBe(false);
    expect((await listPublishedKeys(db(), tenantId)).map((k) => k.kid)).toEqual(kidsBefore);
    expect(readFileSync(credentialsFile, 'utf8')).toBe(credentialsBefore);
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    expect(await counts()).toEqual(countsBefore);
    const { keys } = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(keys.map((k) => k.kid)).toEqual(kidsBefore);
  });
});

function decodeKid(token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
}
