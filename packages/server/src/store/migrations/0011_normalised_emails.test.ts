/**
 * Migration 0011 on both dialects: rows written before it (non-normalised addresses, as a full-width signup or a
 * raw import left them) are rewritten to the normalised form; two accounts that become the same address keep
 * the one that already held it (or the oldest) and leave the other exactly as stored, with a warning.
 */
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../../auth-api/token/password-realm.js';
import { createClient, PASSWORD, type TestClient } from '../../auth-api/user-tokens/testing.js';
import { hashPassword } from '../../crypto/passwords.js';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { DATABASE_CONNECTION_NAME, EMAIL_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import { findConnectionByName } from '../connections.js';
import { migrateToLatest } from '../db.js';
import { migrationProvider } from './index.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('migration 0011: normalised emails (%s)', (dialect) => {
  let server: TestServer;
  let app: TestClient;
  const warnings: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'GatehouseEmailCollision') warnings.push(warning.message);
  };

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT] });
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await server?.close();
  });

  it('rewrites stored addresses, keeps colliding accounts apart, and the migrated users log in under any spelling', async () => {
    const { store, bootstrap } = server.server.prepared;
    const db = store.db;
    const tenantId = bootstrap!.tenant.id;
    const database = (await findConnectionByName(db, tenantId, DATABASE_CONNECTION_NAME))!;
    const email = (await findConnectionByName(db, tenantId, EMAIL_CONNECTION_NAME))!;
    // Back to the schema before 0011 (its `down` changes nothing), as a server of the previous version left it;
    // later migrations are undone first, and come back with it below.
    const migrator = new Migrator({ db, provider: migrationProvider, ...(store.schema && { migrationTableSchema: store.schema }) });
    const later = Object.keys(await migrationProvider.getMigrations()).filter((name) => name >= '0011').sort();
    const undone = await migrator.migrateTo('0010_passwordless');
    expect(undone.error).toBeUndefined();
    expect(undone.results?.map((r) => r.migrationName).sort()).toEqual(later);

    const passwordHash = await hashPassword(PASSWORD);
    let clock = 1_700_000_000_000;
    const user = (userId: string, address: string, connectionId = database.id) => ({
      user_id: userId,
      tenant_id: tenantId,
      connection_id: connectionId,
      email: address,
      email_verified: 1,
      username: null,
      phone_number: null,
      phone_verified: 0,
      password_hash: passwordHash,
      blocked: 0,
      profile: '{}',
      user_metadata: '{}',
      app_metadata: '{}',
      linked_to: null,
      logins_count: 0,
      last_login: null,
      last_ip: null,
      last_password_reset: null,
      created_at: ++clock,
      updated_at: clock,
    });
    await db
      .insertInto('users')
      .values([
        user('auth0|plain', 'ｐｌａｉｎ@example.com'), // full width alone: becomes plain
        user('auth0|upper', 'Upper@Example.com'), // written around the store: lower-cased
        user('auth0|holder-wide', 'ｈｏｌｄｅｒ@example.com'), // older, but the ASCII account already holds the address
        user('auth0|holder', 'holder@example.com'),
        user('auth0|first', 'ｐａｉｒ@example.com'), // neither holds it: the older gets it
        user('auth0|second', 'ｐａｉr@example.com'),
        user('email|other', 'ｈｏｌｄｅｒ@example.com', email.id), // another connection: no collision
      ])
      .execute();
    await db
      .insertInto('user_blocks')
      .values({ id: 'ubk_wide', tenant_id: tenantId, user_id: null, identifier: 'ｇｈｏｓｔ@example.com', ip: '127.0.0.1', created_at: clock, expires_at: clock + 3_600_000 })
      .execute();
    const code = (id: string, identifier: string) => ({
      id,
      tenant_id: tenantId,
      connection_id: email.id,
      client_id: app.client.client_id,
      identifier,
      code_hash: null,
      link_token_hash: null,
      auth_params: '{}',
      attempts: 0,
      verified_at: null,
      expires_at: Date.now() + 300_000,
      created_at: Date.now(),
    });
    await db.insertInto('passwordless_codes').values([code('code-wide', 'ｃｏｄｅ@example.com'), code('code-plain', 'code@example.com'), code('code-alone', 'ａｌｏｎｅ@example.com')]).execute();

    expect(await migrateToLatest(store)).toEqual({ applied: later });

    const emails = Object.fromEntries((await db.selectFrom('users').select(['user_id', 'email']).where('tenant_id', '=', tenantId).execute()).map((u) => [u.user_id, u.email]));
    expect(emails).toMatchObject({
      'auth0|plain': 'plain@example.com',
      'auth0|upper': 'upper@example.com',
      'auth0|holder': 'holder@example.com',
      'auth0|holder-wide': 'ｈｏｌｄｅｒ@example.com',
      'auth0|first': 'pair@example.com',
      'auth0|second': 'ｐａｉr@example.com',
      'email|other': 'holder@example.com',
    });
    // process.emitWarning delivers on a later tick.
    await expect.poll(() => warnings.length).toBe(2);
    expect(warnings[0]).toContain('auth0|holder-wide');
    expect(warnings[0]).toContain('auth0|holder');
    expect(warnings[1]).toContain('auth0|second');
    expect(warnings[1]).toContain('auth0|first');
    expect(await db.selectFrom('user_blocks').select('identifier').where('id', '=', 'ubk_wide').executeTakeFirst()).toEqual({ identifier: 'ghost@example.com' });
    const codes = await db.selectFrom('passwordless_codes').select(['id', 'identifier']).where('connection_id', '=', email.id).orderBy('id').execute();
    expect(codes).toEqual([
      { id: 'code-alone', identifier: 'alone@example.com' },
      { id: 'code-plain', identifier: 'code@example.com' },
    ]);

    // The migrated accounts are reached by their address under any spelling.
    const login = async (username: string) =>
      (
        await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: PASSWORD_REALM_GRANT, ...app.auth, realm: DATABASE_CONNECTION_NAME, username, password: PASSWORD, scope: 'openid' }),
        })
      ).json() as Promise<{ id_token?: string }>;
    const subject = async (username: string) => {
      const { id_token } = await login(username);
      return id_token && (JSON.parse(Buffer.from(id_token.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
    };
    expect(await subject('ｐｌａｉｎ@example.com')).toBe('auth0|plain');
    expect(await subject('UPPER@example.com')).toBe('auth0|upper');
    expect(await subject('ｈｏｌｄｅｒ@example.com')).toBe('auth0|holder');
    expect(await subject('PAIR@example.com')).toBe('auth0|first');
  });
});
