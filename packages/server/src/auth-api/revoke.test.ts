/**
 * POST /oauth/revoke over real HTTP, on both dialects: a client revokes its refresh token (and the grant's
 * family), unknown tokens answer 200 as RFC 7009 asks, another client's token is refused and stays valid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test-support/services.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { createClient, createUser, issueCode, pkcePair, post, REDIRECT_URI, type TestClient } from './user-tokens/testing.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('POST /oauth/revoke on %s', (dialect) => {
  let server: TestServer;
  let web: TestClient;
  let spa: TestClient;

  async function refreshTokenFor(tc: TestClient): Promise<string> {
    const user = await createUser(server);
    const pkce = tc.secret ? undefined : pkcePair();
    const { code } = await issueCode(server, tc.client, user, pkce && { challenge: pkce.challenge });
    const res = await post(server, '/oauth/token', {
      grant_type: 'authorization_code',
      ...tc.auth,
      code,
      redirect_uri: REDIRECT_URI,
      ...(pkce && { code_verifier: pkce.verifier }),
    });
    expect(res.status).toBe(200);
    return res.body.refresh_token as string;
  }
  const refresh = (tc: TestClient, token: string) => post(server, '/oauth/token', { grant_type: 'refresh_token', ...tc.auth, refresh_token: token });
  const revoke = (body: Record<string, unknown>, json = false) => post(server, '/oauth/revoke', body, { json });

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    web = await createClient(server, {
      token_endpoint_auth_method: 'client_secret_post',
      refresh_token: { rotation_type: 'non-rotating', expiration_type: 'non-expiring' },
    });
    spa = await createClient(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('revokes a refresh token of the calling client: 200 with an empty body, from form or JSON', async () => {
    for (const json of [false, true]) {
      const token = await refreshTokenFor(web);
      expect((await refresh(web, token)).status).toBe(200);
      const res = await revoke({ ...web.auth, token }, json);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect((await refresh(web, token)).body.error).toBe('invalid_grant');
    }
  });

  it('revokes the whole rotation family of a public client', async () => {
    const first = await refreshTokenFor(spa);
    const next = (await refresh(spa, first)).body.refresh_token as string;
    expect((await revoke({ ...spa.auth, token: first }, true)).status).toBe(200);
    expect((await refresh(spa, next)).body.error).toBe('invalid_grant');
  });

  it('answers 200 for an unknown token (RFC 7009 §2.2)', async () => {
    const res = await revoke({ ...web.auth, token: 'never-issued', token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it("refuses another client's token with invalid_grant and leaves it valid (RFC 7009 §2.1)", async () => {
    const token = await refreshTokenFor(web);
    const res = await revoke({ ...spa.auth, token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect((await refresh(web, token)).status).toBe(200);
  });

  it.each([
    ['no token', { token: undefined }, 400, 'invalid_request'],
    ['an empty token', { token: '' }, 400, 'invalid_request'],
    ['an object as token', { token: { a: 1 } }, 400, 'invalid_request'],
    ['an oversized token', { token: 'x'.repeat(16_001) }, 400, 'invalid_request'],
    ['an unknown client', { client_id: 'no-such-client' }, 401, 'invalid_client'],
    ['a wrong secret', { client_secret: 'wrong' }, 401, 'invalid_client'],
    ['no client', { client_id: undefined, client_secret: undefined }, 401, 'invalid_client'],
  ])('refuses %s', async (_name, override, status, error) => {
    const body: Record<string, unknown> = { ...web.auth, token: 'whatever', ...override };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const res = await revoke(body, true);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('refuses a repeated parameter and a body that is not an object', async () => {
    const repeated = await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${web.client.client_id}&token=a&token=b`,
    });
    expect(repeated.status).toBe(400);
    expect(((await repeated.json()) as { error: string }).error).toBe('invalid_request');
    const array = await fetch(`${server.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' });
    expect(array.status).toBe(400);
    expect(((await array.json()) as { error: string }).error).toBe('invalid_request');
    const empty = await fetch(`${server.url}/oauth/revoke`, { method: 'POST' });
    expect(empty.status).toBeGreaterThanOrEqual(400);
    expect(empty.status).toBeLessThan(500);
  });
});
