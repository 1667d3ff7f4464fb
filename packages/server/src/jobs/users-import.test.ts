/**
 * POST /api/v2/jobs/users-imports and the job it makes, over real HTTP on SQLite and PostgreSQL: a file's users
 * land with their profile, metadata and (sealed) hashes, and raise user.created in the outbox; a broken user is
 * refused with its errors while the others import; a file that is not a JSON array fails the job with a clear
 * message; bad requests are 4xx in the Management shape and leave no job behind; upsert semantics; the limit of
 * two unfinished imports per tenant; scopes.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { listEvents } from '../events/outbox.js';
import { findConnectionByName } from '../store/connections.js';
import { findUserInConnection } from '../store/users.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { jobsApi } from '../test-support/jobs.js';
import { createGuardrails, generate } from 'otplib';
import { createApp, readForm, TestBrowser } from '../test-support/sign-in.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { isForeignHash } from './password-hashes/index.js';

type Json = Record<string, unknown>;
const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

describe.each(dialects)('user import jobs on %s', (dialect) => {
  let server: TestServer;
  let token: string;
  let connectionId: string;
  let clientId: string;

  const { call: api, upload, finished } = jobsApi(
    () => server,
    () => token,
    () => connectionId,
  );

  async function importUsers(users: unknown, fields: Record<string, string> = {}): Promise<Json> {
    const res = await upload(typeof users === 'string' ? users : JSON.stringify(users), fields);
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(202);
    return finished(body.id as string);
  }

  const login = (username: string, password: string) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: PASSWORD_REALM_GRANT, client_id: clientId, realm: DATABASE_CONNECTION_NAME, username, password, scope: 'openid' }),
    });

  const stored = async (email: string) => {
    const { store } = server.server.prepared;
    const connection = (await findConnectionByName(store.db, server.server.prepared.bootstrap!.tenant.id, DATABASE_CONNECTION_NAME))!;
    return findUserInConnection(store.db, connection.id, { email });
  };

  const jobCount = async () => (await server.server.prepared.store.db.selectFrom('jobs').select('id').execute()).length;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const connections = (await (await api('GET', '/connections')).json()) as { id: string; name: string }[];
    connectionId = connections.find((c) => c.name === DATABASE_CONNECTION_NAME)!.id;
    clientId = (await createApp(server, { grant_types: [PASSWORD_REALM_GRANT] })).client_id;
    // Some test passwords ("hello", the reference's bcrypt example) are in the breach corpus; here they must log in.
    expect((await api('PATCH', '/attack-protection/breached-password-detection', { enabled: false })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('imports each user with its profile and metadata, refuses the broken one with its errors, and raises user.created', async () => {
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const before = (await listEvents(server.server.prepared.store.db, tenantId, { type: 'user.created' })).length;
    const job = await importUsers(
      [
        {
          email: 'Ada@Example.com',
          email_verified: true,
          user_id: 'ada-1815',
          given_name: 'Ada',
          family_name: 'Lovelace',
          name: 'Ada Lovelace',
          nickname: 'ada',
          picture: 'https://example.com/ada.png',
          app_metadata: { plan: 'gold', roles: ['admin'] },
          user_metadata: { theme: 'dark' },
          custom_password_hash: { algorithm: 'md5', hash: { value: md5('analytical engine'), encoding: 'hex' } },
        },
        { email: 'not an email', custom_password_hash: { algorithm: 'md5', hash: { value: md5('x'), encoding: 'hex' } } },
        { email: 'grace@example.com', blocked: true },
        { email: 'hopper@example.com', password_hash: '$2b$10$nFguVi9LsCAcvTZFKQlRKeLVydo8ETv483lkNsSFI/Wl1Rz1Ypo1K' },
      ],
      { external_id: 'migration-1' },
    );
    expect(job).toMatchObject({
      type: 'users_import',
      status: 'completed',
      connection_id: connectionId,
      connection: DATABASE_CONNECTION_NAME,
      external_id: 'migration-1',
      upsert: false,
      send_completion_email: true,
      percentage_done: 100,
      summary: { total: 4, inserted: 3, updated: 0, failed: 1 },
    });

    const ada = (await (await api('GET', `/users/${encodeURIComponent('auth0|ada-1815')}`)).json()) as Json;
    expect(ada).toMatchObject({
      user_id: 'auth0|ada-1815',
      email: 'ada@example.com',
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Lovelace',
      name: 'Ada Lovelace',
      nickname: 'ada',
      picture: 'https://example.com/ada.png',
      app_metadata: { plan: 'gold', roles: ['admin'] },
      user_metadata: { theme: 'dark' },
      blocked: false,
    });
    expect(JSON.stringify(ada)).not.toMatch(/password|hash|\$import\$/);
    expect(isForeignHash((await stored('ada@example.com'))!.password_hash!)).toBe(true);
    expect((await stored('grace@example.com'))).toMatchObject({ blocked: true, password_hash: null });

    const errors = (await (await api('GET', `/jobs/${job.id as string}/errors`)).json()) as { user: Json; errors: Json[] }[];
    expect(errors).toEqual([
      {
        user: { email: 'not an email', custom_password_hash: { algorithm: 'md5', hash: { value: '*****', encoding: 'hex' } } },
        errors: [{ code: 'FORMAT', path: 'email', message: expect.stringContaining('email') }],
      },
    ]);

    const created = (await listEvents(server.server.prepared.store.db, tenantId, { type: 'user.created' })).slice(before);
    expect(created.map((e) => e.data.object.email).sort()).toEqual(['ada@example.com', 'grace@example.com', 'hopper@example.com']);
    expect(created.find((e) => e.data.object.email === 'ada@example.com')!.data.object).toMatchObject({ user_id: 'auth0|ada-1815', app_metadata: { plan: 'gold', roles: ['admin'] } });
    expect(JSON.stringify(created)).not.toMatch(/\$import\$|\$2b\$/);

    // The imported passwords work (and a wrong one does not).
    expect((await login('ada@example.com', 'analytical engine')).status).toBe(200);
    expect((await login('hopper@example.com', 'hello')).status).toBe(200);
    expect((await login('hopper@example.com', 'hello!')).status).toBe(403);
  });

  it('fails the job, with a clear message, for a file that is not a JSON array or not JSON', async () => {
    const object = await importUsers('{"email":"a@example.com"}');
    expect(object).toMatchObject({ status: 'failed', status_details: expect.stringContaining('JSON array'), summary: { total: 0, inserted: 0 } });
    const broken = await importUsers('[{"email":"a@example.com"}, {"email": ');
    expect(broken).toMatchObject({ status: 'failed', status_details: expect.stringContaining('not valid JSON') });
    const trailing = await importUsers('[{"email":"trailing@example.com"}] []');
    expect(trailing).toMatchObject({ status: 'failed', status_details: expect.stringContaining('more after the closing ]') });
    // GET /errors of a job that failed as a whole answers the job and why.
    const errors = (await (await api('GET', `/jobs/${object.id as string}/errors`)).json()) as Json;
    expect(errors).toMatchObject({ id: object.id, status: 'failed', status_details: expect.stringContaining('JSON array') });
    expect(await stored('a@example.com')).toBeUndefined();
    expect(await stored('trailing@example.com')).toBeUndefined();
  });

  it('refuses bad requests in the Management shape and keeps no job of them', async () => {
    const jobsBefore = await jobCount();
    const expectError = async (res: Response, status: number, message: RegExp) => {
      const body = (await res.json()) as Json;
      expect({ status: res.status, body }).toMatchObject({ status, body: { statusCode: status, message: expect.stringMatching(message) } });
    };
    await expectError(await upload(''), 400, /must not be empty/);
    await expectError(await upload('  \n '), 400, /must not be empty/);
    const noConnection = new FormData();
    noConnection.append('users', new Blob(['[]']), 'users.json');
    await expectError(
      await fetch(`${server.url}/api/v2/jobs/users-imports`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: noConnection }),
      400,
      /connection_id/,
    );
    await expectError(await upload('[]', { connection_id: 'con_AAAAAAAAAAAAAAAA' }), 400, /connection does not exist/);
    await expectError(await upload('[]', { connection_id: 'nope' }), 400, /pattern/);
    await expectError(await upload('[]', { upsert: 'yes' }), 400, /upsert must be true or false/);
    await expectError(await upload('[]', { surprise: '1' }), 400, /unknown field surprise/);
    const email = ((await (await api('GET', '/connections')).json()) as { id: string; strategy: string }[]).find((c) => c.strategy === 'email')!;
    await expectError(await upload('[]', { connection_id: email.id }), 400, /database connection/);
    await expectError(await api('POST', '/jobs/users-imports', { users: [], connection_id: connectionId }), 415, /multipart\/form-data/);
    const noFile = new FormData();
    noFile.append('connection_id', connectionId);
    await expectError(await fetch(`${server.url}/api/v2/jobs/users-imports`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: noFile }), 400, /users/);
    // Scopes: read:users reads jobs but does not import.
    const reader = await managementToken(server, ['read:users']);
    await expectError(await upload('[]', {}, reader), 403, /create:users/);
    expect(await jobCount()).toBe(jobsBefore);
    await expectError(await api('GET', '/jobs/job_AAAAAAAAAAAAAAAA', undefined, reader), 404, /job does not exist/);
    await expectError(await api('GET', '/jobs/not-a-job', undefined, reader), 400, /pattern/);
  });

  it('refuses a file above GATEHOUSE_IMPORT_MAX_BYTES with a 413 and keeps nothing of it', async () => {
    const small = await startTestServer({ dialect, env: { GATEHOUSE_IMPORT_MAX_BYTES: '2048' } });
    try {
      const smallToken = await managementToken(small);
      const connections = (await (await fetch(`${small.url}/api/v2/connections`, { headers: { authorization: `Bearer ${smallToken}` } })).json()) as { id: string; name: string }[];
      const form = new FormData();
      const users = Array.from({ length: 100 }, (_, i) => ({ email: `big-${i}@example.com` }));
      form.append('users', new Blob([JSON.stringify(users)]), 'users.json');
      form.append('connection_id', connections.find((c) => c.name === DATABASE_CONNECTION_NAME)!.id);
      const res = await fetch(`${small.url}/api/v2/jobs/users-imports`, { method: 'POST', headers: { authorization: `Bearer ${smallToken}` }, body: form });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ statusCode: 413, message: expect.stringContaining('2048') });
      const db = small.server.prepared.store.db;
      expect(await db.selectFrom('jobs').select('id').execute()).toEqual([]);
      expect(await db.selectFrom('job_import_batches').select('job_id').execute()).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('imports a file of many batches (several to a transaction on SQLite) with each user once, and a user repeated in a later batch meets the earlier one', async () => {
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const db = server.server.prepared.store.db;
    const before = (await listEvents(db, tenantId, { type: 'user.created' })).length;
    const users = Array.from({ length: 1150 }, (_, i) => ({ email: `many-${i === 1120 ? 5 : i}@example.com`, user_metadata: { i } }));
    const job = await importUsers(users);
    expect(job).toMatchObject({ status: 'completed', summary: { total: 1150, inserted: 1149, updated: 0, failed: 1 } });
    const errors = (await (await api('GET', `/jobs/${job.id as string}/errors`)).json()) as { user: Json; errors: Json[] }[];
    expect(errors).toEqual([{ user: { email: 'many-5@example.com', user_metadata: { i: 1120 } }, errors: [expect.objectContaining({ code: 'CONFLICT_EMAIL' })] }]);
    const rows = await db.selectFrom('users').select(['email', 'user_metadata']).where('email', 'like', 'many-%').execute();
    expect(rows).toHaveLength(1149);
    expect(rows.find((r) => r.email === 'many-5@example.com')?.user_metadata).toBe(JSON.stringify({ i: 5 }));
    expect((await listEvents(db, tenantId, { type: 'user.created' })).length - before).toBe(1149);
    expect(await db.selectFrom('job_import_batches').select('job_id').execute()).toEqual([]);
  });

  it('upsert updates metadata and leaves the password alone unless the file carries a hash, and never replaces one set here', async () => {
    const first = await importUsers([
      { email: 'turing@example.com', app_metadata: { team: 'hut8' }, user_metadata: { tea: 'yes' }, custom_password_hash: { algorithm: 'md5', hash: { value: md5('enigma'), encoding: 'hex' } } },
    ]);
    expect(first.summary).toEqual({ total: 1, inserted: 1, updated: 0, failed: 0 });

    // Without upsert the same email is a conflict.
    const again = await importUsers([{ email: 'turing@example.com', user_metadata: { tea: 'no' } }]);
    expect(again.summary).toEqual({ total: 1, inserted: 0, updated: 0, failed: 1 });
    const conflict = (await (await api('GET', `/jobs/${again.id as string}/errors`)).json()) as { errors: Json[] }[];
    expect(conflict[0]!.errors).toEqual([{ code: 'CONFLICT_EMAIL', path: 'email', message: expect.stringContaining('already exists') }]);

    // Upsert without a hash: metadata replaced whole, names merged in, password untouched.
    const metadataOnly = await importUsers([{ email: 'turing@example.com', given_name: 'Alan', user_metadata: { biscuits: 2 } }], { upsert: 'true' });
    expect(metadataOnly).toMatchObject({ upsert: true, summary: { total: 1, inserted: 0, updated: 1, failed: 0 } });
    let user = (await stored('turing@example.com'))!;
    expect(user).toMatchObject({ user_metadata: { biscuits: 2 }, app_metadata: { team: 'hut8' }, profile: { given_name: 'Alan' } });
    expect((await login('turing@example.com', 'enigma')).status).toBe(200);

    // The login above replaced the imported hash with ours: an upsert with a hash no longer replaces it.
    user = (await stored('turing@example.com'))!;
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    await importUsers([{ email: 'turing@example.com', custom_password_hash: { algorithm: 'md5', hash: { value: md5('bombe'), encoding: 'hex' } } }], { upsert: 'true' });
    expect((await login('turing@example.com', 'enigma')).status).toBe(200);
    expect((await login('turing@example.com', 'bombe')).status).toBe(403);

    // A user who never logged in here gets the newer imported hash.
    await importUsers([{ email: 'joan@example.com', custom_password_hash: { algorithm: 'md5', hash: { value: md5('crossword'), encoding: 'hex' } } }]);
    const updated = await importUsers([{ email: 'joan@example.com', custom_password_hash: { algorithm: 'sha1', hash: { value: createHash('sha1').update('cryptic').digest('base64'), encoding: 'base64' } } }], {
      upsert: 'true',
    });
    expect(updated.summary).toEqual({ total: 1, inserted: 0, updated: 1, failed: 0 });
    expect((await login('joan@example.com', 'crossword')).status).toBe(403);
    expect((await login('joan@example.com', 'cryptic')).status).toBe(200);
    user = (await stored('joan@example.com'))!;
    expect(isForeignHash(user.password_hash!)).toBe(false);
  });

  it('refuses a user twice in one file, and a taken user id, naming the user', async () => {
    const job = await importUsers([
      { email: 'twin@example.com' },
      { email: 'TWIN@example.com' },
      { email: 'id-taken@example.com', user_id: 'ada-1815' },
      { email: 'fine@example.com' },
    ]);
    expect(job.summary).toEqual({ total: 4, inserted: 2, updated: 0, failed: 2 });
    const errors = (await (await api('GET', `/jobs/${job.id as string}/errors`)).json()) as { user: Json; errors: Json[] }[];
    expect(errors.map((e) => [e.user.email, e.errors[0]!.code])).toEqual([
      ['TWIN@example.com', 'DUPLICATED_USER'],
      ['id-taken@example.com', 'DUPLICATED_USER'],
    ]);
  });

  it("imports a TOTP factor that the person's authenticator app keeps answering, and refuses factors this server has not", async () => {
    // An 80-bit secret, as Google Authenticator long issued (the reference's own example).
    const secret = 'JBTWY3DPEHPK3PNP';
    const job = await importUsers([
      { email: 'otp@example.com', custom_password_hash: { algorithm: 'md5', hash: { value: md5('second factor'), encoding: 'hex' } }, mfa_factors: [{ totp: { secret } }] },
      { email: 'sms@example.com', mfa_factors: [{ phone: { value: '+12125550001' } }] },
      { email: 'mail@example.com', mfa_factors: [{ email: { value: 'mail@example.com' } }] },
      { email: 'short@example.com', mfa_factors: [{ totp: { secret: 'JBTWY3DPEHPK' } }] },
      { email: 'twice@example.com', mfa_factors: [{ totp: { secret } }, { totp: { secret: 'KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ' } }] },
    ]);
    expect(job.summary).toEqual({ total: 5, inserted: 1, updated: 0, failed: 4 });
    const errors = (await (await api('GET', `/jobs/${job.id as string}/errors`)).json()) as { user: Json; errors: Json[] }[];
    expect(errors.map((e) => [e.user.email, e.errors[0]!.code, e.errors[0]!.path])).toEqual([
      ['sms@example.com', 'MFA_FACTORS_FAILED', 'mfa_factors[0]'],
      ['mail@example.com', 'MFA_FACTORS_FAILED', 'mfa_factors[0]'],
      ['short@example.com', 'MFA_FACTORS_FAILED', 'mfa_factors[0].totp.secret'],
      ['twice@example.com', 'MFA_FACTORS_FAILED', 'mfa_factors'],
    ]);
    // The secret is never echoed back in the job's errors.
    expect(JSON.stringify(errors)).not.toContain(secret);

    const userId = (await stored('otp@example.com'))!.user_id;
    const methods = async () => (await (await api('GET', `/users/${encodeURIComponent(userId)}/authentication-methods`)).json()) as Json[];
    expect((await methods()).map((m) => [m.type, m.confirmed])).toEqual([['totp', true]]);
    // An upsert carrying another secret leaves the enrollment the user already has.
    await importUsers([{ email: 'otp@example.com', mfa_factors: [{ totp: { secret: 'KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ' } }] }], { upsert: 'true' });
    expect((await methods()).length).toBe(1);

    expect((await api('PUT', '/guardian/factors/otp', { enabled: true })).status).toBe(200);
    expect((await api('PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    try {
      const grant = (await login('otp@example.com', 'second factor')) as Response;
      expect({ status: grant.status, error: ((await grant.json()) as Json).error }).toEqual({ status: 403, error: 'mfa_required' });

      // The hosted login asks for the code, and the code the app computes from the imported secret lets the person in.
      const app = await createApp(server);
      const http = new TestBrowser();
      const query = { client_id: app.client_id, redirect_uri: 'https://app.example/callback', response_type: 'code', scope: 'openid', state: 's1', code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'), code_challenge_method: 'S256' };
      const start = await http.follow(server.url, await http.get(`${server.url}/authorize?${new URLSearchParams(query)}`));
      if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
      const form = readForm(await start.text(), server.url);
      const mfa = await http.submitExpectingPage(form.action, { ...form.fields, username: 'otp@example.com', password: 'second factor' });
      expect(new URL(mfa.url).pathname).toBe('/u/mfa');
      const challenge = readForm(await mfa.text(), server.url);
      const code = await generate({ secret, guardrails: createGuardrails({ MIN_SECRET_BYTES: 10 }) });
      const done = await http.submit(challenge.action, { ...challenge.fields, code });
      expect(done instanceof URL ? `${done.origin}${done.pathname}` : done.status).toBe('https://app.example/callback');
      expect((done as URL).searchParams.get('code')).toBeTruthy();
    } finally {
      expect((await api('PUT', '/guardian/policies', [])).status).toBe(200);
    }
  });

  it('allows two unfinished imports per tenant and answers 429 to a third', async () => {
    const db = server.server.prepared.store.db;
    const tenantId = server.server.prepared.bootstrap!.tenant.id;
    const held = ['job_HeldHeldHeld0001', 'job_HeldHeldHeld0002'];
    // Two imports another process is working on (leased far ahead, so this server's runner leaves them alone).
    for (const id of held) {
      await db
        .insertInto('jobs')
        .values({ id, tenant_id: tenantId, type: 'users_import', status: 'processing', connection_id: connectionId, external_id: null, options: '{}', source_digest: null, total: 1, processed: 0, inserted: 0, updated: 0, failed: 0, cursor: null, status_details: null, download_key_sealed: null, lease_id: 'elsewhere', lease_until: Date.now() + 3_600_000, started_at: Date.now(), completed_at: null, created_at: Date.now(), cli_report_pending: 0 })
        .execute();
    }
    try {
      const res = await upload('[{"email":"third@example.com"}]');
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ statusCode: 429, message: 'There are 2 active import users jobs, please wait until some of them are finished and try again' });
      // An export is a different job: still allowed.
      expect((await api('POST', '/jobs/users-exports', { format: 'json', limit: 1 })).status).toBe(200);
    } finally {
      await db.deleteFrom('jobs').where('id', 'in', held).execute();
    }
  });
});
