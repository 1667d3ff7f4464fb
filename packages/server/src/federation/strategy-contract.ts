/**
 * The federation strategy contract: what every strategy must do, written once and run against each with a real
 * upstream (strategies.test.ts), like the storage contract. A new strategy is offered when this suite passes:
 * options validated, secrets write-only and sealed at rest, a full sign-in through the upstream that ends with
 * the application's tokens for a user in the reference's shape, the same user at the second sign-in, an upstream
 * refusal delivered to the application as an OAuth error, and a callback that is accepted once, from its browser.
 * Protocol-neutral: a fixture brings the driver of its upstream (OAuth redirects to oidc-provider by default, a
 * SAML identity provider's auto-posted form for samlp) and names the parameter the trip's state travels in.
 */
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { expect, it } from 'vitest';
import { signInUpstream } from '../test-support/oidc-upstream.js';
import { managementToken, type TestServer } from '../test-support/server.js';
import { management, TestBrowser, type TestApp } from '../test-support/sign-in.js';

export const APP_CALLBACK = 'https://app.example/callback';

/** Where the upstream sends the browser back: a URL it gets (OAuth), or a form it posts there (SAML HTTP-POST). */
export interface UpstreamCallback {
  url: URL;
  form?: Record<string, string>;
}

export interface UpstreamDriver {
  /** Signs in at the upstream as `login` (or refuses there); the callback the upstream sends the browser to. */
  signIn(browser: TestBrowser, upstreamUrl: string, returnTo: string, login: string | { abort: true }): Promise<UpstreamCallback>;
  /** The callback parameter that carries the trip's state (OAuth `state`, SAML `RelayState`). */
  stateParameter: string;
}

/** oidc-provider's login and consent pages, answered by redirect. */
export const OAUTH_UPSTREAM: UpstreamDriver = {
  signIn: async (browser, upstreamUrl, returnTo, login) => ({ url: await signInUpstream(browser, upstreamUrl, returnTo, login) }),
  stateParameter: 'state',
};

export function sendCallback(browser: TestBrowser, callback: UpstreamCallback): Promise<Response> {
  return callback.form ? browser.post(callback.url.href, callback.form) : browser.get(callback.url.href);
}

/** The callback with the state parameter replaced (or removed). */
function withState(callback: UpstreamCallback, name: string, value: string | undefined): UpstreamCallback {
  if (callback.form) {
    const { [name]: _old, ...form } = callback.form;
    return { url: callback.url, form: value === undefined ? form : { ...form, [name]: value } };
  }
  const url = new URL(callback.url);
  if (value === undefined) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return { url };
}

export interface StrategyFixture {
  strategy: string;
  /** The upstream's driver (OAUTH_UPSTREAM when absent). */
  upstream?: UpstreamDriver;
  connection: string;
  /** Options toward the upstream, secrets included (read once the upstream runs). */
  options(): Record<string, unknown>;
  /** The options' secret names and values, which must never be shown or stored in plain. */
  secrets: Record<string, string>;
  /** Options the strategy must refuse, and a word the refusal's message must contain. */
  refused: { options(): Record<string, unknown>; says: string };
  /** The user id the reference gives the upstream subject. */
  userIdOf(sub: string): string;
  isSocial: boolean;
}

export interface ContractContext {
  test(): TestServer;
  app(): TestApp;
}

export interface FlowResult {
  /** The application's callback with its parameters. */
  done: URL;
  browser: TestBrowser;
  verifier: string;
  /** The callback the upstream sent the browser to (for replay). */
  callback: UpstreamCallback;
}

/**
 * /authorize?connection=… → the upstream, logged in as `login` at oidc-provider (or aborted there), or driven by
 * the caller to the URL the upstream sends the browser back to → /login/callback → the application.
 */
