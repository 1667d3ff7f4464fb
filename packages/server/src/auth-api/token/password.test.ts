/**
 * The password grants (`password` and Auth0's `password-realm`) over real HTTP, on both dialects: tokens for the
 * right credentials, the reference's answers for wrong ones and for blocked users, the connection rules, the
 * recorded login, and bad input in the OAuth shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertConnection } from '../../store/connections.js';
import { findUser } from '../../store/users.js';
import { updateTenant } from '../../store/tenants.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import { createApi, createClient, createUser, decodeJwt, PASSWORD, post, type TestClient } from '../user-tokens/testing.js';
import { PASSWORD_REALM_GRANT } from './password-realm.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('POST /oauth/token with the password grants on %s', (dialect) => {
  let server: TestServer;
  let app: TestClient;
  const token = (body: Record<string, unknown>, json = false) => post(server, '/oauth/token', body, { json });

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    app = await createClient(server, {
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['password', PASSWORD_REALM_GRANT, 'refresh_token'],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['password', {}],
    [PASSWORD_REALM_GRANT, { realm: DATABASE_CONNECTION_NAME }],
  ])('%s: issues tokens for the right credentials and records the login', async (grant, extra) => {
    const user = await createUser(server);
    const api = await createApi(server);
    const res = await token({
      grant_type: grant,
      ...app.auth,
      username: user.email!.toUpperCase(), // emails match whatever their case
      password: PASSWORD,
      scope: 'openid email offline_access read:orders unknown:scope',
      audience: api.identifier,
      ...extra,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'openid email offline_access read:orders' });
    expect(res.body.refresh_token).toEqual(expect.any(String));
    const { payload: id } = decodeJwt(res.body.id_token as string);
    expect(id).toMatchObject({ sub: user.user_id, aud: app.client.client_id, email: user.email, email_verified: true });
    expect(id).not.toHaveProperty('name'); // no profile scope
    expect(id).not.toHaveProperty('sid'); // no SSO session behind a password grant
    expect(decodeJwt(res.body.access_token as string).payload).toMatchObject({ gty: 'password', sub: user.user_id, azp: app.client.client_id });
    expect(Math.abs((id.auth_time as number) - Date.now() / 1000)).toBeLessThan(10);
    const stored = await findUser(server.server.prepared.store.db, user.tenant_id, user.user_id);
    expect(stored).toMatchObject({ logins_count: 1, last_ip: '127.0.0.1' });
    expect(stored!.last_login).toEqual(expect.any(Number));
  });

  it.each([
    ['a wrong password', (email: string) => ({ username: email, password: 'wrong password!' })],
    ['an unknown user', () => ({ username: 'nobody@example.com', password: PASSWORD })],
  ])('answers %s with 403 invalid_grant "Wrong email or password."', async (_name, credentials) => {
    const user = await createUser(server);
    for (const grant of [{ grant_type: 'password' }, { grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME }]) {
      const res = await token({ ...grant, ...app.auth, ...credentials(user.email!) });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'Wrong email or password.' });
    }
  });

  it('answers a blocked user with 401 unauthorized "user is blocked", only with the right password', async () => {
    const user = await createUser(server, { blocked: true });
    const res = await token({ grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', error_description: 'user is blocked' });
    const wrong = await token({ grant_type: 'password', ...app.auth, username: user.email, password: 'not it at all' });
    expect(wrong.status).toBe(403);
  });

  it('uses the tenant default directory for `password`, and refuses realms the client cannot use', async () => {
    const { tenant } = server.server.prepared.bootstrap!;
    const db = server.server.prepared.store.db;
    const user = await createUser(server);
    // A second database connection, not enabled for the client.
    await insertConnection(db, { id: 'con_other0000000000', tenant_id: tenant.id, name: 'Other-DB', strategy: 'auth0', options: {} }, []);
    const other = await token({ grant_type: PASSWORD_REALM_GRANT, ...app.auth, username: user.email, password: PASSWORD, realm: 'Other-DB' });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_request');
    const unknown = await token({ grant_type: PASSWORD_REALM_GRANT, ...app.auth, username: user.email, password: PASSWORD, realm: 'No-Such' });
    expect(unknown.status).toBe(400);

    await updateTenant(db, tenant.id, { settings: { ...tenant.settings, default_directory: 'Other-DB' } });
    server.server.services.tenants.invalidate();
    try {
      const res = await token({ grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: 'Authorization server not configured with default connection.' });
    } finally {
      await updateTenant(db, tenant.id, { settings: tenant.settings });
      server.server.services.tenants.invalidate();
    }
    const back = await token({ grant_type: 'password', ...app.auth, username: user.email, password: PASSWORD });
    expect(back.status).toBe(200);
  });

  it('refuses clients that do not enable the grant', async () => {
    const user = await createUser(server);
    const plain = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'] });
    for (const grant of [{ grant_type: 'password' }, { grant_type: PASSWORD_REALM_GRANT, realm: DATABASE_CONNECTION_NAME }]) {
      const res = await token({ ...grant, ...plain.auth, username: user.email, password: PASSWORD });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('unauthorized_client');
    }
  });

  it.each([
    ['no username', { username: undefined }, 400, 'invalid_request'],
    ['no password', { password: undefined }, 400, 'invalid_request'],
    ['an empty password', { password: '' }, 400, 'invalid_request'],
    ['no realm', { realm: undefined }, 400, 'invalid_request'],
    ['an oversized password', { password: 'p'.repeat(1001) }, 400, 'invalid_request'],
    ['an oversized username', { username: `${'u'.repeat(500)}@example.com` }, 400, 'invalid_request'],
    ['an object as username', { username: { $gt: '' } }, 400, 'invalid_request'],
    ['an unknown client', { client_id: 'no-such-client' }, 401, 'invalid_client'],
    ['a wrong client secret', { client_secret: 'nope' }, 401, 'invalid_client'],
  ])('refuses %s', async (_name, override, status, error) => {
    const body: Record<string, unknown> = {
      grant_type: PASSWORD_REALM_GRANT,
      ...app.auth,
      username: 'someone@example.com',
      password: PASSWORD,
      realm: DATABASE_CONNECTION_NAME,
      ...override,
    };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const res = await token(body, true);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });
});
