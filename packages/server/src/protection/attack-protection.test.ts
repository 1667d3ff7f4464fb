/**
 * Attack protection through real HTTP, with the counters in memory and in Redis: the password-realm grant at
 * /oauth/token from chosen loopback addresses (127.0.0.x, so each test has its "own IP"), the hosted login page,
 * the Management API's user-blocks routes lifting blocks, and the signup checks exposed for the signup doors.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_REALM_GRANT } from '../auth-api/token/password-realm.js';
import { createClient, createUser, PASSWORD, type TestClient } from '../auth-api/user-tokens/testing.js';
import { hashPassword } from '../crypto/passwords.js';
import { openBody } from '../messaging/email-outbox.js';
import { findConnectionByName, type Connection } from '../store/connections.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { postJsonFrom } from '../test-support/client-ip.js';
import { redisAvailable, REDIS_URL } from '../test-support/services.js';
import { createApp, createUser as createUserOverApi, readForm, TestBrowser } from '../test-support/sign-in.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { AttackProtection } from './attack-protection.js';
import { checkBreachedPasswordAtPasswordChange, checkBreachedPasswordAtSignup, checkSignupThrottle } from './checks.js';
import { createRedisCounterStore } from './redis-counter-store.js';

type Json = Record<string, unknown>;

const stores: ('memory' | 'Redis')[] = ['memory', ...((await redisAvailable()) ? (['Redis'] as const) : [])];
if (stores.length === 1) {
  describe('attack protection over HTTP with Redis counters', () => {
    it.skip('Redis unreachable: skipped (see the notice above)', () => undefined);
  });
}

const BLOCKED = /blocked after multiple consecutive login attempts/;
const SUSPICIOUS = /suspicious login behavior/;

describe.each(stores)('attack protection over HTTP (counters in %s)', (store) => {
  let server: TestServer;
  let app: TestClient;
  let token: string;

  const postFrom = (localAddress: string, path: string, body: Json) => postJsonFrom(localAddress, server.url, path, body);

  const login = (ip: string, username: string, password: string) =>
    postFrom(ip, '/oauth/token', { grant_type: PASSWORD_REALM_GRANT, ...app.auth, realm: DATABASE_CONNECTION_NAME, username, password, scope: 'openid' });

  async function failTimes(ip: string, username: string, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const res = await login(ip, username, `wrong password ${i}`);
      expect(res, `failure ${i + 1}`).toMatchObject({ status: 403, body: { error: 'invalid_grant' } });
    }
  }

  async function management(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  }

  const blocksOf = async (identifier: string) => (await management('GET', `/user-blocks?identifier=${encodeURIComponent(identifier)}`)).body;
  const databaseConnection = async (): Promise<Connection> =>
    (await findConnectionByName(server.server.prepared.store.db, server.server.prepared.bootstrap!.tenant.id, DATABASE_CONNECTION_NAME))!;

  beforeAll(async () => {
    server = await startTestServer(store === 'Redis' ? { env: { REDIS_URL } } : {});
    expect(server.server.services.attackProtection.counters.kind).toBe(store === 'Redis' ? 'redis' : 'memory');
    app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: [PASSWORD_REALM_GRANT] });
    token = await managementToken(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses the 11th attempt from one IP with too_many_attempts, even with the right password, while another IP logs in', async () => {
    const user = await createUser(server);
    await failTimes('127.0.0.2', user.email!, 10);
    const refused = await login('127.0.0.2', user.email!, PASSWORD);
    expect(refused).toMatchObject({ status: 429, body: { error: 'too_many_attempts', error_description: expect.stringMatching(BLOCKED) } });
    expect((await login('127.0.0.2', user.email!.toUpperCase(), 'still wrong')).status).toBe(429);
    const elsewhere = await login('127.0.0.3', user.email!, PASSWORD);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.access_token).toEqual(expect.any(String));

    expect(await blocksOf(user.email!)).toEqual({ blocked_for: [{ identifier: user.email, ip: '127.0.0.2' }] });
    expect((await management('GET', `/user-blocks/${encodeURIComponent(user.user_id)}`)).body).toEqual({ blocked_for: [{ identifier: user.email, ip: '127.0.0.2' }] });
    expect((await management('DELETE', `/user-blocks?identifier=${encodeURIComponent(user.email!)}`)).status).toBe(204);
    expect(await blocksOf(user.email!)).toEqual({ blocked_for: [] });
    expect((await login('127.0.0.2', user.email!, PASSWORD)).status).toBe(200);
  });

  it('emails the blocked user a notice whose link lifts the block once, and refuses tampered links', async () => {
    const user = await createUser(server);
    await failTimes('127.0.0.17', user.email!, 10);
    expect((await login('127.0.0.17', user.email!, PASSWORD)).status).toBe(429);
    await server.server.services.attackProtection.settled();
    const { store, sealer } = server.server.prepared;
    const rows = await store.db.selectFrom('email_outbox').select(['id', 'body_sealed', 'subject']).where('recipient', '=', user.email!).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.subject).toMatch(/has been blocked/);
    const body = openBody(sealer, rows[0]!)!;
    expect(body.text).toContain('127.0.0.17');
    const link = /(http\S+\/u\/unblock\?ticket=\S+)/.exec(body.text)?.[1];
    expect(link).toBeDefined();
    expect(body.html).toContain(link!.replace(/&/g, '&amp;'));
    const ticket = new URL(link!).searchParams.get('ticket')!;

    for (const bad of [ticket.slice(0, -2) + (ticket.endsWith('AA') ? 'BB' : 'AA'), 'v1.x.y.z', '', 'a'.repeat(3000)]) {
      const res = await fetch(`${server.url}/u/unblock?ticket=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('This link does not work');
    }
    expect((await login('127.0.0.17', user.email!, PASSWORD)).status).toBe(429);
    const unblocked = await fetch(`${server.url}/u/unblock?ticket=${encodeURIComponent(ticket)}`);
    expect(unblocked.status).toBe(200);
    expect(await unblocked.text()).toContain('Your account is unblocked');
    expect((await login('127.0.0.17', user.email!, PASSWORD)).status).toBe(200);
    expect((await fetch(`${server.url}/u/unblock?ticket=${encodeURIComponent(ticket)}`)).status).toBe(400); // single use
  });

  it('words the notice with the tenant’s blocked_account template, sends the link’s outcome to its resultUrl, and sends nothing while it is disabled', async () => {
    const saved = await management('PUT', '/email-templates/blocked_account', {
      syntax: 'liquid',
      enabled: true,
      subject: '{{ friendly_name }}: {{ user.email }} is locked',
      body: '<p>Locked, {{ user.email }}.</p><p><a href="{{ url }}">Let me back in</a></p>',
      resultUrl: 'https://app.example/unblocked',
    });
    expect(saved.status).toBe(200);
    expect((await management('PATCH', '/email-templates/blocked_account', { urlLifetimeInSeconds: 600 })).status).toBe(400);
    try {
      const user = await createUser(server);
      await failTimes('127.0.0.21', user.email!, 10);
      await server.server.services.attackProtection.settled();
      const { store, sealer } = server.server.prepared;
      const rows = await store.db.selectFrom('email_outbox').select(['id', 'body_sealed', 'subject']).where('recipient', '=', user.email!).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.subject).toMatch(new RegExp(`: ${user.email!.replace(/[.+]/g, '\\$&')} is locked$`));
      const body = openBody(sealer, rows[0]!)!;
      expect(body.html).toContain(`<p>Locked, ${user.email}.</p>`);
      const link = /href="([^"]+\/u\/unblock\?ticket=[^"]+)"/.exec(body.html)?.[1]?.replace(/&amp;/g, '&');
      expect(link).toBeDefined();
      const lifted = await fetch(link!, { redirect: 'manual' });
      expect(lifted.status).toBe(302);
      const done = new URL(lifted.headers.get('location')!);
      expect(`${done.origin}${done.pathname}`).toBe('https://app.example/unblocked');
      expect(done.searchParams.get('success')).toBe('true');
      expect((await login('127.0.0.21', user.email!, PASSWORD)).status).toBe(200);
      const spent = new URL((await fetch(link!, { redirect: 'manual' })).headers.get('location')!);
      expect(spent.searchParams.get('success')).toBe('false');

      expect((await management('PATCH', '/email-templates/blocked_account', { enabled: false })).status).toBe(200);
      const quiet = await createUser(server);
      await failTimes('127.0.0.21', quiet.email!, 10);
      await server.server.services.attackProtection.settled();
      expect(await store.db.selectFrom('email_outbox').select('id').where('recipient', '=', quiet.email!).execute()).toHaveLength(0);
    } finally {
      await server.server.prepared.store.db.deleteFrom('email_templates').where('template', '=', 'blocked_account').execute();
    }
  });

  it('sends no notice without the user_notification shield, nor for an unknown identifier', async () => {
    await management('PATCH', '/attack-protection/brute-force-protection', { shields: ['block'] });
    try {
      const user = await createUser(server);
      await failTimes('127.0.0.18', user.email!, 10);
      expect((await login('127.0.0.18', user.email!, PASSWORD)).status).toBe(429);
      await server.server.services.attackProtection.settled();
      const db = server.server.prepared.store.db;
      expect(await db.selectFrom('email_outbox').select('id').where('recipient', '=', user.email!).execute()).toHaveLength(0);
    } finally {
      await management('PATCH', '/attack-protection/brute-force-protection', { shields: ['block', 'user_notification'] });
    }
    const ghost = `nobody-${randomBytes(4).toString('hex')}@example.com`;
    await failTimes('127.0.0.18', ghost, 10);
    await server.server.services.attackProtection.settled();
    const db = server.server.prepared.store.db;
    expect(await db.selectFrom('email_outbox').select('id').where('recipient', '=', ghost).execute()).toHaveLength(0);
  });

  it('writes one block when concurrent failures cross the limit together', async () => {
    const user = await createUser(server);
    await failTimes('127.0.0.19', user.email!, 8);
    const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => login('127.0.0.19', user.email!, `burst ${i}`)));
    expect(burst.every((r) => r.status === 403 || r.status === 429)).toBe(true);
    expect(await blocksOf(user.email!)).toEqual({ blocked_for: [{ identifier: user.email, ip: '127.0.0.19' }] });
  });

  // #19: the attempt is counted before the password is checked, so a burst cannot get more guesses verified
  // than the threshold. A 403 is a verified wrong password, a 200 a verified right one, a 429 a refusal before any hash.
  it('verifies exactly max_attempts of forty parallel wrong passwords, refuses the rest, and then the right one', async () => {
    const user = await createUser(server);
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => login('127.0.0.22', user.email!, `wrong ${i}`)));
    expect(burst.filter((r) => r.status === 403)).toHaveLength(10);
    expect(burst.filter((r) => r.status === 429 && BLOCKED.test(String(r.body.error_description)))).toHaveLength(30);
    expect(await login('127.0.0.22', user.email!, PASSWORD)).toMatchObject({ status: 429, body: { error: 'too_many_attempts' } });
    expect(await blocksOf(user.email!)).toEqual({ blocked_for: [{ identifier: user.email, ip: '127.0.0.22' }] });
  });

  it('lets the right password through a burst of forty wrong ones only when it was among the first max_attempts guesses', async () => {
    const user = await createUser(server);
    const burst = await Promise.all([...Array.from({ length: 40 }, (_, i) => login('127.0.0.23', user.email!, `wrong ${i}`)), login('127.0.0.23', user.email!, PASSWORD)]);
    const right = burst.at(-1)!;
    const verifiedWrong = burst.slice(0, -1).filter((r) => r.status === 403).length;
    expect(burst.every((r) => [200, 403, 429].includes(r.status))).toBe(true);
    if (right.status === 429) {
      expect(verifiedWrong).toBe(10);
    } else {
      // It took one of the first 10 places; its success reset the count (as a success always does), so the
      // guesses it overtook start a new streak: at most 9 before it and 10 after it were verified.
      expect(right.status).toBe(200);
      expect(verifiedWrong).toBeLessThanOrEqual(19);
    }
  });

  it('throttles a burst from one IP across many identifiers at the pre-login limit (suspicious_ip)', async () => {
    expect((await management('PATCH', '/attack-protection/suspicious-ip-throttling', { stage: { 'pre-login': { max_attempts: 5, rate: 3_600_000 } } })).status).toBe(200);
    try {
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => login('127.0.0.24', `spray-${i}-${randomBytes(3).toString('hex')}@example.com`, 'guess')));
      expect(burst.filter((r) => r.status === 403)).toHaveLength(5);
      expect(burst.filter((r) => r.status === 429 && SUSPICIOUS.test(String(r.body.error_description)))).toHaveLength(25);
      // Successful logins give their place back: the bucket stays at what the failures took.
      const user = await createUser(server);
      expect((await login('127.0.0.25', user.email!, PASSWORD)).status).toBe(200);
      expect((await login('127.0.0.25', user.email!, PASSWORD)).status).toBe(200);
      await failTimes('127.0.0.25', `other-${randomBytes(3).toString('hex')}@example.com`, 5);
      expect((await login('127.0.0.25', user.email!, PASSWORD)).status).toBe(429);
    } finally {
      await management('PATCH', '/attack-protection/suspicious-ip-throttling', { stage: { 'pre-login': { max_attempts: 100, rate: 864_000 } } });
    }
  });

  it('counts every spelling of one address as one identifier (case and Unicode width)', async () => {
    const user = await createUser(server);
    const [local, domain] = user.email!.split('@') as [string, string];
    const wide = (text: string) => [...text].map((c) => (c >= '!' && c <= '~' ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join('');
    const spellings = [user.email!, user.email!.toUpperCase(), `${wide(local)}@${domain}`, wide(user.email!)];
    for (let i = 0; i < 10; i++) {
      expect((await login('127.0.0.26', spellings[i % spellings.length]!, `wrong ${i}`)).status).toBe(403);
    }
    for (const spelling of spellings) expect((await login('127.0.0.26', spelling, PASSWORD)).status, spelling).toBe(429);
    expect(await blocksOf(user.email!)).toEqual({ blocked_for: [{ identifier: user.email, ip: '127.0.0.26' }] });
  });

  it('blocks at the next failure when an admin lowers max_attempts below a running streak', async () => {
    const user = await createUser(server);
    await failTimes('127.0.0.20', user.email!, 6);
    await management('PATCH', '/attack-protection/brute-force-protection', { max_attempts: 4 });
    try {
      await failTimes('127.0.0.20', user.email!, 1);
      expect((await login('127.0.0.20', user.email!, PASSWORD)).status).toBe(429);
    } finally {
      await management('PATCH', '/attack-protection/brute-force-protection', { max_attempts: 10 });
    }
  });

  it('counts consecutive failures only: a success resets the count', async () => {
    const user = await createUser(server);
    await failTimes('127.0.0.4', user.email!, 9);
    expect((await login('127.0.0.4', user.email!, PASSWORD)).status).toBe(200);
    await failTimes('127.0.0.4', user.email!, 9);
    expect((await login('127.0.0.4', user.email!, PASSWORD)).status).toBe(200);
    expect(await blocksOf(user.email!)).toEqual({ blocked_for: [] });
  });

  it('counts and blocks an unknown identifier exactly like a known one, so a block tells nothing about existence', async () => {
    const ghost = `ghost-${randomBytes(4).toString('hex')}@example.com`;
    await failTimes('127.0.0.5', ghost, 10);
    expect(await login('127.0.0.5', ghost, PASSWORD)).toMatchObject({ status: 429, body: { error: 'too_many_attempts' } });
    expect(await blocksOf(ghost)).toEqual({ blocked_for: [{ identifier: ghost, ip: '127.0.0.5' }] });
  });

  it('refuses a blocked identifier, known or unknown, before any password hash: its answer overtakes a queue of hashes', async () => {
    const user = await createUser(server);
    const ghost = `ghost-${randomBytes(4).toString('hex')}@example.com`;
    await failTimes('127.0.0.21', user.email!, 10);
    await failTimes('127.0.0.21', ghost, 10);
    for (const [blocked, queueIp] of [
      [user.email!, '127.0.0.27'],
      [ghost, '127.0.0.28'],
    ] as const) {
      // Sixty failing logins of unknown identifiers fill the password-hash queue (each checks the decoy hash;
      // hashes run a few at a time, in turn: crypto/passwords.ts) and each answers right after its hash. Once
      // five have answered, the others are long queued (the work before a hash is far shorter than a hash), so
      // an answer that needed a hash would come after all of them. No clock involved.
      const size = 60;
      let pending = size;
      let fiveDone!: () => void;
      const draining = new Promise<void>((resolve) => (fiveDone = resolve));
      const queue = Array.from({ length: size }, (_, i) =>
        login(queueIp, `queue-${i}-${randomBytes(3).toString('hex')}@example.com`, 'wrong password').finally(() => {
          if (--pending === size - 5) fiveDone();
        }),
      );
      await draining;
      const refused = await login('127.0.0.21', blocked, 'wrong password');
      const stillQueued = pending;
      expect((await Promise.all(queue)).every((r) => r.status === 403)).toBe(true);
      expect(refused).toMatchObject({ status: 429, body: { error: 'too_many_attempts' } });
      expect(stillQueued, blocked).toBeGreaterThan(0);
    }
  });

  it('in count_per_identifier mode blocks the identifier from every IP, until DELETE /user-blocks/{id}', async () => {
    expect((await management('PATCH', '/attack-protection/brute-force-protection', { mode: 'count_per_identifier', max_attempts: 3 })).status).toBe(200);
    try {
      const user = await createUser(server);
      await failTimes('127.0.0.6', user.email!, 1);
      await failTimes('127.0.0.7', user.email!, 2); // failures from different IPs add up in this mode
      expect(await login('127.0.0.8', user.email!, PASSWORD)).toMatchObject({ status: 429, body: { error: 'too_many_attempts' } });
      expect(await blocksOf(user.email!)).toEqual({ blocked_for: [{ identifier: user.email }] });
      expect((await management('DELETE', `/user-blocks/${encodeURIComponent(user.user_id)}`)).status).toBe(204);
      expect((await login('127.0.0.8', user.email!, PASSWORD)).status).toBe(200);
    } finally {
      await management('PATCH', '/attack-protection/brute-force-protection', { mode: 'count_per_identifier_and_ip', max_attempts: 10 });
    }
  });

  it('never counts nor blocks an allowlisted IP', async () => {
    await management('PATCH', '/attack-protection/brute-force-protection', { allowlist: ['127.0.0.9', '10.0.0.0/8'], max_attempts: 2 });
    try {
      const user = await createUser(server);
      await failTimes('127.0.0.9', user.email!, 4);
      expect((await login('127.0.0.9', user.email!, PASSWORD)).status).toBe(200);
      expect(await blocksOf(user.email!)).toEqual({ blocked_for: [] });
      await failTimes('127.0.0.10', user.email!, 2); // not allowlisted: blocked at the (lowered) limit
      expect((await login('127.0.0.10', user.email!, PASSWORD)).status).toBe(429);
    } finally {
      await management('PATCH', '/attack-protection/brute-force-protection', { allowlist: [], max_attempts: 10 });
    }
  });

  it('leaves connections with options.brute_force_protection off alone, and blocks nothing when disabled', async () => {
    const db = server.server.prepared.store.db;
    const connection = await databaseConnection();
    await db
      .updateTable('connections')
      .set({ properties: JSON.stringify({ ...connection, options: { ...connection.options, brute_force_protection: false } }) })
      .where('id', '=', connection.id)
      .execute();
    const user = await createUser(server);
    try {
      await failTimes('127.0.0.11', user.email!, 11);
      expect((await login('127.0.0.11', user.email!, PASSWORD)).status).toBe(200);
    } finally {
      await db.updateTable('connections').set({ properties: JSON.stringify(connection) }).where('id', '=', connection.id).execute();
    }
    await management('PATCH', '/attack-protection/brute-force-protection', { enabled: false });
    try {
      await failTimes('127.0.0.11', user.email!, 11);
      expect((await login('127.0.0.11', user.email!, PASSWORD)).status).toBe(200);
    } finally {
      await management('PATCH', '/attack-protection/brute-force-protection', { enabled: true });
    }
  });

  it('throttles an IP with too many failed logins across accounts (suspicious_ip), but not another IP or an allowlisted one', async () => {
    const patch = await management('PATCH', '/attack-protection/suspicious-ip-throttling', { stage: { 'pre-login': { max_attempts: 4, rate: 3_600_000 } } });
    expect(patch.status).toBe(200);
    try {
      const user = await createUser(server);
      for (let i = 0; i < 4; i++) await failTimes('127.0.0.12', `victim-${i}-${randomBytes(3).toString('hex')}@example.com`, 1);
      const refused = await login('127.0.0.12', user.email!, PASSWORD);
      expect(refused).toMatchObject({ status: 429, body: { error: 'too_many_attempts', error_description: expect.stringMatching(SUSPICIOUS) } });
      expect((await login('127.0.0.13', user.email!, PASSWORD)).status).toBe(200);
      await management('PATCH', '/attack-protection/suspicious-ip-throttling', { allowlist: ['127.0.0.12/32'] });
      expect((await login('127.0.0.12', user.email!, PASSWORD)).status).toBe(200);
      await management('PATCH', '/attack-protection/suspicious-ip-throttling', { allowlist: [], shields: ['admin_notification'] });
      expect((await login('127.0.0.12', user.email!, PASSWORD)).status).toBe(200); // monitoring only: no block shield
    } finally {
      await management('PATCH', '/attack-protection/suspicious-ip-throttling', {
        allowlist: [],
        shields: ['admin_notification', 'block'],
        stage: { 'pre-login': { max_attempts: 100, rate: 864_000 } },
      });
    }
  });

  it('refuses a correct but breached password with 401 password_leaked, and only when detection blocks', async () => {
    const user = await createUser(server, { password_hash: await hashPassword('P@ssw0rd') });
    expect(await login('127.0.0.14', user.email!, 'P@ssw0rd')).toMatchObject({
      status: 401,
      body: { error: 'password_leaked', error_description: expect.stringContaining('data breach') },
    });
    expect(await login('127.0.0.14', user.email!, 'Password')).toMatchObject({ status: 403, body: { error: 'invalid_grant' } });
    await management('PATCH', '/attack-protection/breached-password-detection', { shields: ['user_notification'] });
    try {
      expect((await login('127.0.0.14', user.email!, 'P@ssw0rd')).status).toBe(200);
    } finally {
      await management('PATCH', '/attack-protection/breached-password-detection', { shields: ['block'] });
    }
    expect((await login('127.0.0.14', user.email!, 'P@ssw0rd')).status).toBe(401);
  });

  it('refuses breached passwords at signup and password change, and throttles signups per IP (checks for the signup doors)', async () => {
    const { services } = server.server;
    const connection = await databaseConnection();
    expect(await checkBreachedPasswordAtSignup(services, connection, 'Trustno1')).toBe('password_leaked');
    expect(await checkBreachedPasswordAtSignup(services, connection, 'a fresh 7ong phrase!')).toBe('ok');
    expect(await checkBreachedPasswordAtPasswordChange(services, connection, 'qwerty123')).toBe('password_leaked');
    await management('PATCH', '/attack-protection/breached-password-detection', { stage: { 'pre-user-registration': { shields: ['admin_notification'] } } });
    expect(await checkBreachedPasswordAtSignup(services, connection, 'Trustno1')).toBe('ok');
    expect(await checkBreachedPasswordAtPasswordChange(services, connection, 'qwerty123')).toBe('password_leaked');
    await management('PATCH', '/attack-protection/breached-password-detection', { stage: { 'pre-user-registration': { shields: ['block'] } } });

    await management('PATCH', '/attack-protection/suspicious-ip-throttling', { stage: { 'pre-user-registration': { max_attempts: 2, rate: 3_600_000 } } });
    try {
      const ip = '192.0.2.15';
      expect(await checkSignupThrottle(services, connection, ip)).toBe('ok');
      expect(await checkSignupThrottle(services, connection, `::ffff:${ip}`)).toBe('ok'); // the same IPv4 client
      expect(await checkSignupThrottle(services, connection, ip)).toBe('too_many_attempts');
      expect(await checkSignupThrottle(services, connection, '192.0.2.16')).toBe('ok');
    } finally {
      await management('PATCH', '/attack-protection/suspicious-ip-throttling', { stage: { 'pre-user-registration': { max_attempts: 50, rate: 1_728_000 } } });
    }
  });

  it('answers odd credentials in the OAuth shape, never 500', async () => {
    for (const username of ['', ' ', 'a'.repeat(5000), '\u0000@x', 'ünï@cödé.example', '"; DROP TABLE users; --']) {
      const res = await login('127.0.0.16', username, 'x');
      expect(res.status, JSON.stringify(username).slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.error).toEqual(expect.any(String));
    }
  });
});

describe('attack protection on the hosted login page', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('shows the lock-out message with 429 after 10 failures, even for the right password', async () => {
    const app = await createApp(server);
    const password = 'Corr3ct-Horse!-gatehouse';
    await createUserOverApi(server, 'ada@example.com', password);
    const browser = new TestBrowser();
    const query = new URLSearchParams({ client_id: app.client_id, redirect_uri: 'https://app.example/callback', response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const start = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${query}`));
    if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
    const form = readForm(await start.text(), server.url);
    for (let i = 0; i < 10; i++) {
      const wrong = await browser.submitExpectingPage(form.action, { ...form.fields, username: 'ada@example.com', password: `nope ${i}` });
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toContain('Wrong email or password.');
    }
    const locked = await browser.submitExpectingPage(form.action, { ...form.fields, username: 'ada@example.com', password });
    expect(locked.status).toBe(429);
    expect(await locked.text()).toContain('Too many failed attempts');
    expect(browser.cookies.has('gh_session')).toBe(false);
  });
});

describe('every door that checks a password counts the attempt first (#19)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Of the statuses, how many were checked (`wrong`: a verified wrong password) and how many refused before any check. */
  function tally(statuses: number[], wrong: number): { checked: number; refused: number } {
    return { checked: statuses.filter((s) => s === wrong).length, refused: statuses.filter((s) => s === 429).length };
  }

  it('the password grant', async () => {
    const app = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: ['password'] });
    const user = await createUser(server);
    const statuses = await Promise.all(
      Array.from({ length: 25 }, async (_, i) => {
        const res = await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'password', ...app.auth, username: user.email, password: `wrong ${i}` }),
        });
        return res.status;
      }),
    );
    expect(tally(statuses, 403)).toEqual({ checked: 10, refused: 15 });
  });

  it('/co/authenticate', async () => {
    const app = await createApp(server, { cross_origin_authentication: true });
    const email = `co-${randomBytes(4).toString('hex')}@example.com`;
    await createUserOverApi(server, email, 'Corr3ct-Horse!-gatehouse');
    const statuses = await Promise.all(
      Array.from({ length: 25 }, async (_, i) => {
        const res = await fetch(`${server.url}/co/authenticate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: 'https://app.example' },
          body: JSON.stringify({ client_id: app.client_id, username: email, password: `wrong ${i}`, realm: DATABASE_CONNECTION_NAME, credential_type: PASSWORD_REALM_GRANT }),
        });
        return res.status;
      }),
    );
    expect(tally(statuses, 403)).toEqual({ checked: 10, refused: 15 });
  });

  it('the hosted login page', async () => {
    const app = await createApp(server);
    const email = `page-${randomBytes(4).toString('hex')}@example.com`;
    await createUserOverApi(server, email, 'Corr3ct-Horse!-gatehouse');
    const browser = new TestBrowser();
    const query = new URLSearchParams({ client_id: app.client_id, redirect_uri: 'https://app.example/callback', response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const start = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${query}`));
    if (start instanceof URL) throw new Error(`expected the login page, went to ${start.href}`);
    const form = readForm(await start.text(), server.url);
    const pages = await Promise.all(
      Array.from({ length: 25 }, async (_, i) => {
        // Each browser tab keeps its own last answer: a shared cookie jar would show them all the latest one.
        const tab = new TestBrowser();
        for (const [name, value] of browser.cookies) tab.cookies.set(name, value);
        const res = await tab.submitExpectingPage(form.action, { ...form.fields, username: email, password: `wrong ${i}` });
        return { status: res.status, text: await res.text() };
      }),
    );
    expect(pages.filter((p) => p.text.includes('Wrong email or password.'))).toHaveLength(10);
    expect(pages.filter((p) => p.status === 429 && p.text.includes('Too many failed attempts'))).toHaveLength(15);
  });

  it('signups: a burst from one IP gets exactly the pre-registration limit through', async () => {
    const app = await createApp(server);
    const token = await managementToken(server);
    const patch = (stage: Json) =>
      fetch(`${server.url}/api/v2/attack-protection/suspicious-ip-throttling`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ stage: { 'pre-user-registration': stage } }),
      });
    expect((await patch({ max_attempts: 5, rate: 3_600_000 })).status).toBe(200);
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const res = await fetch(`${server.url}/dbconnections/signup`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ client_id: app.client_id, connection: DATABASE_CONNECTION_NAME, email: `burst-${i}-${randomBytes(3).toString('hex')}@example.com`, password: 'Corr3ct-Horse!-gatehouse' }),
          });
          return { status: res.status, body: (await res.json()) as Json };
        }),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
      expect(answers.filter((a) => a.status === 429 && a.body.code === 'too_many_attempts')).toHaveLength(15);
    } finally {
      await patch({ max_attempts: 50, rate: 1_728_000 });
    }
  });
});

