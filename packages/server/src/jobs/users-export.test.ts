/**
 * POST /api/v2/jobs/users-exports over real HTTP on SQLite and PostgreSQL: the job's `location` downloads a gzip
 * file (many gzip members when it spans parts) of NDJSON or CSV with the fields asked for, escaped against CSV
 * injection, never a password hash; `limit` and `connection_id`; the signed link refuses a tampered or expired
 * signature; CSV refuses whole objects. And POST /api/v2/jobs/verification-email.
 */
import { createHmac } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBody } from '../messaging/email-outbox.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { jobsApi } from '../test-support/jobs.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { EXPORT_PAGE } from './users-export.js';

type Json = Record<string, unknown>;
const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('user export jobs on %s', (dialect) => {
  let server: TestServer;
  let token: string;
  let connectionId: string;

  const { call: api, upload, finished } = jobsApi(
    () => server,
    () => token,
    () => connectionId,
  );

  async function exportUsers(body: Json): Promise<{ job: Json; text: string }> {
    const res = await api('POST', '/jobs/users-exports', body);
    const created = (await res.json()) as Json;
    expect(res.status, JSON.stringify(created)).toBe(200);
    expect(created).toMatchObject({ type: 'users_export', status: 'pending' });
    const job = await finished(created.id as string);
    expect(job.status).toBe('completed');
    const download = await fetch(job.location as string);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    expect(download.headers.get('content-disposition')).toMatch(/attachment; filename=".+\.(json|csv)\.gz"/);
    return { job, text: gunzipSync(Buffer.from(await download.arrayBuffer())).toString('utf8') };
  }

  async function importUsers(users: unknown[]): Promise<void> {
    const res = await upload(JSON.stringify(users));
    const job = await finished(((await res.json()) as Json).id as string);
    expect(job.status).toBe('completed');
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    token = await managementToken(server);
    const connections = (await (await api('GET', '/connections')).json()) as { id: string; name: string }[];
    connectionId = connections.find((c) => c.name === DATABASE_CONNECTION_NAME)!.id;
    await importUsers([
      {
        email: 'ada@example.com',
        email_verified: true,
        user_id: 'ada',
        name: 'Ada "the Countess" Lovelace',
        app_metadata: { plan: 'gold' },
        user_metadata: { theme: 'dark', address: { city: 'London' } },
        custom_password_hash: { algorithm: 'sha1', hash: { value: 'a9993e364706816aba3e25717850c26c9cd0d89d', encoding: 'hex' } },
      },
      { email: 'formula@example.com', user_id: 'formula', name: '=HYPERLINK("https://evil.example")', password_hash: '$2b$10$nFguVi9LsCAcvTZFKQlRKeLVydo8ETv483lkNsSFI/Wl1Rz1Ypo1K' },
      ...Array.from({ length: EXPORT_PAGE + 300 }, (_, i) => ({ email: `bulk-${String(i).padStart(5, '0')}@example.com`, user_id: `bulk-${String(i).padStart(5, '0')}` })),
    ]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('exports every user as NDJSON with the default fields, across parts, and no password hash', async () => {
    const { job, text } = await exportUsers({ format: 'json' });
    const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Json);
    expect(lines).toHaveLength(EXPORT_PAGE + 302);
    expect(job).toMatchObject({ format: 'json', percentage_done: 100, fields: expect.arrayContaining([{ name: 'email' }, { name: 'app_metadata' }]) });
    const ada = lines.find((l) => l.email === 'ada@example.com')!;
    expect(ada).toMatchObject({
      user_id: 'auth0|ada',
      email_verified: true,
      name: 'Ada "the Countess" Lovelace',
      app_metadata: { plan: 'gold' },
      user_metadata: { theme: 'dark', address: { city: 'London' } },
      identities: [{ connection: DATABASE_CONNECTION_NAME, provider: 'auth0', user_id: 'ada', isSocial: false }],
      logins_count: 0,
      blocked: false,
    });
    expect(text).not.toMatch(/password|\$import\$|\$2b\$|a9993e36/);
    // The ids are in order and none twice, though written in two parts.
    const ids = lines.map((l) => l.user_id as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('exports CSV with the fields asked for, renamed by export_as, escaped against formula injection', async () => {
    const { text } = await exportUsers({
      format: 'csv',
      connection_id: connectionId,
      limit: 2,
      fields: [{ name: 'user_id' }, { name: 'email', export_as: 'Email address' }, { name: 'name' }, { name: 'created_at' }, { name: 'email_verified' }, { name: 'user_metadata.address' }, { name: 'identities[0].connection', export_as: 'provider' }],
    });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('"user_id","Email address","name","created_at","email_verified","user_metadata.address","provider"');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(
      /^"'auth0\|ada","'ada@example\.com","'Ada ""the Countess"" Lovelace",\d{4}-\d{2}-\d{2}T[\d:.]+Z,true,"'\{""city"":""London""\}","'Username-Password-Authentication"$/,
    );
    expect(lines[2]).toBe(`"'auth0|bulk-00000","'bulk-00000@example.com","'bulk-00000@example.com",${lines[2]!.split(',')[3]},false,,"'Username-Password-Authentication"`);
    const formula = await exportUsers({ format: 'csv', fields: [{ name: 'name' }], limit: 10_000 });
    expect(formula.text).toContain(`"'=HYPERLINK(""https://evil.example"")"`);
  });

  it('refuses what a CSV export cannot hold, and unknown connections', async () => {
    for (const [body, message] of [
      [{ format: 'csv', fields: [{ name: 'app_metadata' }] }, /single object/],
      [{ format: 'csv', fields: Array.from({ length: 31 }, (_, i) => ({ name: `user_metadata.f${i}` })) }, /at most 30 fields/],
      [{ format: 'json', fields: [{ name: 'email' }, { name: 'name', export_as: 'email' }] }, /two fields/],
      [{ connection_id: 'con_AAAAAAAAAAAAAAAA' }, /connection does not exist/],
      [{ format: 'xml' }, /format/],
      [{ limit: 0 }, /limit/],
      [{ surprise: true }, /surprise|additional/],
    ] as const) {
      const res = await api('POST', '/jobs/users-exports', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as Json).message).toMatch(message);
    }
    const writer = await managementToken(server, ['create:users']);
    expect((await api('POST', '/jobs/users-exports', {}, writer)).status).toBe(403);
  });

  it('the download link is signed and expires', async () => {
    const { job } = await exportUsers({ format: 'json', limit: 1 });
    const location = new URL(job.location as string);
    expect(location.pathname).toMatch(new RegExp(`^/jobs/${job.id as string}/[^/]+\\.json\\.gz$`));
    const expires = Number(location.searchParams.get('expires'));
    expect(expires * 1000 - Date.now()).toBeGreaterThan(30_000);
    expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(61_000);

    const tampered = new URL(location);
    tampered.searchParams.set('signature', `${location.searchParams.get('signature')!.slice(0, -2)}AA`);
    expect((await fetch(tampered)).status).toBe(403);
    const later = new URL(location);
    later.searchParams.set('expires', String(expires + 3600));
    expect((await fetch(later)).status).toBe(403);

    // A genuine signature whose time is past: signed with the job's own key, as the server would have.
    const { store, sealer } = server.server.prepared;
    const row = await store.db.selectFrom('jobs').select('download_key_sealed').where('id', '=', job.id as string).executeTakeFirstOrThrow();
    const key = sealer.unseal(row.download_key_sealed!, `job_download:${job.id as string}`);
    const past = Math.floor(Date.now() / 1000) - 5;
    const expired = new URL(location);
    expired.searchParams.set('expires', String(past));
    expired.searchParams.set('signature', createHmac('sha256', key).update(`${job.id as string}:${past}`).digest('base64url'));
    const refused = await fetch(expired);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'access_denied', error_description: expect.stringContaining('expired') });

    const wrongFile = new URL(location);
    wrongFile.pathname = wrongFile.pathname.replace(/[^/]+$/, 'other.json.gz');
    expect((await fetch(wrongFile)).status).toBe(404);
  });

  it('sends a verification email as a completed job', async () => {
    const user = (await (await api('POST', '/users', { connection: DATABASE_CONNECTION_NAME, email: 'verify-me@example.com', password: 'Verif1cation-Emails!', verify_email: false })).json()) as Json;
    const res = await api('POST', '/jobs/verification-email', { user_id: user.user_id });
    const job = (await res.json()) as Json;
    expect(res.status).toBe(201);
    expect(job).toMatchObject({ type: 'verification_email', status: 'completed', id: expect.stringMatching(/^job_[A-Za-z0-9]{16}$/) });
    expect(await (await api('GET', `/jobs/${job.id as string}`)).json()).toMatchObject({ id: job.id, status: 'completed' });
    const { store, sealer } = server.server.prepared;
    const mail = await store.db.selectFrom('email_outbox').select(['id', 'body_sealed', 'subject']).where('recipient', '=', 'verify-me@example.com').execute();
    expect(mail).toHaveLength(1);
    expect(openBody(sealer, mail[0]!)!.text).toMatch(/\/u\/email-verification\?ticket=/);

    expect((await api('POST', '/jobs/verification-email', { user_id: 'auth0|nobody' })).status).toBe(404);
    expect((await api('POST', '/jobs/verification-email', { user_id: 'auth0|ada' })).status).toBe(400); // already verified
    expect((await api('POST', '/jobs/verification-email', { user_id: user.user_id, client_id: 'nope' })).status).toBe(400);
    expect((await api('POST', '/jobs/verification-email', { user_id: user.user_id }, await managementToken(server, ['read:users']))).status).toBe(403);
  });
});
