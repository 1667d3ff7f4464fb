/**
 * The `oidc` strategy's own rules against an upstream whose ID tokens the test chooses (crafted-upstream.ts):
 * what it sends upstream (PKCE S256, nonce, client_secret_basic by default, private_key_jwt), every ID token
 * check (issuer, audience, signature, expiry with skew, nonce), the front channel (form_post id_token), an
 * upstream that cannot be reached, and the sign-in around it (the login page's button, the SSO session,
 * prompt=none). The contract every strategy meets is in strategy-contract.ts.
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../events/outbox.js';
import { startCraftedUpstream, type CraftedUpstream, type IdTokenFlaw } from '../test-support/crafted-upstream.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';
import { createApp, management, readForm, TestBrowser, type TestApp } from '../test-support/sign-in.js';
import { APP_CALLBACK } from './strategy-contract.js';

const CLIENT_ID = 'gatehouse-at-crafted';
const SECRET = 'crafted-upstream-secret-0123456789';

let test: TestServer;
let app: TestApp;
let upstream: CraftedUpstream;

async function createConnection(name: string, options: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await management(test, 'POST', '/connections', {
    name,
    strategy: 'oidc',
    options: {
      client_id: CLIENT_ID,
      issuer: upstream.issuer,
      authorization_endpoint: `${upstream.issuer}/authorize`,
      token_endpoint: `${upstream.issuer}/token`,
      jwks_uri: `${upstream.issuer}/jwks`,
      ...options,
    },
    enabled_clients: [app.client_id],
  });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body;
}

beforeAll(async () => {
  test = await startTestServer();
  app = await createApp(test);
  upstream = await startCraftedUpstream(CLIENT_ID);
  await createConnection('crafted', { client_secret: SECRET });
});
afterAll(async () => {
  await upstream?.close();
  await test?.close();
});

function authorizeUrl(connection: string | undefined, extra: Record<string, string> = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: app.client_id,
    redirect_uri: APP_CALLBACK,
    response_type: 'code',
    scope: 'openid profile email',
    state: 'app-state',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(connection && { connection }),
    ...extra,
  });
  return { url: `${test.url}/authorize?${query}`, verifier };
}

/** The crafted upstream sends the browser straight back: /authorize → upstream → /login/callback → the application. */
async function signIn(connection: string, browser = new TestBrowser()): Promise<{ done: URL; browser: TestBrowser; upstreamRequest: URL }> {
  const start = await browser.get(authorizeUrl(connection).url);
  expect(start.status).toBe(302);
  const upstreamRequest = new URL(start.headers.get('location')!);
  expect(upstreamRequest.origin).toBe(upstream.issuer);
  const done = await browser.follow(test.url, await browser.get(upstreamRequest.href));
  if (!(done instanceof URL)) throw new Error(`ended on a page: ${done.status}`);
  return { done, browser, upstreamRequest };
}

