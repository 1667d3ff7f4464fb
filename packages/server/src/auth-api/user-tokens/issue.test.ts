/**
 * issueUserTokens as /authorize calls it for front-channel responses: which tokens come back, and the hashes
 * that bind the ID token to the access token and the code it travels with.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import type { UserAuthorization } from './authorization.js';
import { issueUserTokens } from './issue.js';
import { createApi, createClient, createUser, decodeJwt, grantPermissions } from './testing.js';

const leftHalf = (value: string) => createHash('sha256').update(value).digest().subarray(0, 16).toString('base64url');

describe('issueUserTokens', () => {
  let server: TestServer;
  let authorization: UserAuthorization;

  beforeAll(async () => {
    server = await startTestServer();
    const { client } = await createClient(server);
    const user = await createUser(server);
    const api = await createApi(server);
    authorization = {
      tenant: server.server.prepared.bootstrap!.tenant,
      client,
      user,
      scopes: ['openid', 'profile', 'offline_access', 'read:orders'],
      audience: api.identifier,
      nonce: 'abc',
      authTime: 1_700_000_000,
      sessionId: 'sid-9',
    };
  });
  afterAll(async () => {
    await server?.close();
  });

  it('binds the ID token to the code (c_hash) and the access token (at_hash) of the same response', async () => {
    const tokens = await issueUserTokens(server.server.services, authorization, { accessToken: true, idToken: true, refreshToken: false, code: 'the-code' });
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'openid profile offline_access read:orders' });
    expect(tokens).not.toHaveProperty('refresh_token');
    const { header, payload } = decodeJwt(tokens.id_token!);
    expect(header.typ).toBe('JWT');
    expect(payload).toMatchObject({
      c_hash: leftHalf('the-code'),
      at_hash: leftHalf(tokens.access_token!),
      nonce: 'abc',
      sid: 'sid-9',
      auth_time: 1_700_000_000,
      name: 'Ada Lovelace',
    });
    expect(payload).not.toHaveProperty('email');
  });

  it('issues only what is asked: an ID token alone carries no at_hash', async () => {
    const tokens = await issueUserTokens(server.server.services, authorization, { accessToken: false, idToken: true, refreshToken: false });
    expect(tokens.access_token).toBeUndefined();
    const { payload } = decodeJwt(tokens.id_token!);
    expect(payload).not.toHaveProperty('at_hash');
    expect(payload).not.toHaveProperty('c_hash');
  });

  it("adds the user's permissions to tokens for an RBAC API whose dialect asks for them", async () => {
    const authz = await createApi(server, { enforce_policies: true, token_dialect: 'access_token_authz' });
    const plain = await createApi(server, { enforce_policies: true });
    await grantPermissions(server, authorization.user, authz.identifier, ['write:orders', 'read:orders']);
    const withClaim = await issueUserTokens(
      server.server.services,
      { ...authorization, audience: authz.identifier, scopes: ['read:orders'] },
      { accessToken: true, idToken: false, refreshToken: false },
    );
    expect(decodeJwt(withClaim.access_token!).payload).toMatchObject({ scope: 'read:orders', permissions: ['read:orders', 'write:orders'] });
    const without = await issueUserTokens(
      server.server.services,
      { ...authorization, audience: plain.identifier, scopes: [] },
      { accessToken: true, idToken: false, refreshToken: false },
    );
    expect(decodeJwt(without.access_token!).payload).not.toHaveProperty('permissions');
  });

  it('issues a refresh token only with offline_access, and no ID token without openid', async () => {
    const offline = await issueUserTokens(server.server.services, authorization, { accessToken: true, idToken: true, refreshToken: true });
    expect(offline.refresh_token).toEqual(expect.any(String));
    const online = await issueUserTokens(
      server.server.services,
      { ...authorization, scopes: ['read:orders'] },
      { accessToken: true, idToken: true, refreshToken: true },
    );
    expect(online.refresh_token).toBeUndefined();
    expect(online.id_token).toBeUndefined();
    expect(decodeJwt(online.access_token!).payload.aud).toBe(authorization.audience);
  });
});
