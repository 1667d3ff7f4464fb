/**
 * Import and export jobs through the unmodified auth0@7 ManagementClient (https rewritten to this server by a
 * custom fetch, as in auth0-management.test.ts):
 *  - a file with users of every foreign algorithm, their hashes made by independent implementations (node:crypto,
 *    hash-wasm, Firebase's published vector), goes in with `jobs.usersImports.create`, is followed with `jobs.get`,
 *    and its one broken user is read back with `jobs.errors.get`;
 *  - for every algorithm, one user logs in with the original password through the hosted login page and another
 *    through the password-realm grant; afterwards each stored hash is argon2id; wrong passwords fail, and while
 *    the hash is still foreign they count towards brute-force protection like any other;
 *  - `jobs.usersExports.create` of that tenant, imported into an empty tenant (another server) and exported
 *    again, gives the same users and metadata (passwords excluded, as in the reference).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { ManagementClient } from 'auth0';
import { argon2id, bcrypt as wasmBcrypt, md4 } from 'hash-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../../packages/server/src/auth-api/token/password-realm.js';
import { findConnectionByName } from '../../packages/server/src/store/connections.js';
import { findUserInConnection } from '../../packages/server/src/store/users.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createApp, logIn, management, TestBrowser } from '../../packages/server/src/test-support/sign-in.js';
import { DATABASE_CONNECTION_NAME } from '../../packages/server/src/tenancy/bootstrap.js';

type Json = Record<string, unknown>;
const CALLBACK = 'https://app.example/callback';
const b64 = (bytes: Buffer | Uint8Array) => Buffer.from(bytes).toString('base64');
const phc64 = (bytes: Buffer | Uint8Array) => b64(bytes).replace(/=+$/, '');

/** A custom_password_hash for `password`, made without Gatehouse's code. */
async function foreignHash(algorithm: string, password: string): Promise<Json> {
  const salt = randomBytes(12);
  switch (algorithm) {
    case 'argon2':
      return { algorithm, hash: { value: await argon2id({ password, salt, parallelism: 1, iterations: 2, memorySize: 1024, hashLength: 32, outputType: 'encoded' }) } };
    case 'bcrypt':
      return { algorithm, hash: { value: await wasmBcrypt({ password, salt: randomBytes(16), costFactor: 4, outputType: 'encoded' }) } };
    case 'hmac':
      return {
        algorithm,
        hash: { value: createHmac('sha256', Buffer.from('c0ffee', 'hex')).update(password).digest('base64'), encoding: 'base64', digest: 'sha256', key: { value: 'c0ffee', encoding: 'hex' } },
      };
    case 'ldap':
      return { algorithm, hash: { value: `{SSHA}${b64(Buffer.concat([createHash('sha1').update(password).update(salt).digest(), salt]))}` } };
    case 'md4':
      return { algorithm, hash: { value: await md4(Buffer.concat([salt, Buffer.from(password)])), encoding: 'hex' }, salt: { value: salt.toString('hex'), encoding: 'hex' } };
    case 'md5':
      return { algorithm, hash: { value: createHash('md5').update(password + 'pepper').digest('hex').toUpperCase(), encoding: 'hex' }, salt: { value: 'pepper', position: 'suffix' } };
    case 'sha1':
      return { algorithm, hash: { value: createHash('sha1').update(Buffer.concat([salt, Buffer.from(password)])).digest('base64'), encoding: 'base64' }, salt: { value: b64(salt), encoding: 'base64', position: 'prefix' } };
    case 'sha256':
      return { algorithm, hash: { value: createHash('sha256').update(password).digest('base64'), encoding: 'base64' } };
    case 'sha512':
      return { algorithm, hash: { value: createHash('sha512').update(Buffer.from(password, 'utf16le')).digest('hex'), encoding: 'hex' }, password: { encoding: 'utf16le' } };
    case 'pbkdf2':
      return { algorithm, hash: { value: `$pbkdf2-sha256$i=1000,l=32$${phc64(salt)}$${phc64(pbkdf2Sync(password, salt, 1000, 32, 'sha256'))}` } };
    case 'scrypt':
      return { algorithm, hash: { value: scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex'), encoding: 'hex' }, salt: { value: b64(salt), encoding: 'base64' }, keylen: 32, cost: 1024 };
    default:
      throw new Error(algorithm);
  }
}

/** Firebase's published example (github.com/firebase/scrypt README): this hash is of the password "user1password". */
const FIREBASE = {
  password: 'user1password',
  hash: {
    algorithm: 'firebase_scrypt',
    hash: {
      value: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      encoding: 'base64',
      key: { value: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==', encoding: 'base64' },
    },
    salt: { value: '42xEC+ixf3L2lw==', encoding: 'base64' },
    salt_separator: { value: 'Bw==', encoding: 'base64' },
    rounds: 8,
    mem_cost: 14,
  },
};

const ALGORITHMS = ['argon2', 'bcrypt', 'firebase_scrypt', 'hmac', 'ldap', 'md4', 'md5', 'pbkdf2', 'scrypt', 'sha1', 'sha256', 'sha512'] as const;

function managementClient(server: TestServer): ManagementClient {
  const domain = new URL(server.url).host;
  const rewrite: typeof fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return fetch(url.replace(`https://${domain}`, server.url), init);
  };
  return new ManagementClient({ domain, clientId: server.admin.client_id, clientSecret: server.admin.client_secret, audience: `${server.url}/api/v2/`, fetch: rewrite });
}

async function finished(client: ManagementClient, id: string): Promise<Json> {
  for (let i = 0; i < 1200; i++) {
    const job = (await client.jobs.get(id)) as Json;
    if (job.status === 'completed' || job.status === 'failed') return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

function codeRequest(clientId: string): Record<string, string> {
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  return { client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' };
}

describe('jobs through auth0@7 ManagementClient', () => {
  let server: TestServer;
  let client: ManagementClient;
  let connectionId: string;
  let appId: string;
  const passwords = new Map<string, string>();

  const storedHash = async (email: string) => {
    const { store, bootstrap } = server.server.prepared;
    const connection = (await findConnectionByName(store.db, bootstrap!.tenant.id, DATABASE_CONNECTION_NAME))!;
    return (await findUserInConnection(store.db, connection.id, { email }))!.password_hash!;
  };
  const realmLogin = (username: string, password: string) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: PASSWORD_REALM_GRANT, client_id: appId, realm: DATABASE_CONNECTION_NAME, username, password, scope: 'openid' }),
    });

  beforeAll(async () => {
    server = await startTestServer();
    client = managementClient(server);
    const connections = (await (await management(server, 'GET', '/connections')).json()) as { id: string; name: string }[];
    connectionId = connections.find((c) => c.name === DATABASE_CONNECTION_NAME)!.id;
    appId = (await createApp(server, { grant_types: ['authorization_code', PASSWORD_REALM_GRANT] })).client_id;
    // Firebase's example password is a plain one; the breach check is not what this suite tests.
    expect((await management(server, 'PATCH', '/attack-protection/breached-password-detection', { enabled: false })).status).toBe(200);
    // Three wrong passwords in a row block an identifier (from this IP).
    expect((await management(server, 'PATCH', '/attack-protection/brute-force-protection', { max_attempts: 3 })).status).toBe(200);

    const users: Json[] = [];
    for (const algorithm of ALGORITHMS) {
      for (const door of ['hosted', 'realm'] as const) {
        const email = `${door}-${algorithm.replace('_', '-')}@example.com`;
        const password = algorithm === 'firebase_scrypt' ? FIREBASE.password : `${algorithm} ${door} Pa55-${randomBytes(3).toString('hex')}`;
        passwords.set(email, password);
        const hash = algorithm === 'firebase_scrypt' ? FIREBASE.hash : await foreignHash(algorithm, password);
        // The realm user of bcrypt uses the reference's plain password_hash field.
        const user = algorithm === 'bcrypt' && door === 'realm' ? { password_hash: (hash.hash as Json).value } : { custom_password_hash: hash };
        users.push({ email, email_verified: true, given_name: algorithm, user_metadata: { door }, app_metadata: { algorithm }, ...user });
      }
    }
    users.splice(3, 0, { email: 'broken@example.com', custom_password_hash: { algorithm: 'sha256', hash: { value: 'too short', encoding: 'hex' } } });

    const created = await client.jobs.usersImports.create({
      users: new Blob([JSON.stringify(users)], { type: 'application/json' }),
      connection_id: connectionId,
      upsert: false,
      external_id: 'every-algorithm',
      send_completion_email: false,
    });
    expect(created).toMatchObject({ type: 'users_import', connection_id: connectionId, external_id: 'every-algorithm', id: expect.stringMatching(/^job_/) });
    const job = await finished(client, created.id);
    expect(job).toMatchObject({ status: 'completed', summary: { total: ALGORITHMS.length * 2 + 1, inserted: ALGORITHMS.length * 2, updated: 0, failed: 1 } });
    const errors = await client.jobs.errors.get(created.id);
    expect(errors).toEqual([
      {
        user: { email: 'broken@example.com', custom_password_hash: { algorithm: 'sha256', hash: { value: '*****', encoding: 'hex' } } },
        errors: [{ code: 'FORMAT', path: 'custom_password_hash.hash.value', message: expect.stringContaining('not valid hex') }],
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it.each(ALGORITHMS)('%s: the hosted login page logs the user in with the original password and stores argon2id', async (algorithm) => {
    const email = `hosted-${algorithm.replace('_', '-')}@example.com`;
    expect(await storedHash(email)).toMatch(/^\$import\$/);
    const landed = await logIn(server, new TestBrowser(), codeRequest(appId), { username: email, password: passwords.get(email)! });
    expect(landed.href.startsWith(CALLBACK)).toBe(true);
    expect(landed.searchParams.get('code')).toEqual(expect.any(String));
    expect(await storedHash(email)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it.each(ALGORITHMS)('%s: password-realm logs in with the original password; wrong ones fail and count towards brute force', async (algorithm) => {
    const email = `realm-${algorithm.replace('_', '-')}@example.com`;
    const password = passwords.get(email)!;
    for (let i = 0; i < 3; i++) {
      const wrong = await realmLogin(email, `${password}-wrong-${i}`);
      expect(wrong.status).toBe(403);
      expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    }
    // Three failures on the foreign hash blocked the identifier: even the right password is refused now.
    const blocked = await realmLogin(email, password);
    expect(blocked.status).toBe(429);
    expect(await blocked.json()).toMatchObject({ error: 'too_many_attempts' });
    expect(await storedHash(email)).toMatch(/^\$import\$/);
    expect((await management(server, 'DELETE', `/user-blocks?identifier=${encodeURIComponent(email)}`)).status).toBe(204);

    const ok = await realmLogin(email, password);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ access_token: expect.any(String), id_token: expect.any(String) });
    const upgraded = await storedHash(email);
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // And from now on with argon2id: the same password works, a wrong one does not.
    expect((await realmLogin(email, password)).status).toBe(200);
    expect((await realmLogin(email, `${password}!`)).status).toBe(403);
    expect(await storedHash(email)).toBe(upgraded);
  });

  it('an export of this tenant, imported into an empty tenant, gives the same users and metadata', async () => {
    const fields = ['user_id', 'email', 'email_verified', 'given_name', 'family_name', 'name', 'nickname', 'picture', 'blocked', 'app_metadata', 'user_metadata'].map((name) => ({ name }));
    const exportAll = async (from: ManagementClient): Promise<Json[]> => {
      const created = await from.jobs.usersExports.create({ format: 'json', fields });
      expect(created).toMatchObject({ type: 'users_export', format: 'json' });
      const job = await finished(from, created.id);
      expect(job.status).toBe('completed');
      const download = await fetch(job.location as string);
      expect(download.status).toBe(200);
      const text = gunzipSync(Buffer.from(await download.arrayBuffer())).toString('utf8');
      expect(text).not.toMatch(/\$argon2id\$|\$import\$|password/);
      return text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Json)
        .filter((u) => (u.user_id as string).startsWith('auth0|'))
        .sort((a, b) => (a.email as string).localeCompare(b.email as string));
    };
    const exported = await exportAll(client);
    expect(exported).toHaveLength(ALGORITHMS.length * 2);
    expect(exported.find((u) => u.email === 'realm-md5@example.com')).toMatchObject({ app_metadata: { algorithm: 'md5' }, user_metadata: { door: 'realm' }, given_name: 'md5' });

    const empty = await startTestServer();
    try {
      const other = managementClient(empty);
      const connections = (await (await management(empty, 'GET', '/connections')).json()) as { id: string; name: string }[];
      // The reference's way from an export to an import file: a JSON array, user ids without their `auth0|`.
      const file = exported.map((u) => ({ ...u, user_id: (u.user_id as string).slice('auth0|'.length) }));
      const created = await other.jobs.usersImports.create({
        users: Buffer.from(JSON.stringify(file)),
        connection_id: connections.find((c) => c.name === DATABASE_CONNECTION_NAME)!.id,
      });
      const job = await finished(other, created.id);
      expect(job).toMatchObject({ status: 'completed', summary: { total: file.length, inserted: file.length, failed: 0 } });
      expect(await exportAll(other)).toEqual(exported);
    } finally {
      await empty.close();
    }
  });
});
