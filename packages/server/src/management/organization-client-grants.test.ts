/**
 * /api/v2/organizations/{id}/client-grants over real HTTP, on SQLite and PostgreSQL: associate, list (with its
 * filters and paging), remove; what is refused; and the association going with its organization or its grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementCaller } from '../test-support/management-api.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';

type Json = Record<string, unknown>;
const dialects = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])] as const;

describe.each(dialects)('organization client grants (%s)', (dialect) => {
  let server: TestServer;

  const call = managementCaller(() => server);

  async function grant(usage?: 'allow' | 'require' | 'deny'): Promise<Json> {
    const client = (await call('POST', '/clients', { name: `m2m ${Math.random()}`, app_type: 'non_interactive' })).body;
    const api = (await call('POST', '/resource-servers', { identifier: `https://api-${Math.random()}.example/`, name: 'API' })).body;
    const res = await call('POST', '/client-grants', { client_id: client.client_id, audience: api.identifier, scope: [], ...(usage && { organization_usage: usage }) });
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('associates, lists, filters and removes', async () => {
    const org = (await call('POST', '/organizations', { name: 'acme' })).body;
    const [a, b] = [await grant('allow'), await grant('require')];
    expect(await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: a.id })).toMatchObject({ status: 201, body: { id: a.id, client_id: a.client_id, audience: a.audience, organization_usage: 'allow' } });
    expect((await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: b.id })).status).toBe(201);
    expect((await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: a.id })).status).toBe(409);

    const list = (await call('GET', `/organizations/${org.id}/client-grants`)).body as unknown as Json[];
    expect(list.map((g) => g.id)).toEqual([a.id, b.id]);
    expect((await call('GET', `/organizations/${org.id}/client-grants?page=0&per_page=1&include_totals=true`)).body).toMatchObject({ total: 2, client_grants: [{ id: a.id }] });
    expect(((await call('GET', `/organizations/${org.id}/client-grants?audience=${encodeURIComponent(b.audience as string)}`)).body as unknown as Json[]).map((g) => g.id)).toEqual([b.id]);
    expect(((await call('GET', `/organizations/${org.id}/client-grants?client_id=${a.client_id}`)).body as unknown as Json[]).map((g) => g.id)).toEqual([a.id]);
    expect(((await call('GET', `/organizations/${org.id}/client-grants?grant_ids=${b.id}`)).body as unknown as Json[]).map((g) => g.id)).toEqual([b.id]);

    expect((await call('DELETE', `/organizations/${org.id}/client-grants/${a.id}`)).status).toBe(204);
    expect((await call('DELETE', `/organizations/${org.id}/client-grants/${a.id}`)).status).toBe(404);
    // Deleting the grant removes the association.
    expect((await call('DELETE', `/client-grants/${b.id}`)).status).toBe(204);
    expect((await call('GET', `/organizations/${org.id}/client-grants`)).body).toEqual([]);
  });

  it('refuses grants that deny organizations, unknown grants and organizations, and goes with the organization', async () => {
    const org = (await call('POST', '/organizations', { name: 'globex' })).body;
    for (const usage of ['deny', undefined] as const) {
      const g = await grant(usage);
      expect(await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: g.id })).toMatchObject({ status: 400, body: { message: expect.stringContaining('organization_usage') } });
    }
    expect((await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: 'cgr_nope' })).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_client_grant' });
    expect((await call('GET', '/organizations/org_nope/client-grants')).body).toMatchObject({ statusCode: 404, errorCode: 'inexistent_organization' });
    expect((await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: 'x', extra: 1 })).status).toBe(400);
    const g = await grant('allow');
    expect((await call('POST', `/organizations/${org.id}/client-grants`, { grant_id: g.id })).status).toBe(201);
    expect((await call('DELETE', `/organizations/${org.id}`)).status).toBe(204);
    const again = (await call('POST', '/organizations', { name: 'globex' })).body;
    expect((await call('GET', `/organizations/${again.id}/client-grants`)).body).toEqual([]);
    // The grant itself is untouched.
    expect((await call('GET', `/client-grants/${g.id}`)).status).toBe(200);
  });
});
