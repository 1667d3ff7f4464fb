/** Management API authentication: 401 for every bad token, 403 naming the scopes, 429 with its headers. */
import { generateKeyPair, SignJWT, type KeyInput } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

describe('Management API authentication', () => {
  let server: TestServer;
  const get = (path: string, token?: string) =>
    fetch(`${server.url}/api/v2${path}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

  const expectManagementError = async (res: Response, status: number, errorCode: string, message?: RegExp) => {
    expect(res.status).toBe(status);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ statusCode: status, error: expect.any(String), message: expect.any(String), errorCode });
    if (message) expect(body.message).toMatch(message);
  };

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('accepts a token from the token endpoint', async () => {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: server.admin.client_id,
        client_secret: server.admin.client_secret,
        audience: `${server.url}/api/v2/`,
        scope: 'read:resource_servers',
      }),
    });
    const { access_token } = (await res.json()) as { access_token: string };
    expect((await get('/resource-servers', access_token)).status).toBe(200);
  });

  it('refuses a missing, malformed, forged, expired or foreign token with 401', async () => {
    await expectManagementError(await get('/resource-servers'), 401, 'missing_authentication');
    await expectManagementError(await get('/resource-servers', 'not-a-jwt'), 401, 'invalid_token');
    const good = await managementToken(server);
    const [header, payload] = good.split('.');
    await expectManagementError(await get('/resource-servers', `${header}.${payload}.AAAA`), 401, 'invalid_token');

    const { tenant, managementAudience } = server.server.prepared.bootstrap!;
    const key = await server.server.prepared.keyRing.signingKey(tenant.id);
    const sign = (claims: Record<string, unknown>, exp: string | number = '1h', signWith: KeyInput = key.privateKey) =>
      new SignJWT({ scope: 'read:resource_servers', azp: server.admin.client_id, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setIssuer((claims.iss as string) ?? tenant.issuer)
        .setSubject((claims.sub as string) ?? `${server.admin.client_id}@clients`)
        .setAudience((claims.aud as string) ?? managementAudience)
        .setExpirationTime(exp)
        .sign(signWith);
    await expectManagementError(await get('/resource-servers', await sign({}, Math.floor(Date.now() / 1000) - 60)), 401, 'invalid_token');
    await expectManagementError(await get('/resource-servers', await sign({ aud: 'https://other.example/api/v2/' })), 401, 'invalid_token');
    await expectManagementError(await get('/resource-servers', await sign({ iss: 'https://other.example/' })), 401, 'invalid_token');
    const stranger = (await generateKeyPair('RS256')).privateKey;
    await expectManagementError(await get('/resource-servers', await sign({}, '1h', stranger)), 401, 'invalid_token');
    // Signed by this tenant, but for a client that does not exist here: "the client is not global".
    await expectManagementError(
      await get('/resource-servers', await sign({ azp: 'ghost', sub: 'ghost@clients' })),
      401,
      'invalid_token',
      /Client is not global/,
    );
  });

  it('answers 403 naming the operation scopes when the token has none of them', async () => {
    const token = await managementToken(server, ['read:users']);
    await expectManagementError(await get('/resource-servers', token), 403, 'insufficient_scope', /^Insufficient scope, expected any of: read:resource_servers$/);
  });

  it('rate-limits per calling client with the three headers, then 429 in the management shape', async () => {
    const { tenant } = server.server.prepared.bootstrap!;
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, rate_limits: { management: { capacity: 2, per_second: 0.01 } } },
    });
    server.server.services.tenants.invalidate();
    const token = await managementToken(server);
    const responses = [await get('/resource-servers', token), await get('/resource-servers', token), await get('/resource-servers', token)];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 429]);
    for (const res of responses) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('2');
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    }
    await expectManagementError(responses[2]!, 429, 'too_many_requests', /X-RateLimit-Reset/);
    // Requests without a valid token never reach the bucket, so they cannot spend the client's budget.
    expect((await get('/resource-servers', 'junk')).status).toBe(401);
    await updateTenant(server.server.prepared.store.db, tenant.id, { settings: tenant.settings });
    server.server.services.tenants.invalidate();
  });
});
