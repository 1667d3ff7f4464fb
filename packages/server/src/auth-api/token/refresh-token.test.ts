/**
 * grant_type=refresh_token over real HTTP, on both dialects: rotation with a reuse interval and family
 * revocation on reuse (RFC 9700 item 8), non-rotating tokens, scope narrowing, absolute and idle expiry, the
 * user and client checks, and bad input in the OAuth shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteClient, replaceClient } from '../../store/clients.js';
import { deleteUser, updateUsers, type User } from '../../store/users.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApi, createClient, createUser, decodeJwt, grantPermissions, issueCode, pkcePair, post, REDIRECT_URI, type TestClient } from '../user-tokens/testing.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('POST /oauth/token with refresh_token on %s', (dialect) => {
  let server: TestServer;
  let rotating: TestClient;
  let lenient: TestClient;
  let fixed: TestClient;
  const token = (body: Record<string, unknown>, json = false) => post(server, '/oauth/token', body, { json });
  const db = () => server.server.prepared.store.db;

  /** Signs `user` in to `client` and returns the first refresh token. */
  async function firstRefreshToken(tc: TestClient, user: User, options: Parameters<typeof issueCode>[3] = {}): Promise<string> {
    const pkce = tc.secret ? undefined : pkcePair();
    const { code } = await issueCode(server, tc.client, user, { ...options, ...(pkce && { challenge: pkce.challenge }) });
    const res = await token({ grant_type: 'authorization_code', ...tc.auth, code, redirect_uri: REDIRECT_URI, ...(pkce && { code_verifier: pkce.verifier }) });
    expect(res.status).toBe(200);
    return res.body.refresh_token as string;
  }
  const refresh = (tc: TestClient, refreshToken: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'refresh_token', ...tc.auth, refresh_token: refreshToken, ...extra });

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    rotating = await createClient(server, { refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 0 } });
    lenient = await createClient(server, { refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 60 } });
    fixed = await createClient(server, {
      token_endpoint_auth_method: 'client_secret_post',
      refresh_token: { rotation_type: 'non-rotating', expiration_type: 'non-expiring' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('rotates: each exchange returns new tokens, and reusing a rotated token revokes the family (item 8)', async () => {
    const user = await createUser(server);
    const rt1 = await firstRefreshToken(rotating, user, { nonce: 'original-nonce', sessionId: 'sid-1' });
    const second = await refresh(rotating, rt1);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ token_type: 'Bearer', scope: 'openid profile email offline_access' });
    const rt2 = second.body.refresh_token as string;
    expect(rt2).toEqual(expect.any(String));
    expect(rt2).not.toBe(rt1);
    const { payload: id } = decodeJwt(second.body.id_token as string);
    expect(id).toMatchObject({ sub: user.user_id, aud: rotating.client.client_id, sid: 'sid-1', email: user.email });
    expect(id).not.toHaveProperty('nonce'); // a nonce belongs to the authorization request only

    const third = await refresh(rotating, rt2);
    expect(third.status).toBe(200);
    const rt3 = third.body.refresh_token as string;

    const reuse = await refresh(rotating, rt1);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    // The whole family is dead, the newest token included.
    for (const rt of [rt2, rt3]) expect((await refresh(rotating, rt)).body.error).toBe('invalid_grant');
  });

  it('treats concurrent exchanges of one token without a reuse interval as reuse: at most one wins', async () => {
    const user = await createUser(server);
    const rt = await firstRefreshToken(rotating, user);
    const results = await Promise.all([refresh(rotating, rt), refresh(rotating, rt), refresh(rotating, rt)]);
    const winners = results.filter((r) => r.status === 200);
    expect(winners.length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r.status === 400).every((r) => r.body.error === 'invalid_grant')).toBe(true);
    // The family is revoked, the winner's new token included.
    for (const w of winners) expect((await refresh(rotating, w.body.refresh_token as string)).status).toBe(400);
  });

  it('accepts the previous token again within the reuse interval (leeway)', async () => {
    const user = await createUser(server);
    const rt1 = await firstRefreshToken(lenient, user);
    const a = await refresh(lenient, rt1);
    const b = await refresh(lenient, rt1);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.refresh_token).not.toBe(b.body.refresh_token);
    expect((await refresh(lenient, b.body.refresh_token as string)).status).toBe(200);
    // Past the interval, the same reuse kills the family.
    await db().updateTable('refresh_tokens').set({ rotated_at: Date.now() - 61_000 }).where('user_id', '=', user.user_id).where('rotated_at', 'is not', null).execute();
    expect((await refresh(lenient, rt1)).status).toBe(400);
    expect((await refresh(lenient, a.body.refresh_token as string)).status).toBe(400);
  });

  it('keeps a non-rotating token usable and returns no new one', async () => {
    const user = await createUser(server);
    const rt = await firstRefreshToken(fixed, user);
    for (let i = 0; i < 3; i++) {
      const res = await refresh(fixed, rt);
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('refresh_token');
      expect(res.body.access_token).toEqual(expect.any(String));
    }
  });

  it('always rotates for a public client, whatever its settings say', async () => {
    const spa = await createClient(server, { refresh_token: { rotation_type: 'non-rotating', expiration_type: 'non-expiring' } });
    const user = await createUser(server);
    const rt = await firstRefreshToken(spa, user);
    const res = await refresh(spa, rt);
    expect(res.body.refresh_token).toEqual(expect.any(String));
    expect(res.body.refresh_token).not.toBe(rt);
  });

  it('narrows the scope on request, refuses widening, and keeps the whole grant in the next token', async () => {
    const user = await createUser(server);
    const api = await createApi(server);
    const rt1 = await firstRefreshToken(fixed, user, { audience: api.identifier, scopes: ['openid', 'offline_access', 'read:orders', 'write:orders'] });
    const narrow = await refresh(fixed, rt1, { scope: 'openid read:orders' });
    expect(narrow.status).toBe(200);
    expect(narrow.body.scope).toBe('openid read:orders');
    expect(decodeJwt(narrow.body.access_token as string).payload).toMatchObject({ scope: 'openid read:orders', aud: [api.identifier, `${server.issuer}userinfo`] });
    const wide = await refresh(fixed, rt1, { scope: 'openid read:orders admin' });
    expect(wide.status).toBe(400);
    expect(wide.body.error).toBe('invalid_scope');
    const full = await refresh(fixed, rt1);
    expect(full.body.scope).toBe('openid offline_access read:orders write:orders');
  });

  it('re-evaluates RBAC permissions at every exchange', async () => {
    const user = await createUser(server);
    const api = await createApi(server, { enforce_policies: true });
    await grantPermissions(server, user, api.identifier, ['read:orders', 'write:orders']);
    const rt = await firstRefreshToken(fixed, user, { audience: api.identifier, scopes: ['offline_access', 'read:orders', 'write:orders'] });
    await db().deleteFrom('user_roles').where('user_id', '=', user.user_id).execute();
    const res = await refresh(fixed, rt);
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('offline_access');
  });

  it('expires tokens past their absolute or idle lifetime', async () => {
    const user = await createUser(server);
    const a = await firstRefreshToken(rotating, user);
    const rows = await db().selectFrom('refresh_tokens').select(['expires_at', 'idle_expires_at', 'created_at']).where('user_id', '=', user.user_id).execute();
    expect(rows[0]!.expires_at! - rows[0]!.created_at).toBe(2_592_000_000); // 30 days by default
    expect(rows[0]!.idle_expires_at! - rows[0]!.created_at).toBe(1_296_000_000); // 15 days idle
    await db().updateTable('refresh_tokens').set({ expires_at: Date.now() - 1 }).where('user_id', '=', user.user_id).execute();
    expect((await refresh(rotating, a)).body.error).toBe('invalid_grant');

    const other = await createUser(server);
    const b = await firstRefreshToken(rotating, other);
    await db().updateTable('refresh_tokens').set({ idle_expires_at: Date.now() - 1 }).where('user_id', '=', other.user_id).execute();
    expect((await refresh(rotating, b)).body.error).toBe('invalid_grant');
  });

  it('refuses the tokens of a blocked or deleted user, and of a deleted client', async () => {
    const blocked = await createUser(server);
    const a = await firstRefreshToken(fixed, blocked);
    await updateUsers(db(), [{ ...blocked, blocked: true }]);
    expect((await refresh(fixed, a)).body.error).toBe('invalid_grant');

    const deleted = await createUser(server);
    const b = await firstRefreshToken(fixed, deleted);
    await deleteUser(db(), deleted.tenant_id, deleted.user_id);
    expect((await refresh(fixed, b)).body.error).toBe('invalid_grant');

    const doomed = await createClient(server, { token_endpoint_auth_method: 'client_secret_post' });
    const user = await createUser(server);
    const c = await firstRefreshToken(doomed, user);
    await deleteClient(db(), doomed.client.tenant_id, doomed.client.client_id);
    server.server.services.configCache.invalidate();
    const res = await refresh(doomed, c);
    expect(res.status).toBe(401);
    expect(await db().selectFrom('refresh_tokens').select('id').where('client_id', '=', doomed.client.client_id).execute()).toEqual([]);
  });

  it('leaves the tokens of the other kind unusable when a client switches rotation type', async () => {
    const switching = await createClient(server, {
      token_endpoint_auth_method: 'client_secret_post',
      refresh_token: { rotation_type: 'non-rotating', expiration_type: 'non-expiring' },
    });
    const user = await createUser(server);
    const rt = await firstRefreshToken(switching, user);
    await replaceClient(db(), { ...switching.client, refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 0 } });
    server.server.services.configCache.invalidate();
    expect((await refresh(switching, rt)).body.error).toBe('invalid_grant');
  });

  it("refuses another client's token without harming it", async () => {
    const user = await createUser(server);
    const rt = await firstRefreshToken(fixed, user);
    const thief = await createClient(server, { token_endpoint_auth_method: 'client_secret_post' });
    expect((await refresh(thief, rt)).body.error).toBe('invalid_grant');
    expect((await refresh(fixed, rt)).status).toBe(200);
  });

  it.each([
    ['no refresh_token', { refresh_token: undefined }, 400, 'invalid_request'],
    ['an empty refresh_token', { refresh_token: '' }, 400, 'invalid_request'],
    ['an unknown refresh_token', { refresh_token: 'nope' }, 400, 'invalid_grant'],
    ['an oversized refresh_token', { refresh_token: 'x'.repeat(201) }, 400, 'invalid_request'],
    ['an object as refresh_token', { refresh_token: { a: 1 } }, 400, 'invalid_request'],
    ['an oversized scope', { scope: 'a'.repeat(10_001) }, 400, 'invalid_request'],
    ['an unknown client', { client_id: 'no-such-client' }, 401, 'invalid_client'],
  ])('refuses %s', async (_name, override, status, error) => {
    const body: Record<string, unknown> = { grant_type: 'refresh_token', ...fixed.auth, refresh_token: 'placeholder', ...override };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const res = await token(body, true);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('refuses clients that may not use the grant', async () => {
    const noRefresh = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'] });
    const res = await token({ grant_type: 'refresh_token', ...noRefresh.auth, refresh_token: 'anything' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('unauthorized_client');
  });

  it('stores refresh tokens only as hashes', async () => {
    const user = await createUser(server);
    const rt = await firstRefreshToken(fixed, user);
    const rows = await db().selectFrom('refresh_tokens').selectAll().where('user_id', '=', user.user_id).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(rt);
  });
});
