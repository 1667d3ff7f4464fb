/** resolveUserScopes against real storage, on both dialects: every rule of what a user may grant a client. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../http/errors.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import type { User } from '../../store/users.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { resolveUserScopes } from './scopes.js';
import { createApi, createClient, createUser, grantPermissions } from './testing.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('resolveUserScopes on %s', (dialect) => {
  let server: TestServer;
  let tenant: Tenant;
  let user: User;
  let client: Client;
  const resolve = (requestedScope: string, audience?: string | null, who: Client = client) =>
    resolveUserScopes(server.server.services, { tenant, client: who, user, requestedScope, audience });

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    tenant = server.server.prepared.bootstrap!.tenant;
    user = await createUser(server);
    client = (await createClient(server)).client;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('passes OIDC scopes through without an API and drops everything else silently', async () => {
    expect(await resolve('openid profile email offline_access read:orders openid')).toEqual({
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      audience: null,
    });
    expect(await resolve('', null)).toEqual({ scopes: [], audience: null });
    expect(await resolve('openid', `${tenant.issuer}userinfo`)).toEqual({ scopes: ['openid'], audience: null });
  });

  it('grants offline_access only to clients with the refresh_token grant, for APIs that allow it', async () => {
    const noRefresh = (await createClient(server, { grant_types: ['authorization_code'] })).client;
    expect((await resolve('openid offline_access', null, noRefresh)).scopes).toEqual(['openid']);
    const online = await createApi(server, { allow_offline_access: false });
    expect((await resolve('openid offline_access read:orders', online.identifier)).scopes).toEqual(['openid', 'read:orders']);
    const offline = await createApi(server);
    expect((await resolve('offline_access read:orders', offline.identifier)).scopes).toEqual(['offline_access', 'read:orders']);
  });

  it('keeps the requested scopes an API defines', async () => {
    const api = await createApi(server);
    expect(await resolve('openid read:orders delete:everything write:orders', api.identifier)).toEqual({
      scopes: ['openid', 'read:orders', 'write:orders'],
      audience: api.identifier,
    });
  });

  it('refuses an unknown API with access_denied "Service not found"', async () => {
    await expect(resolve('openid', 'https://nowhere.example/')).rejects.toMatchObject({
      statusCode: 403,
      code: 'access_denied',
      description: 'Service not found: https://nowhere.example/',
    });
  });

  it("limits an RBAC API to the user's role permissions among those asked", async () => {
    const api = await createApi(server, { enforce_policies: true });
    expect((await resolve('openid read:orders write:orders', api.identifier)).scopes).toEqual(['openid']);
    await grantPermissions(server, user, api.identifier, ['read:orders']);
    const other = await createApi(server, { enforce_policies: true });
    await grantPermissions(server, user, other.identifier, ['write:orders']);
    expect((await resolve('openid read:orders write:orders', api.identifier)).scopes).toEqual(['openid', 'read:orders']);
  });

  it('allows the Management API to first-party clients only, with the current-user scopes only', async () => {
    const audience = server.server.prepared.bootstrap!.managementAudience;
    expect(await resolve('openid read:current_user update:current_user_metadata read:users delete:users', audience)).toEqual({
      scopes: ['openid', 'read:current_user', 'update:current_user_metadata'],
      audience,
    });
    const thirdParty = (await createClient(server, { is_first_party: false })).client;
    const refused = await resolve('read:current_user', audience, thirdParty).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused).toMatchObject({ statusCode: 403, code: 'access_denied' });
  });
});
