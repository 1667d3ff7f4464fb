/**
 * grant_type=authorization_code over real HTTP, on both dialects: the tokens and their claims, PKCE (RFC 9700
 * items 3 to 5), single use with revocation on replay (item 7), the redirect binding, and every bad input in
 * the OAuth error shape.
 */
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteUser, updateUsers } from '../../store/users.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import {
  createApi,
  createClient,
  createUser,
  decodeJwt,
  issueCode,
  pkcePair,
  post,
  REDIRECT_URI,
  type TestClient,
} from '../user-tokens/testing.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

function leftHalfSha256(value: string): string {
  return createHash('sha256').update(value).digest().subarray(0, 16).toString('base64url');
}

describe.each(dialects)('POST /oauth/token with authorization_code on %s', (dialect) => {
  let server: TestServer;
  let spa: TestClient;
  let web: TestClient;
  const token = (body: Record<string, unknown>, json = false) => post(server, '/oauth/token', body, { json });
  const userinfo = (accessToken: string) => fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    spa = await createClient(server);
    web = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', jwt_configuration: { lifetime_in_seconds: 600 } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('issues access, ID and refresh tokens with the documented claims for a public client with PKCE', async () => {
    const user = await createUser(server);
    const api = await createApi(server);
    const { verifier, challenge } = pkcePair();
    const { code } = await issueCode(server, spa.client, user, {
      challenge,
      nonce: 'n-0S6_WzA2Mj',
      sessionId: 'sid-123',
      audience: api.identifier,
      scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
    });
    const res = await token({ grant_type: 'authorization_code', ...spa.auth, code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'openid profile email offline_access read:orders' });
    expect(res.body.refresh_token).toEqual(expect.any(String));

    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
    const accessToken = res.body.access_token as string;
    const access = await jwtVerify(accessToken, jwks, { issuer: server.issuer, audience: api.identifier, typ: 'at+jwt' });
    expect(access.payload).toMatchObject({
      sub: user.user_id,
      aud: [api.identifier, `${server.issuer}userinfo`],
      azp: spa.client.client_id,
      scope: 'openid profile email offline_access read:orders',
      jti: expect.any(String),
    });
    expect(access.payload.exp! - access.payload.iat!).toBe(600);

    const idToken = res.body.id_token as string;
    const id = await jwtVerify(idToken, jwks, { issuer: server.issuer, audience: spa.client.client_id, typ: 'JWT' });
    expect(id.protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    expect(id.payload).toMatchObject({
      sub: user.user_id,
      aud: spa.client.client_id,
      azp: spa.client.client_id,
      nonce: 'n-0S6_WzA2Mj',
      sid: 'sid-123',
      auth_time: expect.any(Number),
      at_hash: leftHalfSha256(accessToken),
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      nickname: user.email!.split('@')[0],
      picture: expect.stringMatching(/^https:\/\//),
      updated_at: new Date(user.updated_at).toISOString(),
      email: user.email,
      email_verified: true,
    });
    expect(id.payload.exp! - id.payload.iat!).toBe(36_000);
    expect(id.payload).not.toHaveProperty('c_hash');
  });

  it('gives only the claims the scopes allow, and a userinfo-only access token without an API', async () => {
    const user = await createUser(server);
    const { code } = await issueCode(server, web.client, user, { scopes: ['openid'] });
    const res = await token({ grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI }, true);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('refresh_token');
    const { payload: id } = decodeJwt(res.body.id_token as string);
    expect(Object.keys(id).sort()).toEqual(['aud', 'auth_time', 'at_hash', 'azp', 'exp', 'iat', 'iss', 'sub'].sort());
    expect((id.exp as number) - (id.iat as number)).toBe(600); // the client's jwt_configuration
    const { payload: access } = decodeJwt(res.body.access_token as string);
    expect(access.aud).toBe(`${server.issuer}userinfo`);
    expect(res.body.expires_in).toBe(86_400);
  });

  it('issues no ID token without openid, and an API-only audience without it', async () => {
    const user = await createUser(server);
    const api = await createApi(server);
    const { code } = await issueCode(server, web.client, user, { scopes: ['read:orders'], audience: api.identifier });
    const res = await token({ grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('id_token');
    expect(decodeJwt(res.body.access_token as string).payload.aud).toBe(api.identifier);
  });

  it('refuses a second redemption and revokes what the first one issued (RFC 9700 item 7)', async () => {
    const user = await createUser(server);
    const { verifier, challenge } = pkcePair();
    const { code } = await issueCode(server, spa.client, user, { challenge });
    const body = { grant_type: 'authorization_code', ...spa.auth, code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const first = await token(body);
    expect(first.status).toBe(200);
    expect((await userinfo(first.body.access_token as string)).status).toBe(200);

    const replay = await token(body);
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    // The access token and the refresh token of the first redemption are dead now.
    expect((await userinfo(first.body.access_token as string)).status).toBe(401);
    const refresh = await token({ grant_type: 'refresh_token', ...spa.auth, refresh_token: first.body.refresh_token });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('lets only one of two concurrent redemptions win', async () => {
    const user = await createUser(server);
    const { code } = await issueCode(server, web.client, user);
    const body = { grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI };
    const results = await Promise.all([token(body), token(body), token(body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  describe('PKCE', () => {
    it('requires the verifier when a challenge was bound, and checks it (item 3)', async () => {
      const user = await createUser(server);
      const { challenge } = pkcePair();
      for (const verifier of [undefined, pkcePair().verifier, 'short']) {
        const { code } = await issueCode(server, spa.client, user, { challenge });
        const res = await token({
          grant_type: 'authorization_code',
          ...spa.auth,
          code,
          redirect_uri: REDIRECT_URI,
          ...(verifier !== undefined && { code_verifier: verifier }),
        });
        expect(res.status, String(verifier)).toBe(400);
        expect(res.body.error).toBe('invalid_grant');
      }
    });

    it('refuses a verifier for a code issued without a challenge: a downgrade (item 4)', async () => {
      const user = await createUser(server);
      const { code } = await issueCode(server, web.client, user);
      const res = await token({ grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI, code_verifier: pkcePair().verifier });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    });

    it('requires PKCE from public clients and binds S256 challenges only (item 5)', async () => {
      const user = await createUser(server);
      const { code } = await issueCode(server, spa.client, user);
      const res = await token({ grant_type: 'authorization_code', ...spa.auth, code, redirect_uri: REDIRECT_URI });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
      const { createAuthorizationCode } = await import('../user-tokens/authorization-code.js');
      const authorization = { tenant: server.server.prepared.bootstrap!.tenant, client: spa.client, user, scopes: ['openid'], audience: null, authTime: 1 };
      await expect(
        createAuthorizationCode(server.server.services, authorization, {
          redirectUri: REDIRECT_URI,
          codeChallenge: 'x',
          codeChallengeMethod: 'plain' as 'S256',
        }),
      ).rejects.toThrow(/S256/);
    });
  });

  it.each([
    ['a different redirect_uri', { redirect_uri: `${REDIRECT_URI}/other` }, 400, 'invalid_grant'],
    ['a trailing slash on the redirect_uri', { redirect_uri: `${REDIRECT_URI}/` }, 400, 'invalid_grant'],
    ['no redirect_uri', { redirect_uri: undefined }, 400, 'invalid_request'],
    ['an unknown code', { code: 'not-a-code' }, 400, 'invalid_grant'],
    ['no code', { code: undefined }, 400, 'invalid_request'],
    ['an empty code', { code: '' }, 400, 'invalid_request'],
    ['an oversized code', { code: 'x'.repeat(201) }, 400, 'invalid_request'],
    ['an oversized redirect_uri', { redirect_uri: `https://a.example/${'x'.repeat(2000)}` }, 400, 'invalid_request'],
    ['an unknown client', { client_id: 'unknown-client', client_secret: 'x' }, 401, 'invalid_client'],
    ['a wrong secret', { client_secret: 'wrong' }, 401, 'invalid_client'],
    ['no client authentication', { client_secret: undefined }, 401, 'invalid_client'],
  ])('refuses %s', async (_name, override, status, error) => {
    const user = await createUser(server);
    const { code } = await issueCode(server, web.client, user);
    const body: Record<string, unknown> = { grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI, ...override };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const res = await token(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('refuses wrong types and repeated parameters in the OAuth shape', async () => {
    const user = await createUser(server);
    const { code } = await issueCode(server, web.client, user);
    const asJson = await token({ grant_type: 'authorization_code', ...web.auth, code: { nested: true }, redirect_uri: REDIRECT_URI }, true);
    expect(asJson.status).toBe(400);
    expect(asJson.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const list = await token({ grant_type: 'authorization_code', ...web.auth, code: [code, code], redirect_uri: REDIRECT_URI }, true);
    expect(list.status).toBe(400);
    expect(list.body.error).toBe('invalid_request');
    const repeated = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=${code}&code=${code}&client_id=${web.client.client_id}`,
    });
    expect(repeated.status).toBe(400);
    expect(((await repeated.json()) as { error: string }).error).toBe('invalid_request');
    // None of these consumed the code.
    const ok = await token({ grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI });
    expect(ok.status).toBe(200);
  });

  it("refuses another client's code, an expired code, and a client that may not use the grant", async () => {
    const user = await createUser(server);
    const { code } = await issueCode(server, web.client, user);
    const other = await createClient(server, { token_endpoint_auth_method: 'client_secret_post' });
    const stolen = await token({ grant_type: 'authorization_code', ...other.auth, code, redirect_uri: REDIRECT_URI });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');

    const { code: old } = await issueCode(server, web.client, user);
    await server.server.prepared.store.db.updateTable('authorization_codes').set({ expires_at: Date.now() - 1 }).where('user_id', '=', user.user_id).execute();
    const expired = await token({ grant_type: 'authorization_code', ...web.auth, code: old, redirect_uri: REDIRECT_URI });
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('invalid_grant');

    const machine = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['client_credentials'] });
    const { code: third } = await issueCode(server, machine.client, user);
    const refused = await token({ grant_type: 'authorization_code', ...machine.auth, code: third, redirect_uri: REDIRECT_URI });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('unauthorized_client');
  });

  it('leaves no usable code for a user who was blocked or deleted after signing in', async () => {
    const db = server.server.prepared.store.db;
    const blocked = await createUser(server);
    const { code } = await issueCode(server, web.client, blocked);
    await updateUsers(db, [{ ...blocked, blocked: true }]);
    const a = await token({ grant_type: 'authorization_code', ...web.auth, code, redirect_uri: REDIRECT_URI });
    expect(a.status).toBe(400);
    expect(a.body.error).toBe('invalid_grant');

    const deleted = await createUser(server);
    const { code: code2 } = await issueCode(server, web.client, deleted);
    await deleteUser(db, deleted.tenant_id, deleted.user_id);
    const b = await token({ grant_type: 'authorization_code', ...web.auth, code: code2, redirect_uri: REDIRECT_URI });
    expect(b.status).toBe(400);
    expect(b.body.error).toBe('invalid_grant');
  });

  it('stores codes only as hashes', async () => {
    const user = await createUser(server);
    const { code } = await issueCode(server, web.client, user);
    const rows = await server.server.prepared.store.db.selectFrom('authorization_codes').selectAll().where('user_id', '=', user.user_id).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(rows[0]!.code_hash).toBe(createHash('sha256').update(code).digest('hex'));
  });
});
