/**
 * Upgrade on login, and the equal time of failures: an argon2id hash with weaker parameters than today's is
 * replaced in the login that proves the password; the replacement never overwrites a hash changed meanwhile;
 * a failure is answered no sooner than the slowest recent check of its connection (a lower bound, which load
 * can only lengthen).
 */
import { hash } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { createClient, createUser, PASSWORD, type TestClient } from '../auth-api/user-tokens/testing.js';
import { findUser, replacePasswordHash } from '../store/users.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { answerFailureInEqualTime, recordPasswordCheck } from './login-timing.js';

describe('upgrade on login', () => {
  let server: TestServer;
  let app: TestClient;

  beforeAll(async () => {
    server = await startTestServer();
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT] });
  });
  afterAll(async () => {
    await server?.close();
  });

  const login = (username: string, password: string) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: PASSWORD_REALM_GRANT, ...app.auth, realm: DATABASE_CONNECTION_NAME, username, password, scope: 'openid' }),
    });

  it('replaces an argon2id hash with weaker parameters than today\'s, and keeps a current one', async () => {
    // Algorithm 2 is argon2id (an ambient const enum in @node-rs/argon2's types).
    const weak = await hash(PASSWORD, { algorithm: 2, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    const user = await createUser(server, { password_hash: weak });
    const db = server.server.prepared.store.db;
    expect((await login(user.email!, `${PASSWORD}?`)).status).toBe(403);
    expect((await findUser(db, user.tenant_id, user.user_id))!.password_hash).toBe(weak);
    expect((await login(user.email!, PASSWORD)).status).toBe(200);
    const upgraded = (await findUser(db, user.tenant_id, user.user_id))!.password_hash!;
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await login(user.email!, PASSWORD)).status).toBe(200);
    expect((await findUser(db, user.tenant_id, user.user_id))!.password_hash).toBe(upgraded);
  });

  it('replaces a hash only while it is still the one that was verified', async () => {
    const user = await createUser(server);
    const db = server.server.prepared.store.db;
    expect(await replacePasswordHash(db, user.tenant_id, user.user_id, 'not the stored hash', '$argon2id$other')).toBe(false);
    expect((await findUser(db, user.tenant_id, user.user_id))!.password_hash).toBe(user.password_hash);
    expect(await replacePasswordHash(db, user.tenant_id, user.user_id, user.password_hash!, '$argon2id$other')).toBe(true);
    expect((await findUser(db, user.tenant_id, user.user_id))!.password_hash).toBe('$argon2id$other');
  });
});

describe('failures in equal time', () => {
  it('waits until the slowest recent check of the connection has passed', async () => {
    recordPasswordCheck('con_timing', 5);
    recordPasswordCheck('con_timing', 300);
    recordPasswordCheck('con_timing', 20);
    const started = performance.now();
    await answerFailureInEqualTime('con_timing', started);
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
  });
});