describe('attack protection with an unreachable Redis', () => {
  it('fails open: logins are neither counted nor refused, and nothing throws', async () => {
    const server = await startTestServer();
    const counters = createRedisCounterStore('redis://127.0.0.1:1');
    const protection = new AttackProtection(server.server.prepared.store.db, counters);
    try {
      const connection = (await findConnectionByName(server.server.prepared.store.db, server.server.prepared.bootstrap!.tenant.id, DATABASE_CONNECTION_NAME))!;
      const attempt = { connection, identifier: 'someone@example.com', ip: '127.0.0.1' };
      for (let i = 0; i < 12; i++) {
        const admission = await protection.admitLogin(attempt);
        expect(admission.refused).toBeUndefined();
        if (!admission.refused) await (i % 4 === 3 ? admission.succeeded() : admission.failed(null));
      }
      expect(await protection.checkSignup(connection.tenant_id, '127.0.0.1')).toBeUndefined();
      // While ioredis waits to reconnect, the store refuses at once rather than queueing every login behind the
      // reconnect delay (polled until the client is in that state).
      await expect
        .poll(() => counters.reserve('k', 1, 1000).then(() => 'answered', (error: Error) => error.message))
        .toMatch(/^Redis is (reconnecting|close|end)$/);
    } finally {
      await protection.close();
      await server.close();
    }
  });
});