export async function federatedSignIn(
  test: TestServer,
  app: TestApp,
  connection: string,
  login: string | { abort: true } | { drive(upstreamUrl: string): Promise<URL | UpstreamCallback> },
  browser = new TestBrowser(),
  driver: UpstreamDriver = OAUTH_UPSTREAM,
): Promise<FlowResult> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: app.client_id,
    redirect_uri: APP_CALLBACK,
    response_type: 'code',
    scope: 'openid profile email',
    state: 'app-state',
    nonce: 'app-nonce',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    connection,
  });
  const start = await browser.get(`${test.url}/authorize?${query}`);
  expect(start.status).toBe(302);
  const upstream = start.headers.get('location')!;
  expect(upstream.startsWith(test.url)).toBe(false);
  const driven = typeof login === 'object' && 'drive' in login ? await login.drive(upstream) : await driver.signIn(browser, upstream, `${test.url}/login/callback`, login);
  const callback = driven instanceof URL ? { url: driven } : driven;
  const done = await browser.follow(test.url, await sendCallback(browser, callback));
  if (!(done instanceof URL)) throw new Error(`expected a redirect to the application, got ${done.status}: ${(await done.text()).slice(0, 400)}`);
  return { done, browser, verifier, callback };
}

export async function redeem(test: TestServer, app: TestApp, result: FlowResult): Promise<Record<string, unknown>> {
  const code = result.done.searchParams.get('code');
  expect(code, result.done.href).toBeTruthy();
  const response = await fetch(`${test.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, code: code!, redirect_uri: APP_CALLBACK, code_verifier: result.verifier }).toString(),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

async function connectionByName(test: TestServer, name: string): Promise<Record<string, unknown>> {
  const list = (await (await management(test, 'GET', `/connections?name=${encodeURIComponent(name)}`)).json()) as Record<string, unknown>[];
  return list[0]!;
}

export function runStrategyContract(fixture: StrategyFixture, context: ContractContext): void {
  const { test, app } = context;
  const driver = fixture.upstream ?? OAUTH_UPSTREAM;
  const sub = `${fixture.strategy}-user-${randomBytes(3).toString('hex')}`;

  it(`${fixture.strategy}: refuses options it cannot use (${fixture.refused.says}) with a 400 in the Management API's shape`, async () => {
    const response = await management(test(), 'POST', '/connections', { name: `${fixture.connection}-bad`, strategy: fixture.strategy, options: fixture.refused.options() });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(String(body.message)).toContain(fixture.refused.says);
  });

  it(`${fixture.strategy}: creates the connection with its secrets write-only and sealed at rest`, async () => {
    const response = await management(test(), 'POST', '/connections', {
      name: fixture.connection,
      strategy: fixture.strategy,
      options: fixture.options(),
      enabled_clients: [app().client_id],
    });
    const text = await response.text();
    expect(response.status, text).toBe(201);
    const read = JSON.stringify(await connectionByName(test(), fixture.connection));
    const row = await test().server.prepared.store.db.selectFrom('connections').select('properties').where('name', '=', fixture.connection).executeTakeFirstOrThrow();
    for (const [name, secret] of Object.entries(fixture.secrets)) {
      expect(text).not.toContain(secret);
      expect(read).not.toContain(secret);
      expect(read).not.toContain(`${name}_sealed`);
      expect(row.properties).not.toContain(secret);
      expect(row.properties).toContain(`${name}_sealed`);
    }
    // Written back as read (without the secrets): they are kept.
    const current = await connectionByName(test(), fixture.connection);
    const patched = await management(test(), 'PATCH', `/connections/${String(current.id)}`, { options: current.options });
    expect(patched.status, await patched.clone().text()).toBe(200);
  });

  it(`${fixture.strategy}: signs in through the upstream and issues the application's tokens for a user in the reference's shape`, async () => {
    const result = await federatedSignIn(test(), app(), fixture.connection, sub, undefined, driver);
    expect(result.done.origin + result.done.pathname).toBe(APP_CALLBACK);
    expect(result.done.searchParams.get('state')).toBe('app-state');
    const tokens = await redeem(test(), app(), result);
    const claims = decodeJwt(String(tokens.id_token));
    expect(claims.sub).toBe(fixture.userIdOf(sub));
    expect(claims.nonce).toBe('app-nonce');
    expect(claims.email).toBe(`${sub}@upstream.example`);
    // With read:users only: the upstream's tokens are for read:user_idp_tokens.
    const readUsers = await managementToken(test(), ['read:users']);
    const user = (await (await fetch(`${test().url}/api/v2/users/${encodeURIComponent(fixture.userIdOf(sub))}`, { headers: { authorization: `Bearer ${readUsers}` } })).json()) as Record<string, unknown>;
    const bar = fixture.userIdOf(sub).indexOf('|');
    expect(user.identities).toEqual([
      { provider: fixture.strategy, user_id: fixture.userIdOf(sub).slice(bar + 1), connection: fixture.connection, isSocial: fixture.isSocial },
    ]);
    expect(user).toMatchObject({ email: `${sub}@upstream.example`, email_verified: true, name: `${sub} Upstream`, logins_count: 1 });
    for (const secret of Object.values(fixture.secrets)) expect(JSON.stringify(user)).not.toContain(secret);
  });

  it(`${fixture.strategy}: finds the same user at the second sign-in`, async () => {
    const result = await federatedSignIn(test(), app(), fixture.connection, sub, undefined, driver);
    const claims = decodeJwt(String((await redeem(test(), app(), result)).id_token));
    expect(claims.sub).toBe(fixture.userIdOf(sub));
    const users = (await (await management(test(), 'GET', `/users-by-email?email=${encodeURIComponent(`${sub}@upstream.example`)}`)).json()) as Record<string, unknown>[];
    expect(users.map((u) => u.user_id)).toEqual([fixture.userIdOf(sub)]);
    expect(users[0]!.logins_count).toBe(2);
  });

  it(`${fixture.strategy}: delivers the upstream's refusal to the application as access_denied`, async () => {
    const result = await federatedSignIn(test(), app(), fixture.connection, { abort: true }, undefined, driver);
    expect(result.done.origin + result.done.pathname).toBe(APP_CALLBACK);
    expect(result.done.searchParams.get('error')).toBe('access_denied');
    expect(result.done.searchParams.get('error_description')).toContain('identity provider');
    expect(result.done.searchParams.get('state')).toBe('app-state');
    expect(result.done.searchParams.get('code')).toBeNull();
  });

  it(`${fixture.strategy}: accepts a callback once, from the browser that left, with a known state`, async () => {
    const result = await federatedSignIn(test(), app(), fixture.connection, sub, undefined, driver);
    expect(result.done.searchParams.get('code')).toBeTruthy();
    // The same callback again, in the same browser: the trip is used.
    const replay = await sendCallback(result.browser, result.callback);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('expired, was already completed');
    // An unknown state, and none.
    expect((await sendCallback(result.browser, withState(result.callback, driver.stateParameter, randomBytes(32).toString('base64url')))).status).toBe(400);
    expect((await sendCallback(result.browser, withState(result.callback, driver.stateParameter, undefined))).status).toBe(400);
  });

  it(`${fixture.strategy}: refuses a callback from another browser (the trip is bound to the one that left)`, async () => {
    const browser = new TestBrowser();
    const verifier = randomBytes(32).toString('base64url');
    const start = await browser.get(
      `${test().url}/authorize?${new URLSearchParams({ client_id: app().client_id, redirect_uri: APP_CALLBACK, response_type: 'code', scope: 'openid', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', connection: fixture.connection })}`,
    );
    const callback = await driver.signIn(browser, start.headers.get('location')!, `${test().url}/login/callback`, sub);
    const other = new TestBrowser();
    const response = await sendCallback(other, callback);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });
}
