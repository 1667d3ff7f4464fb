/**
 * /api/v2/users, /users-by-email and identities over real HTTP: create per strategy, password policies and
 * hashing, the user object's shape, search and paging forms, PATCH merge semantics, linking (library rule 8) in
 * both body forms, the current_user model, and every route's scopes.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUser, findUserInConnection, recordLogin } from '../store/users.js';
import { updateTenant } from '../store/tenants.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

type Json = Record<string, unknown>;
interface UserJson extends Json {
  user_id: string;
  email?: string;
  identities: Json[];
  user_metadata: Json;
  app_metadata: Json;
}

const STRONG = 'Corr3ct-Horse!';

describe('Management API: users', () => {
  let server: TestServer;
  let token: string;
  let tenantId: string;

  const call = (method: string, path: string, body?: unknown, bearer = token) =>
    fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const json = async <T = Json>(res: Response | Promise<Response>): Promise<T> => (await (await res).json()) as T;
  const expectError = async (res: Response | Promise<Response>, status: number, errorCode: string, message?: RegExp) => {
    const response = await res;
    const body = await json(response);
    expect({ status: response.status, body }).toMatchObject({ status, body: { statusCode: status, errorCode } });
    expect(Object.keys(body).sort()).toEqual(['error', 'errorCode', 'message', 'statusCode']);
    if (message) expect(body.message).toMatch(message);
    return body;
  };
  const path = (userId: string) => `/users/${encodeURIComponent(userId)}`;
  const createUser = async (body: Json): Promise<UserJson> => {
    const res = await call('POST', '/users', body);
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    return json<UserJson>(res);
  };
  const createConnection = async (body: Json): Promise<string> => {
    const res = await call('POST', '/connections', body);
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    return (await json<{ id: string }>(res)).id;
  };
  let dbUser = 0;
  /** A fresh user of the default database connection. */
  const newDbUser = (extra: Json = {}) =>
    createUser({ connection: 'Username-Password-Authentication', email: `user${++dbUser}-${Date.now()}@example.com`, password: STRONG, ...extra });

  /** A token as a user's own (the browser library's management client): current_user scopes, sub = the user. */
  const signed = async (claims: Json, subject: string, audience: string) => {
    const { tenant } = server.server.prepared.bootstrap!;
    const key = await server.server.prepared.keyRing.signingKey(tenant.id);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(tenant.issuer)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key.privateKey);
  };
  const userToken = (userId: string, scopes = ['read:current_user', 'update:current_user_metadata', 'update:current_user_identities']) => {
    const { managementAudience, defaultAppClientId } = server.server.prepared.bootstrap!;
    return signed({ scope: scopes.join(' '), azp: defaultAppClientId }, userId, managementAudience);
  };
  /** An ID token of the tenant for the Default App, as login would issue. */
  const idToken = (userId: string, audience = server.server.prepared.bootstrap!.defaultAppClientId!) => signed({ nonce: 'n' }, userId, audience);

  beforeAll(async () => {
    server = await startTestServer();
    const { tenant } = server.server.prepared.bootstrap!;
    tenantId = tenant.id;
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, rate_limits: { management: { capacity: 100_000, per_second: 100_000 } } },
    });
    server.server.services.tenants.invalidate();
    token = await managementToken(server);
    // 'email' exists already (made at first start for the demo); 'sms' does not.
    await createConnection({ name: 'sms', strategy: 'sms' });
    await createConnection({
      name: 'usernames',
      strategy: 'auth0',
      options: { requires_username: true, validation: { username: { min: 3, max: 12 } }, passwordPolicy: 'low' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('create', () => {
    it('creates a database user: 201, the user object, email lower-cased, an argon2id hash stored and never shown', async () => {
      const res = await call('POST', '/users', {
        connection: 'Username-Password-Authentication',
        email: 'Jane.Doe@Example.COM',
        password: STRONG,
        given_name: 'Jane',
        family_name: 'Doe',
        user_metadata: { theme: 'dark' },
        app_metadata: { plan: 'pro' },
      });
      expect(res.status).toBe(201);
      const user = await json<UserJson>(res);
      expect(user).toEqual({
        user_id: expect.stringMatching(/^auth0\|[0-9a-f]{24}$/),
        email: 'jane.doe@example.com',
        email_verified: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.stringMatching(/Z$/),
        identities: [{ connection: 'Username-Password-Authentication', user_id: user.user_id.slice(6), provider: 'auth0', isSocial: false }],
        app_metadata: { plan: 'pro' },
        user_metadata: { theme: 'dark' },
        picture: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?/),
        name: 'jane.doe@example.com',
        nickname: 'jane.doe',
        given_name: 'Jane',
        family_name: 'Doe',
        logins_count: 0,
        blocked: false,
      });
      expect(JSON.stringify(user)).not.toMatch(/password|argon2/);
      const stored = await findUser(server.server.prepared.store.db, tenantId, user.user_id);
      expect(stored?.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(await json(call('GET', path(user.user_id)))).toEqual(user);
    });

    it('takes the id part from the caller, and answers 409 when it is taken', async () => {
      const user = await newDbUser({ user_id: 'custom-42' });
      expect(user.user_id).toBe('auth0|custom-42');
      await expectError(newDbUserRaw({ user_id: 'custom-42' }), 409, 'user_exists');
    });

    const newDbUserRaw = (extra: Json) =>
      call('POST', '/users', { connection: 'Username-Password-Authentication', email: `raw${++dbUser}@example.com`, password: STRONG, ...extra });

    it('409s a second user with the same email (any case) in a connection, but not in another connection', async () => {
      await newDbUser({ email: 'twice@example.com' });
      await expectError(call('POST', '/users', { connection: 'Username-Password-Authentication', email: 'TWICE@example.com', password: STRONG }), 409, 'user_exists');
      expect((await call('POST', '/users', { connection: 'email', email: 'twice@example.com' })).status).toBe(201);
    });

    it('creates passwordless users with email| and sms| ids, without passwords', async () => {
      const email = await createUser({ connection: 'email', email: 'Otp@Example.com', email_verified: true });
      expect(email).toMatchObject({
        user_id: expect.stringMatching(/^email\|[0-9a-f]{24}$/),
        email: 'otp@example.com',
        email_verified: true,
        identities: [{ connection: 'email', provider: 'email', isSocial: false }],
      });
      const sms = await createUser({ connection: 'sms', phone_number: '+15550001234', phone_verified: true });
      expect(sms).toMatchObject({
        user_id: expect.stringMatching(/^sms\|[0-9a-f]{24}$/),
        phone_number: '+15550001234',
        phone_verified: true,
        name: '+15550001234',
        identities: [{ connection: 'sms', provider: 'sms' }],
      });
      expect(sms).not.toHaveProperty('email');
      await expectError(call('POST', '/users', { connection: 'sms', phone_number: '+15550001234' }), 409, 'user_exists');
      await expectError(call('POST', '/users', { connection: 'email', email: 'pw@example.com', password: STRONG }), 400, 'invalid_body', /password/);
      await expectError(call('POST', '/users', { connection: 'email' }), 400, 'invalid_body', /email is required/);
      await expectError(call('POST', '/users', { connection: 'sms', email: 'x@example.com' }), 400, 'invalid_body', /phone_number is required/);
      await expectError(call('POST', '/users', { connection: 'sms', phone_number: '5550001234' }), 400, 'invalid_body');
    });

    it('applies the username rules of the connection', async () => {
      const user = await createUser({ connection: 'usernames', email: 'u1@example.com', username: 'jdoe', password: 'secret1' });
      expect(user).toMatchObject({ username: 'jdoe' });
      await expectError(call('POST', '/users', { connection: 'usernames', email: 'u2@example.com', username: 'JDoe', password: 'secret1' }), 409, 'user_exists');
      expect(await createUser({ connection: 'usernames', email: 'u4@example.com', username: 'MixedCase', password: 'secret1' })).toMatchObject({ username: 'mixedcase' });
      await expectError(call('POST', '/users', { connection: 'usernames', email: 'u3@example.com', password: 'secret1' }), 400, 'invalid_body', /username is required/);
      await expectError(call('POST', '/users', { connection: 'usernames', email: 'u3@example.com', username: 'ab', password: 'secret1' }), 400, 'invalid_body', /between 3 and 12/);
      await expectError(call('POST', '/users', { connection: 'usernames', email: 'u3@example.com', username: 'a'.repeat(13), password: 'secret1' }), 400, 'invalid_body');
      await expectError(call('POST', '/users', { connection: 'usernames', email: 'u3@example.com', username: 'has space', password: 'secret1' }), 400, 'invalid_body');
      await expectError(newDbUserRaw({ username: 'notallowed' }), 400, 'invalid_body', /requires_username/);
    });

    it.each([
      ['no connection', { email: 'a@example.com', password: STRONG }],
      ['an unknown connection', { connection: 'nope', email: 'a@example.com', password: STRONG }],
      ['an unknown property', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, role: 'admin' }],
      ['a malformed email', { connection: 'Username-Password-Authentication', email: 'not-an-email', password: STRONG }],
      ['no email', { connection: 'Username-Password-Authentication', password: STRONG }],
      ['no password', { connection: 'Username-Password-Authentication', email: 'a@example.com' }],
      ['a wrong type', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, email_verified: 'yes' }],
      ['metadata that is not an object', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, user_metadata: [1] }],
      ['a dotted metadata key', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, user_metadata: { 'a.b': 1 } }],
      ['a reserved app_metadata key', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, app_metadata: { user_id: 'x' } }],
      ['whitespace in user_id', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, user_id: 'a b' }],
      ['a picture that is no URL', { connection: 'Username-Password-Authentication', email: 'a@example.com', password: STRONG, picture: 'nope' }],
    ])('refuses %s with 400, writing nothing', async (_what, body) => {
      await expectError(call('POST', '/users', body), 400, 'invalid_body');
      expect(await json<unknown[]>(call('GET', '/users-by-email?email=a@example.com'))).toEqual([]);
    });
  });

  describe('password policies', () => {
    it.each([
      ['none', '', 'x'],
      ['low', '12345', '123456'],
      ['fair', 'abcdefg1', 'abcDEFG1'],
      ['good', 'abcdefg1', 'abcdefg1!'],
      ['excellent', 'abcDEF1!!!x', 'abcDEF1!!x'],
    ])('%s refuses %j and accepts %j', async (policy, weak, strong) => {
      await createConnection({ name: `policy-${policy}`, strategy: 'auth0', options: { passwordPolicy: policy } });
      const refused = await call('POST', '/users', { connection: `policy-${policy}`, email: 'p@example.com', password: weak });
      const body = await expectError(refused, 400, 'invalid_body', weak === '' ? undefined : /^PasswordStrengthError: Password is too weak/);
      if (weak !== '') expect(body.message).toContain('* At least');
      expect((await call('POST', '/users', { connection: `policy-${policy}`, email: 'p@example.com', password: strong })).status).toBe(201);
    });

    it('refuses dictionary words and personal information when the connection says so', async () => {
      await createConnection({
        name: 'strict-words',
        strategy: 'auth0',
        options: { passwordPolicy: 'low', password_dictionary: { enable: true, dictionary: ['gatehouse1'] }, password_no_personal_info: { enable: true } },
      });
      const attempt = (password: string, extra: Json = {}) => call('POST', '/users', { connection: 'strict-words', email: 'mallory@example.com', password, ...extra });
      await expectError(attempt('password1'), 400, 'invalid_body', /^PasswordDictionaryError/);
      await expectError(attempt('GATEHOUSE1'), 400, 'invalid_body', /^PasswordDictionaryError/);
      await expectError(attempt('xmalloryx'), 400, 'invalid_body', /^PasswordNoUserInfoError/);
      await expectError(attempt('bartholomew!', { name: 'Bart Bartholomew' }), 400, 'invalid_body', /^PasswordNoUserInfoError/);
      expect((await attempt('purple-giraffe')).status).toBe(201);
    });

    it('applies password_complexity_options.min_length', async () => {
      await createConnection({ name: 'long-pw', strategy: 'auth0', options: { passwordPolicy: 'low', password_complexity_options: { min_length: 14 } } });
      await expectError(call('POST', '/users', { connection: 'long-pw', email: 'l@example.com', password: 'thirteen-char' }), 400, 'invalid_body', /At least 14/);
      expect((await call('POST', '/users', { connection: 'long-pw', email: 'l@example.com', password: 'fourteen-chars' })).status).toBe(201);
    });
  });

  describe('read and search', () => {
    let alice: UserJson;
    let bob: UserJson;
    let carol: UserJson;
    beforeAll(async () => {
      await createConnection({ name: 'search-db', strategy: 'auth0', options: { passwordPolicy: 'low' } });
      const make = (email: string, extra: Json = {}) => createUser({ connection: 'search-db', email, password: 'secret1', ...extra });
      alice = await make('alice@search.test', { name: 'Alice Liddell', nickname: 'ali' });
      bob = await make('bob@search.test', { name: 'Bob Builder', email_verified: true });
      carol = await make('carol@elsewhere.test', { name: 'Carol "C" Danvers' });
    });
    const ids = (users: UserJson[]) => users.map((u) => u.user_id);
    const search = async (q: string, extra = '') =>
      ids(await json<UserJson[]>(call('GET', `/users?connection=search-db&q=${encodeURIComponent(q)}${extra}`)));

    it('gets a user by its URL-encoded id, 404s unknown ones, 400s malformed ones', async () => {
      const raw = await fetch(`${server.url}/api/v2/users/${alice.user_id.replace('|', '%7C')}`, { headers: { authorization: `Bearer ${token}` } });
      expect(await json(raw)).toEqual(alice);
      await expectError(call('GET', path('auth0|000000000000000000000000')), 404, 'inexistent_user', /The user does not exist/);
      await expectError(call('GET', '/users/no-provider-part'), 400, 'invalid_uri');
      expect(await json(call('GET', `${path(alice.user_id)}?fields=email,user_id&include_fields=true`))).toEqual({ user_id: alice.user_id, email: alice.email });
      const without = await json(call('GET', `${path(alice.user_id)}?fields=identities,app_metadata&include_fields=false`));
      expect(without).not.toHaveProperty('identities');
      expect(without).toHaveProperty('email');
    });

    it('answers the paging forms auth0@7 sends', async () => {
      const page = await json<Json & { users: UserJson[] }>(call('GET', '/users?page=0&per_page=50&include_totals=true'));
      expect(page).toMatchObject({ start: 0, limit: 50, length: page.users.length, total: expect.any(Number) });
      expect(page.users.length).toBe(Math.min(page.total as number, 50));
      const everyone = await json<UserJson[]>(call('GET', '/users?per_page=100'));
      expect(everyone).toHaveLength(page.total as number);
      expect(ids(everyone)).toEqual(expect.arrayContaining([alice.user_id, bob.user_id, carol.user_id]));
      const second = await json<Json & { users: UserJson[] }>(call('GET', '/users?connection=search-db&page=1&per_page=2&include_totals=true'));
      expect(second).toEqual({ start: 2, limit: 2, length: 1, total: 3, users: [carol] });
      expect(await json(call('GET', '/users?connection=search-db&per_page=2'))).toEqual([alice, bob]);
      // Checkpoint paging.
      const first = await json<{ users: UserJson[]; next?: string }>(call('GET', '/users?connection=search-db&take=2'));
      expect(ids(first.users)).toEqual([alice.user_id, bob.user_id]);
      expect(await json(call('GET', `/users?connection=search-db&take=2&from=${first.next}`))).toEqual({ users: [carol] });
      await expectError(call('GET', '/users?page=20&per_page=50'), 400, 'invalid_query_string', /1000/);
      await expectError(call('GET', '/users?per_page=101'), 400, 'invalid_query_string');
      await expectError(call('GET', '/users?bogus=1'), 400, 'invalid_query_string');
    });

    it('sorts by created_at either way', async () => {
      expect(await search('', '&sort=created_at:-1')).toEqual([carol.user_id, bob.user_id, alice.user_id]);
      expect(await search('', '&sort=created_at:1')).toEqual([alice.user_id, bob.user_id, carol.user_id]);
      await expectError(call('GET', '/users?sort=password:1'), 400, 'invalid_query_string');
      await expectError(call('GET', '/users?sort=created_at'), 400, 'invalid_query_string');
    });

    it('finds users with the q forms SDK users send', async () => {
      expect(await search('email:"alice@search.test"')).toEqual([alice.user_id]);
      expect(await search('email:ALICE@search.test')).toEqual([alice.user_id]);
      expect(await search('name:"Bob Builder"')).toEqual([bob.user_id]);
      expect(await search('name:"Carol \\"C\\" Danvers"')).toEqual([carol.user_id]);
      expect(await search(`user_id:"${carol.user_id}"`)).toEqual([carol.user_id]);
      expect(await search('lid')).toEqual([alice.user_id]); // in the name
      expect(await search('search.test')).toEqual([alice.user_id, bob.user_id]); // in the email
      expect(await search('ALI')).toEqual([alice.user_id]); // the nickname, any case
      expect(await search('email:*')).toEqual([alice.user_id, bob.user_id, carol.user_id]);
      expect(await search('email:bo*')).toEqual([bob.user_id]);
      expect(await search('email.domain:search.test AND email_verified:true')).toEqual([bob.user_id]);
      expect(await search('nickname:"bob"')).toEqual([bob.user_id]); // the default nickname
      expect(await search('nobody-has-this')).toEqual([]);
      expect(await search('50%')).toEqual([]); // LIKE wildcards are literal
      expect(ids(await json<UserJson[]>(call('GET', `/users?q=${encodeURIComponent('identities.connection:"search-db" AND bob')}`)))).toEqual([bob.user_id]);
      expect(ids(await json<UserJson[]>(call('GET', `/users?search_engine=v3&q=${encodeURIComponent('email:"bob@search.test"')}`)))).toEqual([bob.user_id]);
      const totals = await json<Json>(call('GET', `/users?include_totals=true&q=${encodeURIComponent('search.test')}&connection=search-db&per_page=1`));
      expect(totals).toMatchObject({ start: 0, limit: 1, length: 1, total: 2 });
    });

    it('refuses query syntax it does not support with a 400', async () => {
      for (const q of ['email:a OR email:b', 'NOT email:a', 'password:x', 'user_metadata:x', '(email:a)', 'email:*foo', 'email_verified:maybe']) {
        await expectError(call('GET', `/users?q=${encodeURIComponent(q)}`), 400, 'invalid_query_string', /^q: /);
      }
    });

    it('finds users by email (lower-cased), as a plain array', async () => {
      expect(await json(call('GET', '/users-by-email?email=ALICE@SEARCH.TEST'))).toEqual([alice]);
      expect(await json(call('GET', '/users-by-email?email=nobody@search.test'))).toEqual([]);
      expect(await json(call('GET', '/users-by-email?email=bob@search.test&fields=user_id'))).toEqual([{ user_id: bob.user_id }]);
      await expectError(call('GET', '/users-by-email'), 400, 'invalid_query_string');
    });

    it('shows logins recorded by the store', async () => {
      await recordLogin(server.server.prepared.store.db, tenantId, carol.user_id, '203.0.113.9', Date.parse('2030-01-02T03:04:05Z'));
      expect(await json(call('GET', path(carol.user_id)))).toMatchObject({
        logins_count: 1,
        last_ip: '203.0.113.9',
        last_login: '2030-01-02T03:04:05.000Z',
      });
      const found = await findUserInConnection(server.server.prepared.store.db, (await findUser(server.server.prepared.store.db, tenantId, carol.user_id))!.connection_id, {
        email: 'CAROL@elsewhere.test',
      });
      expect(found?.user_id).toBe(carol.user_id);
    });
  });

  describe('update', () => {
    it('merges metadata one level deep: keys replaced, nested objects replaced, null deletes, {} clears', async () => {
      const user = await newDbUser({ user_metadata: { a: 1, b: { x: 1, y: 2 }, c: 'keep' }, app_metadata: { roles: ['x'], plan: 'free' } });
      const patched = await json<UserJson>(call('PATCH', path(user.user_id), { user_metadata: { a: 2, b: { z: 3 }, d: null, new: [1] }, app_metadata: { plan: null } }));
      expect(patched.user_metadata).toEqual({ a: 2, b: { z: 3 }, c: 'keep', new: [1] });
      expect(patched.app_metadata).toEqual({ roles: ['x'] });
      const cleared = await json<UserJson>(call('PATCH', path(user.user_id), { user_metadata: {} }));
      expect(cleared.user_metadata).toEqual({});
      expect(cleared.app_metadata).toEqual({ roles: ['x'] });
      expect(await json(call('GET', path(user.user_id)))).toEqual(cleared);
    });

    it('replaces root fields; null unsets them (back to their defaults)', async () => {
      const user = await newDbUser({ name: 'Old Name', given_name: 'Old', picture: 'https://img.example/a.png' });
      const patched = await json<UserJson>(call('PATCH', path(user.user_id), { name: 'New Name', given_name: null, nickname: 'nicky', blocked: true }));
      expect(patched).toMatchObject({ name: 'New Name', nickname: 'nicky', blocked: true, picture: 'https://img.example/a.png' });
      expect(patched).not.toHaveProperty('given_name');
      const reset = await json<UserJson>(call('PATCH', path(user.user_id), { name: null, picture: null }));
      expect(reset.name).toBe(user.email);
      expect(reset.picture).toMatch(/gravatar/);
      expect(Date.parse(reset.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(user.updated_at as string));
    });

    it('changes the email (unverifying it) and the password (checked and rehashed)', async () => {
      const user = await newDbUser({ email_verified: true });
      const before = (await findUser(server.server.prepared.store.db, tenantId, user.user_id))!.password_hash;
      const patched = await json<UserJson>(call('PATCH', path(user.user_id), { email: 'Changed-Email@Example.com' }));
      expect(patched).toMatchObject({ email: 'changed-email@example.com', email_verified: false });
      expect(await json(call('PATCH', path(user.user_id), { email: 'verified@example.com', email_verified: true }))).toMatchObject({ email_verified: true });

      await expectError(call('PATCH', path(user.user_id), { password: 'weak' }), 400, 'invalid_body', /PasswordStrengthError/);
      expect((await findUser(server.server.prepared.store.db, tenantId, user.user_id))!.password_hash).toBe(before);
      const changed = await json<UserJson>(call('PATCH', path(user.user_id), { password: 'An0ther-Str0ng!' }));
      expect(changed.last_password_reset).toEqual(expect.any(String));
      const after = (await findUser(server.server.prepared.store.db, tenantId, user.user_id))!.password_hash;
      expect(after).toMatch(/^\$argon2id\$/);
      expect(after).not.toBe(before);
      expect(JSON.stringify(changed)).not.toContain('argon2');
    });

    it('409s an email or username taken in the connection, and 400s bad input', async () => {
      const first = await newDbUser();
      const second = await newDbUser();
      await expectError(call('PATCH', path(second.user_id), { email: first.email }), 409, 'user_exists');
      await expectError(call('PATCH', path(second.user_id), { user_id: 'auth0|x' }), 400, 'invalid_body');
      await expectError(call('PATCH', path(second.user_id), { blocked: 'yes' }), 400, 'invalid_body');
      await expectError(call('PATCH', path(second.user_id), { email: null }), 400, 'invalid_body');
      await expectError(call('PATCH', path(second.user_id), { username: 'nope' }), 400, 'invalid_body', /requires_username/);
      await expectError(call('PATCH', path(second.user_id), { user_metadata: { $where: 1 } }), 400, 'invalid_body');
      await expectError(call('PATCH', path(second.user_id), { connection: 'sms', email: 'x@example.com' }), 400, 'invalid_body', /no identity/);
      await expectError(call('PATCH', path('auth0|000000000000000000000000'), { name: 'x' }), 404, 'inexistent_user');
      const u = await createUser({ connection: 'usernames', email: 'patch-u@example.com', username: 'patchme', password: 'secret1' });
      await createUser({ connection: 'usernames', email: 'patch-v@example.com', username: 'takenname', password: 'secret1' });
      await expectError(call('PATCH', path(u.user_id), { username: 'takenname' }), 409, 'user_exists');
      expect(await json(call('PATCH', path(u.user_id), { username: 'renamed' }))).toMatchObject({ username: 'renamed' });
      const sms = await createUser({ connection: 'sms', phone_number: '+15550009999' });
      await expectError(call('PATCH', path(sms.user_id), { password: STRONG }), 400, 'invalid_body', /passwords/);
    });

    it('lets update:users_app_metadata change metadata only', async () => {
      const user = await newDbUser();
      const metadataOnly = await managementToken(server, ['update:users_app_metadata']);
      expect(await json(call('PATCH', path(user.user_id), { app_metadata: { tier: 2 }, user_metadata: { lang: 'fr' } }, metadataOnly))).toMatchObject({
        app_metadata: { tier: 2 },
        user_metadata: { lang: 'fr' },
      });
      await expectError(call('PATCH', path(user.user_id), { name: 'x' }, metadataOnly), 403, 'insufficient_scope', /update:users/);
    });
  });

  describe('delete', () => {
    it('deletes a user: 204, then 404, and 204 again when already gone', async () => {
      const user = await newDbUser();
      expect((await call('DELETE', path(user.user_id))).status).toBe(204);
      await expectError(call('GET', path(user.user_id)), 404, 'inexistent_user');
      expect((await call('DELETE', path(user.user_id))).status).toBe(204);
      expect(await findUser(server.server.prepared.store.db, tenantId, user.user_id)).toBeUndefined();
    });
  });

  describe('linking (library rule 8)', () => {
    const providerAndId = (userId: string) => {
      const [provider, ...rest] = userId.split('|');
      return { provider: provider!, user_id: rest.join('|') };
    };

    it('links by provider and user_id: the secondary exists only inside the primary, metadata not merged', async () => {
      const primary = await newDbUser({ user_metadata: { side: 'primary' }, app_metadata: { p: 1 } });
      const secondary = await createUser({ connection: 'email', email: 'secondary-1@example.com', user_metadata: { side: 'secondary' }, app_metadata: { s: 1 } });
      const res = await call('POST', `${path(primary.user_id)}/identities`, providerAndId(secondary.user_id));
      expect(res.status).toBe(201);
      const identities = await json<Json[]>(res);
      expect(identities).toEqual([
        { connection: 'Username-Password-Authentication', user_id: primary.user_id.slice(6), provider: 'auth0', isSocial: false },
        {
          connection: 'email',
          user_id: secondary.user_id.slice(6),
          provider: 'email',
          isSocial: false,
          profileData: { email: 'secondary-1@example.com', email_verified: false },
        },
      ]);
      // Gone as a user of its own.
      await expectError(call('GET', path(secondary.user_id)), 404, 'inexistent_user');
      await expectError(call('PATCH', path(secondary.user_id), { name: 'x' }), 404, 'inexistent_user');
      expect(await json(call('GET', '/users-by-email?email=secondary-1@example.com'))).toEqual([]);
      const listed = await json<UserJson[]>(call('GET', '/users?per_page=100'));
      expect(listed.map((u) => u.user_id)).not.toContain(secondary.user_id);
      expect(listed.find((u) => u.user_id === primary.user_id)?.identities).toEqual(identities);
      // Only inside the primary; its metadata untouched by the link.
      const after = await json<UserJson>(call('GET', path(primary.user_id)));
      expect(after).toMatchObject({ identities, user_metadata: { side: 'primary' }, app_metadata: { p: 1 } });
      // Linking it again, or anywhere else, is a conflict.
      await expectError(call('POST', `${path(primary.user_id)}/identities`, providerAndId(secondary.user_id)), 409, 'identity_conflict');
      const other = await newDbUser();
      await expectError(call('POST', `${path(other.user_id)}/identities`, providerAndId(secondary.user_id)), 409, 'identity_conflict');
      // A secondary's email stays taken in its connection.
      await expectError(call('POST', '/users', { connection: 'email', email: 'secondary-1@example.com' }), 409, 'user_exists');

      // Unlink: 200 with the remaining identities; the secondary is back as it was, with its own metadata.
      const unlinked = await call('DELETE', `${path(primary.user_id)}/identities/email/${encodeURIComponent(secondary.user_id.slice(6))}`);
      expect(unlinked.status).toBe(200);
      expect(await json(unlinked)).toEqual([identities[0]]);
      expect(await json(call('GET', path(secondary.user_id)))).toMatchObject({
        user_id: secondary.user_id,
        identities: [{ connection: 'email', provider: 'email' }],
        user_metadata: { side: 'secondary' },
        app_metadata: { s: 1 },
      });
      expect((await json<UserJson>(call('GET', path(primary.user_id)))).identities).toEqual([identities[0]]);
      await expectError(call('DELETE', `${path(primary.user_id)}/identities/email/${secondary.user_id.slice(6)}`), 404, 'inexistent_identity');
    });

    it('refuses linking a user to itself, an unknown user, a wrong connection_id, or a mixed body', async () => {
      const primary = await newDbUser();
      const other = await newDbUser();
      await expectError(call('POST', `${path(primary.user_id)}/identities`, providerAndId(primary.user_id)), 400, 'invalid_body', /itself/);
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { provider: 'auth0', user_id: 'ffffffffffffffffffffffff' }), 404, 'inexistent_user');
      await expectError(
        call('POST', `${path(primary.user_id)}/identities`, { ...providerAndId(other.user_id), connection_id: 'con_AAAAAAAAAAAAAAAA' }),
        404,
        'inexistent_user',
      );
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { link_with: 'x.y.z', provider: 'auth0' }), 400, 'invalid_body', /link_with/);
      await expectError(call('POST', `${path(primary.user_id)}/identities`, {}), 400, 'invalid_body');
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { provider: 'auth0' }), 400, 'invalid_body');
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { provider: 'auth0', user_id: 'x', extra: 1 }), 400, 'invalid_body');
      await expectError(call('POST', `${path('auth0|000000000000000000000000')}/identities`, providerAndId(other.user_id)), 404, 'inexistent_user');
      await expectError(call('DELETE', `${path(primary.user_id)}/identities/auth0/${primary.user_id.slice(6)}`), 400, 'invalid_uri', /main identity/);
    });

    it('links with the connection_id naming the secondary connection', async () => {
      const primary = await newDbUser();
      const secondary = await newDbUser();
      const connectionId = (await json<{ id: string }[]>(call('GET', '/connections?name=Username-Password-Authentication')))[0]!.id;
      const res = await call('POST', `${path(primary.user_id)}/identities`, { ...providerAndId(secondary.user_id), connection_id: connectionId });
      expect(res.status).toBe(201);
      expect(await json<Json[]>(res)).toHaveLength(2);
    });

    it('links with link_with: the ID token of the secondary, sent with the primary user own token', async () => {
      const primary = await newDbUser({ user_metadata: { mine: true } });
      const secondary = await createUser({ connection: 'sms', phone_number: '+15550004321', user_metadata: { theirs: true } });
      const own = await userToken(primary.user_id);
      const res = await call('POST', `${path(primary.user_id)}/identities`, { link_with: await idToken(secondary.user_id) }, own);
      expect(res.status).toBe(201);
      expect(await json(res)).toEqual([
        expect.objectContaining({ provider: 'auth0' }),
        { connection: 'sms', user_id: secondary.user_id.slice(4), provider: 'sms', isSocial: false, profileData: { phone_number: '+15550004321', phone_verified: false } },
      ]);
      await expectError(call('GET', path(secondary.user_id)), 404, 'inexistent_user');
      expect(await json(call('GET', path(primary.user_id), undefined, own))).toMatchObject({ user_metadata: { mine: true } });
      // The user unlinks it again with its own token.
      const unlinked = await call('DELETE', `${path(primary.user_id)}/identities/sms/${secondary.user_id.slice(4)}`, undefined, own);
      expect(unlinked.status).toBe(200);
      expect(await json(call('GET', path(secondary.user_id)))).toMatchObject({ user_metadata: { theirs: true } });
    });

    it('refuses link_with from a machine token, a forged or foreign ID token, and provider/user_id from a user token', async () => {
      const primary = await newDbUser();
      const secondary = await newDbUser();
      const own = await userToken(primary.user_id);
      const good = await idToken(secondary.user_id);
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { link_with: good }), 403, 'insufficient_scope', /link_with/);
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { link_with: `${good.slice(0, -4)}AAAA` }, own), 400, 'invalid_body', /link_with/);
      await expectError(call('POST', `${path(primary.user_id)}/identities`, { link_with: await idToken(secondary.user_id, 'another-client') }, own), 400, 'invalid_body');
      await expectError(call('POST', `${path(primary.user_id)}/identities`, providerAndId(secondary.user_id), own), 403, 'insufficient_scope', /update:users/);
      // Nothing was linked.
      expect((await call('GET', path(secondary.user_id))).status).toBe(200);
    });

    it('deleting a primary deletes its linked identities', async () => {
      const primary = await newDbUser();
      const secondary = await createUser({ connection: 'email', email: 'goes-with-primary@example.com' });
      expect((await call('POST', `${path(primary.user_id)}/identities`, providerAndId(secondary.user_id))).status).toBe(201);
      expect((await call('DELETE', path(primary.user_id))).status).toBe(204);
      expect(await findUser(server.server.prepared.store.db, tenantId, secondary.user_id)).toBeUndefined();
    });

    it('refuses to link a user that has identities of its own', async () => {
      const a = await newDbUser();
      const b = await newDbUser();
      const c = await createUser({ connection: 'email', email: 'chain@example.com' });
      expect((await call('POST', `${path(b.user_id)}/identities`, providerAndId(c.user_id))).status).toBe(201);
      await expectError(call('POST', `${path(a.user_id)}/identities`, providerAndId(b.user_id)), 400, 'invalid_body', /unlink them first/);
    });

    it('updates a secondary identity through the primary when connection names it', async () => {
      const primary = await newDbUser();
      const secondary = await createUser({ connection: 'email', email: 'sec-update@example.com' });
      expect((await call('POST', `${path(primary.user_id)}/identities`, providerAndId(secondary.user_id))).status).toBe(201);
      const patched = await json<UserJson>(call('PATCH', path(primary.user_id), { connection: 'email', email: 'sec-updated@example.com', email_verified: true, nickname: 'root' }));
      expect(patched).toMatchObject({ email: primary.email, nickname: 'root' });
      expect(patched.identities[1]).toMatchObject({ profileData: { email: 'sec-updated@example.com', email_verified: true } });
    });
  });

  describe('current_user tokens (B.6)', () => {
    it('read and patch their own user_metadata only', async () => {
      const me = await newDbUser({ user_metadata: { color: 'blue' } });
      const other = await newDbUser();
      const own = await userToken(me.user_id);
      expect(await json(call('GET', path(me.user_id), undefined, own))).toMatchObject({ user_id: me.user_id });
      const patched = await json<UserJson>(call('PATCH', path(me.user_id), { user_metadata: { color: 'green', size: 'L' } }, own));
      expect(patched.user_metadata).toEqual({ color: 'green', size: 'L' });

      const mismatch = /^User to be acted on does not match subject in bearer token\.$/;
      await expectError(call('GET', path(other.user_id), undefined, own), 403, 'insufficient_scope', mismatch);
      await expectError(call('PATCH', path(other.user_id), { user_metadata: { x: 1 } }, own), 403, 'insufficient_scope', mismatch);
      await expectError(call('POST', `${path(other.user_id)}/identities`, { link_with: 'a.b.c' }, own), 403, 'insufficient_scope', mismatch);
      await expectError(call('DELETE', `${path(other.user_id)}/identities/auth0/x`, undefined, own), 403, 'insufficient_scope', mismatch);
      // Own user, but more than user_metadata.
      await expectError(call('PATCH', path(me.user_id), { app_metadata: { admin: true } }, own), 403, 'insufficient_scope', /user_metadata only/);
      await expectError(call('PATCH', path(me.user_id), { password: STRONG }, own), 403, 'insufficient_scope');
      await expectError(call('PATCH', path(me.user_id), { blocked: false }, own), 403, 'insufficient_scope');
      // Not granted: delete:current_user, and the admin routes.
      await expectError(call('DELETE', path(me.user_id), undefined, own), 403, 'insufficient_scope');
      await expectError(call('GET', '/users', undefined, own), 403, 'insufficient_scope');
      expect((await call('GET', path(me.user_id))).status).toBe(200);
    });

    it('create:current_user_metadata adds keys, delete:current_user_metadata removes them, neither overwrites', async () => {
      const me = await newDbUser({ user_metadata: { kept: 1 } });
      const creator = await userToken(me.user_id, ['create:current_user_metadata']);
      const deleter = await userToken(me.user_id, ['delete:current_user_metadata']);
      expect((await json<UserJson>(call('PATCH', path(me.user_id), { user_metadata: { added: 2 } }, creator))).user_metadata).toEqual({ kept: 1, added: 2 });
      await expectError(call('PATCH', path(me.user_id), { user_metadata: { kept: 5 } }, creator), 403, 'insufficient_scope');
      await expectError(call('PATCH', path(me.user_id), { user_metadata: { kept: null } }, creator), 403, 'insufficient_scope');
      await expectError(call('PATCH', path(me.user_id), { user_metadata: { fresh: 1 } }, deleter), 403, 'insufficient_scope');
      expect((await json<UserJson>(call('PATCH', path(me.user_id), { user_metadata: { kept: null } }, deleter))).user_metadata).toEqual({ added: 2 });
      expect((await json<UserJson>(call('PATCH', path(me.user_id), { user_metadata: {} }, deleter))).user_metadata).toEqual({});
    });

    it('delete:current_user deletes the user itself only', async () => {
      const me = await newDbUser();
      const other = await newDbUser();
      const own = await userToken(me.user_id, ['delete:current_user']);
      await expectError(call('DELETE', path(other.user_id), undefined, own), 403, 'insufficient_scope', /does not match subject/);
      expect((await call('DELETE', path(me.user_id), undefined, own)).status).toBe(204);
      expect((await call('GET', path(me.user_id))).status).toBe(404);
    });

    it('a machine token holding only current_user scopes acts on no user', async () => {
      const me = await newDbUser();
      const machine = await managementToken(server, ['read:current_user']);
      await expectError(call('GET', path(me.user_id), undefined, machine), 403, 'insufficient_scope', /does not match subject/);
    });
  });

  describe('scopes', () => {
    it('refuses every route without one of its scopes (403 naming them), and allows each of them', async () => {
      const target = await newDbUser();
      const unrelated = await managementToken(server, ['read:connections', 'read:clients']);
      const unique = () => Math.random().toString(36).slice(2);
      const linkable = async () => (await createUser({ connection: 'email', email: `link-${unique()}@example.com` })).user_id;
      const linked = async () => {
        const secondary = await linkable();
        expect((await call('POST', `${path(target.user_id)}/identities`, { provider: 'email', user_id: secondary.slice(6) })).status).toBe(201);
        return secondary;
      };
      interface Route {
        method: string;
        scopes: string[];
        status: number;
        /** The request for one scope: its path and body. */
        request: (scope: string) => Promise<{ url: string; body?: unknown }>;
      }
      const routes: Route[] = [
        { method: 'GET', scopes: ['read:users', 'read:user_idp_tokens'], status: 200, request: async () => ({ url: '/users' }) },
        {
          method: 'POST',
          scopes: ['create:users'],
          status: 201,
          request: async () => ({ url: '/users', body: { connection: 'email', email: `scope-${unique()}@example.com` } }),
        },
        { method: 'GET', scopes: ['read:users', 'read:current_user', 'read:user_idp_tokens'], status: 200, request: async () => ({ url: path(target.user_id) }) },
        {
          method: 'PATCH',
          scopes: ['update:users', 'update:users_app_metadata', 'update:current_user_metadata', 'create:current_user_metadata', 'delete:current_user_metadata'],
          status: 200,
          request: async (scope) => ({
            url: path(target.user_id),
            body: { user_metadata: scope === 'delete:current_user_metadata' ? { gone: null } : { [`k${unique()}`]: 1 } },
          }),
        },
        { method: 'DELETE', scopes: ['delete:users', 'delete:current_user'], status: 204, request: async () => ({ url: path((await newDbUser()).user_id) }) },
        { method: 'GET', scopes: ['read:users'], status: 200, request: async () => ({ url: '/users-by-email?email=x@example.com' }) },
        {
          method: 'POST',
          scopes: ['update:users', 'update:current_user_identities'],
          status: 201,
          request: async (scope) => {
            const secondary = await linkable();
            const body = scope.includes('current_user') ? { link_with: await idToken(secondary) } : { provider: 'email', user_id: secondary.slice(6) };
            return { url: `${path(target.user_id)}/identities`, body };
          },
        },
        {
          method: 'DELETE',
          scopes: ['update:users', 'update:current_user_identities'],
          status: 200,
          request: async () => ({ url: `${path(target.user_id)}/identities/email/${(await linked()).slice(6)}` }),
        },
      ];
      for (const route of routes) {
        const denied = await route.request(route.scopes[0]!);
        const refused = await expectError(call(route.method, denied.url, denied.body, unrelated), 403, 'insufficient_scope');
        expect(refused.message, `${route.method} ${denied.url}`).toBe(`Insufficient scope, expected any of: ${route.scopes.join(',')}`);
        for (const scope of route.scopes) {
          const { url, body } = await route.request(scope);
          // current_user scopes come in the user's own token, for the user in the path.
          const subject = decodeURIComponent(url.split('/')[2] ?? '');
          const bearer = scope.includes('current_user') ? await userToken(subject, [scope]) : await managementToken(server, [scope]);
          const res = await call(route.method, url, body, bearer);
          expect(res.status, `${route.method} ${url} with ${scope}: ${await res.clone().text()}`).toBe(route.status);
        }
      }
    });
  });
});
