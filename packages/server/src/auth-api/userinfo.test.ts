/**
 * GET and POST /userinfo over real HTTP, on both dialects: claims by scope, and 401 invalid_token with
 * WWW-Authenticate for every token it must not honour; CORS for the tenant's clients' origins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../crypto/jwt.js';
import { deleteClient } from '../store/clients.js';
import { deleteUser, updateUsers } from '../store/users.js';
import { postgresAvailable } from '../test-support/services.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { createApi, createClient, createUser, issueCode, post, REDIRECT_URI, type TestClient } from './user-tokens/testing.js';
import type { User } from '../store/users.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('/userinfo on %s', (dialect) => {
  let server: TestServer;
  let web: TestClient;

  async function accessTokenFor(user: User, scopes: string[], audience: string | null = null): Promise<string> {
    const { code } = await issueCode(server, web.client, user, { scopes, audience });
    const res = await post(server, '/oauth/token', { grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI });
    expect(res.status).toBe(200);
    return res.body.access_token as string;
  }
  const userinfo = (accessToken: string | undefined, method = 'GET', headers: Record<string, string> = {}) =>
    fetch(`${server.url}/userinfo`, { method, headers: { ...(accessToken !== undefined && { authorization: `Bearer ${accessToken}` }), ...headers } });

  async function expectInvalidToken(res: Response): Promise<void> {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(await res.json()).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    web = await createClient(server, { token_endpoint_auth_method: 'client_secret_post' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('returns sub with the profile and email claims the scopes allow, by GET and POST', async () => {
    const user = await createUser(server, { profile: { name: 'Grace Hopper', nickname: 'amazing', picture: 'https://img.example/g.png' } });
    const full = await accessTokenFor(user, ['openid', 'profile', 'email']);
    for (const method of ['GET', 'POST']) {
      const res = await userinfo(full, method);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        sub: user.user_id,
        name: 'Grace Hopper',
        nickname: 'amazing',
        picture: 'https://img.example/g.png',
        updated_at: new Date(user.updated_at).toISOString(),
        email: user.email,
        email_verified: true,
      });
    }
    const emailOnly = await userinfo(await accessTokenFor(user, ['openid', 'email']));
    expect(await emailOnly.json()).toEqual({ sub: user.user_id, email: user.email, email_verified: true });
    const bare = await userinfo(await accessTokenFor(user, ['openid']));
    expect(await bare.json()).toEqual({ sub: user.user_id });
  });

  it('accepts an API access token that also names the userinfo audience', async () => {
    const user = await createUser(server);
    const api = await createApi(server);
    const withOpenid = await accessTokenFor(user, ['openid', 'read:orders'], api.identifier);
    expect((await userinfo(withOpenid)).status).toBe(200);
    // Without openid the token is for the API alone.
    await expectInvalidToken(await userinfo(await accessTokenFor(user, ['read:orders'], api.identifier)));
  });

  it('answers 401 invalid_token for missing, malformed, foreign, expired or forged tokens', async () => {
    await expectInvalidToken(await userinfo(undefined));
    await expectInvalidToken(await userinfo('not-a-jwt'));
    await expectInvalidToken(await userinfo(undefined, 'GET', { authorization: 'Basic dXNlcjpwYXNz' }));
    await expectInvalidToken(await userinfo(await managementToken(server))); // another audience
    const user = await createUser(server);
    const { keyRing } = server.server.prepared;
    const { tenant } = server.server.prepared.bootstrap!;
    const claims = { iss: tenant.issuer, sub: user.user_id, aud: `${tenant.issuer}userinfo`, scope: 'openid' };
    const expired = await signAccessToken(keyRing, tenant.id, claims, -120);
    await expectInvalidToken(await userinfo(expired.token));
    const otherIssuer = await signAccessToken(keyRing, tenant.id, { ...claims, iss: 'https://evil.example/' }, 60);
    await expectInvalidToken(await userinfo(otherIssuer.token));
    const good = await accessTokenFor(user, ['openid']);
    const [h, p] = good.split('.');
    await expectInvalidToken(await userinfo(`${h}.${p}.${'A'.repeat(342)}`));
  });

  it('answers bad POST bodies in the OAuth shape, never 500', async () => {
    const user = await createUser(server);
    const accessToken = await accessTokenFor(user, ['openid']);
    for (const [type, body, status] of [
      ['application/json', '{"a":', 400],
      ['application/x-www-form-urlencoded', 'a=1&a=2', 400],
      ['text/plain', 'hello', 415],
    ] as const) {
      const res = await fetch(`${server.url}/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': type }, body });
      expect(res.status, type).toBe(status);
      expect(((await res.json()) as { error: string }).error).toEqual(expect.any(String));
    }
    const form = await fetch(`${server.url}/userinfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'ignored=1',
    });
    expect(form.status).toBe(200);
  });

  it('stops honouring a token once its client is deleted', async () => {
    const doomed = await createClient(server, { token_endpoint_auth_method: 'client_secret_post' });
    const user = await createUser(server);
    const { code } = await issueCode(server, doomed.client, user, { scopes: ['openid'] });
    const res = await post(server, '/oauth/token', { grant_type: 'authorization_code', ...doomed.auth, code, redirect_uri: REDIRECT_URI });
    const accessToken = res.body.access_token as string;
    expect((await userinfo(accessToken)).status).toBe(200);
    await deleteClient(server.server.prepared.store.db, doomed.client.tenant_id, doomed.client.client_id);
    server.server.services.configCache.invalidate();
    await expectInvalidToken(await userinfo(accessToken));
  });

  it('stops honouring a token once its user is blocked or deleted', async () => {
    const db = server.server.prepared.store.db;
    const user = await createUser(server);
    const accessToken = await accessTokenFor(user, ['openid', 'profile']);
    expect((await userinfo(accessToken)).status).toBe(200);
    await updateUsers(db, [{ ...user, blocked: true }]);
    await expectInvalidToken(await userinfo(accessToken));
    await deleteUser(db, user.tenant_id, user.user_id);
    await expectInvalidToken(await userinfo(accessToken));
  });

  it('answers CORS for the origins of the tenant clients, with the headers browser SDKs send', async () => {
    for (const path of ['/userinfo', '/oauth/token', '/oauth/revoke']) {
      const preflight = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': path === '/userinfo' ? 'GET' : 'POST' },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['content-type', 'auth0-client', 'authorization']));
      const foreign = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    }
    const user = await createUser(server);
    const res = await userinfo(await accessTokenFor(user, ['openid']), 'GET', { origin: 'https://app.example' });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });
});