describe('oidc strategy toward its upstream', () => {
  it('sends PKCE S256, a nonce and a state upstream, and authenticates with client_secret_basic by default', async () => {
    upstream.flaw = 'none';
    upstream.subject = 'basic-user';
    const { done, upstreamRequest } = await signIn('crafted');
    expect(done.searchParams.get('code')).toBeTruthy();
    const q = upstreamRequest.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('nonce')!.length).toBeGreaterThanOrEqual(32);
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(32);
    expect(q.get('redirect_uri')).toBe(`${test.url}/login/callback`);
    expect(upstreamRequest.href).not.toContain(SECRET);
    const sent = upstream.tokenRequests.at(-1)!;
    // RFC 6749 §2.3.1: id and secret form-encoded, then Basic.
    const [scheme, credentials] = sent.authorization!.split(' ');
    expect(scheme).toBe('Basic');
    expect(Buffer.from(credentials!, 'base64').toString().split(':').map(decodeURIComponent)).toEqual([CLIENT_ID, SECRET]);
    expect(sent.form.get('client_secret')).toBeNull();
    expect(createHash('sha256').update(sent.form.get('code_verifier')!).digest('base64url')).toBe(q.get('code_challenge'));
  });

  const refused: [IdTokenFlaw, RegExp][] = [
    ['issuer', /iss/],
    ['audience', /aud/],
    ['signature', /signature/i],
    ['expired', /exp|timestamp/i],
    ['nonce', /nonce/],
  ];
  for (const [flaw, said] of refused) {
    it(`refuses an ID token with a wrong ${flaw}: access_denied at the application, no user`, async () => {
      upstream.flaw = flaw;
      upstream.subject = `flawed-${flaw}`;
      const { done } = await signIn('crafted');
      expect(done.origin + done.pathname).toBe(APP_CALLBACK);
      expect(done.searchParams.get('error')).toBe('access_denied');
      expect(done.searchParams.get('error_description')).toMatch(said);
      expect(done.searchParams.get('state')).toBe('app-state');
      expect(done.searchParams.get('code')).toBeNull();
      const user = await management(test, 'GET', `/users/${encodeURIComponent(`oidc|crafted|flawed-${flaw}`)}`);
      expect(user.status).toBe(404);
    });
  }

  it('accepts an ID token expired by less than the clock tolerance (60 s)', async () => {
    upstream.flaw = 'recently-expired';
    upstream.subject = 'skewed-user';
    const { done } = await signIn('crafted');
    expect(done.searchParams.get('code')).toBeTruthy();
  });

  it('signs in by the front channel: the upstream form_posts an ID token to /login/callback', async () => {
    await createConnection('crafted-front', { type: 'front_channel' });
    upstream.flaw = 'none';
    upstream.subject = 'front-user';
    const browser = new TestBrowser();
    const start = await browser.get(authorizeUrl('crafted-front').url);
    const upstreamRequest = new URL(start.headers.get('location')!);
    expect(upstreamRequest.searchParams.get('response_type')).toBe('id_token');
    expect(upstreamRequest.searchParams.get('response_mode')).toBe('form_post');
    const page = await (await browser.get(upstreamRequest.href)).text();
    const fields = Object.fromEntries([...page.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const posted = await browser.post(`${test.url}/login/callback`, fields);
    expect(posted.status).toBe(303);
    const done = await browser.follow(test.url, posted);
    expect(done instanceof URL && done.searchParams.get('code')).toBeTruthy();
    expect((await management(test, 'GET', `/users/${encodeURIComponent('oidc|crafted-front|front-user')}`)).status).toBe(200);
    // The front channel answers by form_post only.
    const other = new TestBrowser();
    const again = await other.get(authorizeUrl('crafted-front').url);
    const state = new URL(again.headers.get('location')!).searchParams.get('state')!;
    const redirected = await other.follow(test.url, await other.get(`${test.url}/login/callback?state=${state}&id_token=x`));
    expect(redirected instanceof URL && redirected.searchParams.get('error')).toBe('invalid_request');
  });

  it('authenticates with private_key_jwt: an assertion signed by the configured key, which is never shown', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const created = await createConnection('crafted-pkjwt', { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_private_key: pem });
    expect(JSON.stringify(created)).not.toContain('PRIVATE KEY');
    upstream.flaw = 'none';
    upstream.subject = 'pkjwt-user';
    const { done } = await signIn('crafted-pkjwt');
    expect(done.searchParams.get('code')).toBeTruthy();
    const sent = upstream.tokenRequests.at(-1)!;
    expect(sent.authorization).toBeUndefined();
    expect(sent.form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const { payload } = await jwtVerify(sent.form.get('client_assertion')!, createPublicKey(privateKey), { issuer: CLIENT_ID, subject: CLIENT_ID });
    expect(payload.aud).toBeDefined();
    const badKey = await management(test, 'POST', '/connections', {
      name: 'crafted-badkey',
      strategy: 'oidc',
      options: { client_id: 'x', discovery_url: `${upstream.issuer}/.well-known/openid-configuration`, token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_private_key: 'not a key' },
    });
    expect(badKey.status).toBe(400);
  });

  it('ends with temporarily_unavailable at the application when the upstream cannot be reached', async () => {
    await createConnection('crafted-down', { client_secret: SECRET, token_endpoint: 'http://127.0.0.1:9/token' });
    upstream.flaw = 'none';
    const { done } = await signIn('crafted-down');
    expect(done.searchParams.get('error')).toBe('temporarily_unavailable');
    expect(done.searchParams.get('error_description')).toMatch(/could not be reached/);
    await createConnection('discovery-down', { client_secret: SECRET, issuer: undefined, discovery_url: 'http://127.0.0.1:9/.well-known/openid-configuration' });
    const browser = new TestBrowser();
    const start = await browser.get(authorizeUrl('discovery-down').url);
    expect(start.status).toBe(302);
    const location = new URL(start.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(APP_CALLBACK);
    expect(location.searchParams.get('error')).toBe('temporarily_unavailable');
  });

  it('refuses options that cannot work, with a clear 400', async () => {
    const cases: Record<string, unknown>[] = [
      { client_id: 'x', client_secret: 's' },
      { client_id: 'x', client_secret: 's', discovery_url: 'http://upstream.example/.well-known/openid-configuration' },
      { client_id: 'x', discovery_url: 'https://upstream.example/.well-known/openid-configuration' },
      { client_id: 'x', client_secret: 's', discovery_url: 'https://upstream.example/.well-known/openid-configuration', scope: 'profile' },
      { client_id: 'x', client_secret: 's', discovery_url: 'https://upstream.example/.well-known/openid-configuration', type: 'sideways' },
      { client_id: 'x', client_secret: 's', discovery_url: 'https://upstream.example/.well-known/openid-configuration', upstream_params: { state: { value: 'x' } } },
      { client_id: 12, client_secret: 's', discovery_url: 'https://upstream.example/.well-known/openid-configuration' },
      { client_id: 'x'.repeat(100_000), client_secret: 's', discovery_url: 'https://upstream.example/.well-known/openid-configuration' },
    ];
    for (const options of cases) {
      const response = await management(test, 'POST', '/connections', { name: 'refused', strategy: 'oidc', options });
      expect(response.status, JSON.stringify(options).slice(0, 200)).toBe(400);
      expect(((await response.json()) as { message: string }).message).toBeTruthy();
    }
  });
});

describe('malformed input at /login/callback and the login buttons', () => {
  it('answers 4xx in the family shape, never a 5xx', async () => {
    const browser = new TestBrowser();
    const start = await browser.get(authorizeUrl('crafted').url);
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const cases: [string, RequestInit][] = [
      [`/login/callback?state=${state}&state=${state}`, {}],
      [`/login/callback?state=${'a'.repeat(5000)}`, {}],
      [`/login/callback?state=%E0%A4%A&code=x`, {}],
      ['/login/callback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ state: [state], code: { a: 1 } }) }],
      ['/login/callback', { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '<x/>' }],
      [`/u/login/federated?state=${'b'.repeat(32)}&connection=${'c'.repeat(3000)}`, {}],
      ['/u/login/federated?connection=crafted', {}],
    ];
    for (const [path, init] of cases) {
      const response = await fetch(`${test.url}${path}`, { redirect: 'manual', ...init, headers: { ...(init.headers as Record<string, string>), cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      expect(response.status, path.slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(response.status, path.slice(0, 80)).toBeLessThan(500);
    }
    // The trip is still unused: a garbled answer to it ends at the application as an OAuth error.
    const garbled = await browser.post(`${test.url}/login/callback`, { state, id_token: '%%%' });
    expect(garbled.status).toBe(303);
    expect(new URL(garbled.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('a federated sign-in in the rest of /authorize', () => {
  it("shows a button per federated connection on the login page, which goes upstream and completes", async () => {
    await createConnection('crafted-hidden', { client_secret: SECRET });
    const hidden = (await (await management(test, 'GET', '/connections?name=crafted-hidden')).json()) as { id: string }[];
    expect((await management(test, 'PATCH', `/connections/${hidden[0]!.id}`, { show_as_button: false })).status).toBe(200);
    await createConnection('crafted-icon', { client_secret: SECRET, icon_url: 'https://icons.example/acme.svg' });
    upstream.flaw = 'none';
    upstream.subject = 'button-user';
    const browser = new TestBrowser();
    const page = await browser.follow(test.url, await browser.get(authorizeUrl(undefined).url));
    const html = await (page as Response).text();
    const button = /<a class="button button-secondary" href="([^"]+)">Continue with crafted<\/a>/.exec(html)?.[1];
    // show_as_button: false keeps a connection off the page (it stays usable by connection=).
    expect(html).not.toContain('Continue with crafted-hidden');
    expect(html).toContain('<img class="federated-icon" src="https://icons.example/acme.svg"');
    expect(button).toBeDefined();
    expect(html).toContain('name="password"');
    const leaving = await browser.get(new URL(button!.replace(/&amp;/g, '&'), test.url).href);
    expect(new URL(leaving.headers.get('location')!).origin).toBe(upstream.issuer);
    const done = await browser.follow(test.url, await browser.get(leaving.headers.get('location')!));
    expect(done instanceof URL && done.searchParams.get('code')).toBeTruthy();
  });

  it("sends an email of an enterprise connection's domain (domain_aliases) to its identity provider from the login form", async () => {
    await createConnection('acme-corp', { client_secret: SECRET, domain_aliases: ['acme.example'] });
    upstream.flaw = 'none';
    upstream.subject = 'bob';
    const browser = new TestBrowser();
    const page = await browser.follow(test.url, await browser.get(authorizeUrl(undefined).url));
    const form = readForm(await (page as Response).text(), test.url);
    const leaving = await browser.post(form.action, { ...form.fields, username: 'Bob@ACME.example', password: '' });
    expect(leaving.status).toBe(303);
    expect(new URL(leaving.headers.get('location')!).origin).toBe(upstream.issuer);
    const done = await browser.follow(test.url, await browser.get(leaving.headers.get('location')!));
    expect(done instanceof URL && done.searchParams.get('code')).toBeTruthy();
    expect((await management(test, 'GET', `/users/${encodeURIComponent('oidc|acme-corp|bob')}`)).status).toBe(200);
    // Other domains still log in with a password here.
    const person = new TestBrowser();
    const otherPage = await person.follow(test.url, await person.get(authorizeUrl(undefined).url));
    const otherForm = readForm(await (otherPage as Response).text(), test.url);
    const refused = await person.post(otherForm.action, { ...otherForm.fields, username: 'bob@elsewhere.example', password: 'wrong password here' });
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toMatch(/^\/u\/login\?/);
  });

  it('keeps the SSO session: the next /authorize for the connection answers without going upstream; prompt=none without one gives login_required', async () => {
    upstream.flaw = 'none';
    upstream.subject = 'sso-user';
    const { browser } = await signIn('crafted');
    const count = upstream.authorizations.length;
    const again = authorizeUrl('crafted', { nonce: 'second' });
    const response = await browser.get(again.url);
    const done = new URL(response.headers.get('location')!);
    expect(done.origin + done.pathname).toBe(APP_CALLBACK);
    expect(upstream.authorizations.length).toBe(count);
    const token = await fetch(`${test.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, code: done.searchParams.get('code')!, redirect_uri: APP_CALLBACK, code_verifier: again.verifier }).toString(),
    });
    const claims = decodeJwt(String(((await token.json()) as Record<string, unknown>).id_token));
    expect(claims).toMatchObject({ sub: 'oidc|crafted|sso-user', nonce: 'second', email: 'sso-user@crafted.example' });

    const silent = await new TestBrowser().get(authorizeUrl('crafted', { prompt: 'none' }).url);
    const answer = new URL(silent.headers.get('location')!);
    expect(answer.searchParams.get('error')).toBe('login_required');
  });

  it('writes the tenant log: s for a federated login, f with the reason for a refused one; a blocked user is refused', async () => {
    upstream.flaw = 'none';
    upstream.subject = 'logged-user';
    await signIn('crafted');
    upstream.flaw = 'audience';
    await signIn('crafted');
    upstream.flaw = 'none';
    const userId = 'oidc|crafted|logged-user';
    const blocked = await management(test, 'PATCH', `/users/${encodeURIComponent(userId)}`, { blocked: true });
    expect(blocked.status).toBe(200);
    const { done } = await signIn('crafted');
    expect(done.searchParams.get('error')).toBe('access_denied');
    expect(done.searchParams.get('error_description')).toBe('user is blocked');
    await expect
      .poll(async () => {
        const logs = (await (await management(test, 'GET', `/logs?q=${encodeURIComponent('connection:"crafted"')}&per_page=100`)).json()) as Record<string, unknown>[];
        return logs.map((l) => `${String(l.type)}:${String(l.user_id ?? '-')}:${String(l.strategy_type)}:${/aud/.test(String(l.description)) ? 'aud' : ''}`);
      })
      .toEqual(expect.arrayContaining([`s:${userId}:enterprise:`, 'f:-:enterprise:aud', `f:${userId}:enterprise:`]));
  });

  it('signs in the primary user once the federated identity is linked to a database user', async () => {
    upstream.flaw = 'none';
    upstream.subject = 'linked-user';
    await signIn('crafted');
    const primary = (await (await management(test, 'POST', '/users', { connection: 'Username-Password-Authentication', email: 'primary@example.com', password: 'correct horse battery staple 9' })).json()) as { user_id: string };
    const linked = await management(test, 'POST', `/users/${encodeURIComponent(primary.user_id)}/identities`, { provider: 'oidc', user_id: 'crafted|linked-user' });
    expect(linked.status).toBe(201);
    const identities = (await linked.json()) as Record<string, unknown>[];
    expect(identities[1]).toMatchObject({ provider: 'oidc', user_id: 'crafted|linked-user', connection: 'crafted', isSocial: false });
    const browser = new TestBrowser();
    const start = authorizeUrl('crafted');
    const leaving = await browser.get(start.url);
    const done = await browser.follow(test.url, await browser.get(leaving.headers.get('location')!));
    expect((done as URL).searchParams.get('error_description')).toBeNull();
    const code = (done as URL).searchParams.get('code')!;
    const token = await fetch(`${test.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, code, redirect_uri: APP_CALLBACK, code_verifier: start.verifier }).toString(),
    });
    const tokens = (await token.json()) as Record<string, unknown>;
    expect(tokens.id_token, JSON.stringify(tokens)).toBeDefined();
    expect(decodeJwt(String(tokens.id_token)).sub).toBe(primary.user_id);
  });

  it('owes the second factor the tenant requires before the session starts', async () => {
    expect((await management(test, 'PUT', '/guardian/factors/otp', { enabled: true })).status).toBe(200);
    expect((await management(test, 'PUT', '/guardian/policies', ['all-applications'])).status).toBe(200);
    try {
      upstream.flaw = 'none';
      upstream.subject = 'mfa-user';
      const browser = new TestBrowser();
      const leaving = await browser.get(authorizeUrl('crafted').url);
      const back = await browser.get(leaving.headers.get('location')!);
      const callback = await browser.get(back.headers.get('location')!);
      expect(callback.status).toBe(302);
      expect(callback.headers.get('location')).toMatch(/^\/u\/mfa\?state=/);
      expect(browser.cookies.has('gh_session')).toBe(false);
    } finally {
      await management(test, 'PUT', '/guardian/policies', []);
      await management(test, 'PUT', '/guardian/factors/otp', { enabled: false });
    }
  });

  it("keeps the upstream's access token sealed, and shows it only to read:user_idp_tokens", async () => {
    upstream.flaw = 'none';
    upstream.subject = 'token-holder';
    await signIn('crafted');
    const accessToken = upstream.lastAccessToken!;
    const userId = 'oidc|crafted|token-holder';
    const read = async (scopes: string[]) => {
      const token = await managementToken(test, scopes);
      const response = await fetch(`${test.url}/api/v2/users/${encodeURIComponent(userId)}`, { headers: { authorization: `Bearer ${token}` } });
      return (await response.json()) as { identities: Record<string, unknown>[] };
    };
    expect((await read(['read:users'])).identities[0]!.access_token).toBeUndefined();
    expect((await read(['read:users', 'read:user_idp_tokens'])).identities[0]!.access_token).toBe(accessToken);
    const list = await management(test, 'GET', `/users?q=${encodeURIComponent('user_id:"oidc|crafted|token-holder"')}`);
    expect(await list.text()).not.toContain(accessToken);
    const row = await test.server.prepared.store.db.selectFrom('federated_identities').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
    expect(row.access_token_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(accessToken);
  });

  it('creates the user at the first login (user.created), refreshes its profile at the next (user.updated when it changed)', async () => {
    upstream.flaw = 'none';
    upstream.subject = 'changing-user';
    upstream.name = 'First Name';
    const userId = 'oidc|crafted|changing-user';
    const path = `/users/${encodeURIComponent(userId)}`;
    const { db } = test.server.prepared.store;
    const tenantId = test.server.prepared.bootstrap!.tenant.id;
    const about = async (type: 'user.created' | 'user.updated') =>
      (await listEvents(db, tenantId, { type })).filter((e) => (e.data as { object: { user_id: string } }).object.user_id === userId);
    await signIn('crafted');
    expect(((await (await management(test, 'GET', path)).json()) as Record<string, unknown>).name).toBe('First Name');
    expect(await about('user.created')).toHaveLength(1);
    await signIn('crafted');
    expect(await about('user.updated')).toHaveLength(0);
    upstream.name = 'Second Name';
    await signIn('crafted');
    const user = (await (await management(test, 'GET', path)).json()) as Record<string, unknown>;
    expect(user).toMatchObject({ name: 'Second Name', logins_count: 3 });
    const updated = await about('user.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0]!.data).toMatchObject({ object: { name: 'Second Name' }, previous_object: { name: 'First Name' } });
    upstream.name = 'Crafted User';
  });
});
