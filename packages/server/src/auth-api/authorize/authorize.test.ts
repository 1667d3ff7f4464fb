/**
 * /authorize over real HTTP with the hosted login form: response types and modes, state and iss, PKCE,
 * prompt, SSO sessions, consent, and every way a request can be refused (error page vs error redirect).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser, type TestApp } from '../../test-support/sign-in.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'correct horse battery staple 9';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function fragmentParams(url: URL): URLSearchParams {
  return new URLSearchParams(url.hash.slice(1));
}

describe('/authorize', () => {
  let test: TestServer;
  let spa: TestApp;

  beforeAll(async () => {
    test = await startTestServer();
    spa = await createApp(test);
    await createUser(test, 'ada@example.com', PASSWORD);
  });
  afterAll(() => test.close());

  const base = () => ({ client_id: spa.client_id, redirect_uri: CALLBACK });

  it('code + PKCE: logs in through the hosted page and returns code, state byte for byte, and iss', async () => {
    const browser = new TestBrowser();
    const { challenge } = pkce();
    const state = 'a+b c~d.e_f/é&=';
    const landed = await logIn(
      test,
      browser,
      { ...base(), response_type: 'code', scope: 'openid profile', state, code_challenge: challenge, code_challenge_method: 'S256', foo: 'ignored' },
      { username: 'ada@example.com', password: PASSWORD },
    );
    expect(landed.origin + landed.pathname).toBe(CALLBACK);
    expect(landed.search).not.toContain('+');
    expect(landed.searchParams.get('state')).toBe(state);
    expect(landed.searchParams.get('iss')).toBe(test.issuer);
    expect(landed.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  /** A browser that already holds an SSO session for ada. */
  async function signedIn(): Promise<TestBrowser> {
    const browser = new TestBrowser();
    await logIn(test, browser, { ...base(), response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256' }, { username: 'ada@example.com', password: PASSWORD });
    return browser;
  }

  it('implicit id_token token: tokens in the fragment with iss and state; the ID token carries the nonce', async () => {
    const browser = await signedIn();
    const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'id_token token', scope: 'openid email', nonce: 'n-0S6_WzA2Mj', state: 's1' })}`);
    expect(response.status).toBe(302);
    const landed = new URL(response.headers.get('location')!);
    const params = fragmentParams(landed);
    expect(landed.search).toBe('');
    expect(params.get('state')).toBe('s1');
    expect(params.get('iss')).toBe(test.issuer);
    expect(params.get('token_type')).toBe('Bearer');
    expect(Number(params.get('expires_in'))).toBeGreaterThan(0);
    const idToken = params.get('id_token')!;
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: test.issuer, aud: spa.client_id, nonce: 'n-0S6_WzA2Mj', email: 'ada@example.com' });
    expect(typeof claims.at_hash).toBe('string');
    expect(typeof claims.sid).toBe('string');
  });

  it('refuses an ID token from /authorize without a nonce, at the redirect URI in the fragment', async () => {
    const browser = await signedIn();
    const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'id_token', scope: 'openid', state: 'x' })}`);
    const params = fragmentParams(new URL(response.headers.get('location')!));
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toMatch(/nonce/);
    expect(params.get('state')).toBe('x');
    expect(params.get('iss')).toBe(test.issuer);
  });

  describe('RFC 9700 §4.1/§4.11: exact redirect URIs and no open redirector (checklist 1, 2)', () => {
    const variants = [
      `${CALLBACK}/`,
      `${CALLBACK}?x=1`,
      'https://app.example/callback/../evil',
      'https://APP.example/callback',
      'https://app.example/Callback',
      'https://evil.example/callback',
      '',
    ];
    for (const redirect of variants) {
      it(`shows the error page for redirect_uri ${JSON.stringify(redirect)} and never redirects`, async () => {
        const response = await fetch(`${test.url}/authorize?${new URLSearchParams({ client_id: spa.client_id, redirect_uri: redirect, response_type: 'code', state: 's' })}`, { redirect: 'manual' });
        expect(response.status).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        expect(response.headers.get('content-type')).toMatch(/text\/html/);
        expect(await response.text()).toMatch(/redirect_uri/);
      });
    }
    it('an unknown client with an evil redirect URI gets the error page, no redirect', async () => {
      const response = await fetch(`${test.url}/authorize?client_id=nope&redirect_uri=${encodeURIComponent('https://evil.example/')}&response_type=code`, { redirect: 'manual' });
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    });
    it('a repeated client_id or redirect_uri is refused on the error page', async () => {
      const response = await fetch(`${test.url}/authorize?client_id=${spa.client_id}&client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code`, { redirect: 'manual' });
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    });
  });

  describe('PKCE (checklist 3, 5)', () => {
    it('refuses code_challenge_method=plain', async () => {
      const response = await fetch(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain', state: 'p' })}`, { redirect: 'manual' });
      const landed = new URL(response.headers.get('location')!);
      expect(landed.searchParams.get('error')).toBe('invalid_request');
      expect(landed.searchParams.get('error_description')).toMatch(/S256/);
      expect(landed.searchParams.get('state')).toBe('p');
    });
    it('requires PKCE of a public client asking for a code', async () => {
      const response = await fetch(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code' })}`, { redirect: 'manual' });
      const landed = new URL(response.headers.get('location')!);
      expect(landed.searchParams.get('error')).toBe('invalid_request');
      expect(landed.searchParams.get('error_description')).toMatch(/PKCE/);
    });
  });

  it('response types the client is not allowed and unknown ones are refused at the redirect URI', async () => {
    const noImplicit = await createApp(test, { grant_types: ['authorization_code'] });
    const refused = await fetch(`${test.url}/authorize?${new URLSearchParams({ client_id: noImplicit.client_id, redirect_uri: CALLBACK, response_type: 'token', nonce: 'n', state: 'q' })}`, { redirect: 'manual' });
    expect(fragmentParams(new URL(refused.headers.get('location')!)).get('error')).toBe('unauthorized_client');
    const unknown = await fetch(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code bogus' })}`, { redirect: 'manual' });
    expect(new URL(unknown.headers.get('location')!).searchParams.get('error')).toBe('unsupported_response_type');
  });

  describe('silent authentication (prompt=none)', () => {
    it('answers login_required with state and iss when there is no session', async () => {
      const response = await fetch(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code', prompt: 'none', state: 'silent', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`, { redirect: 'manual' });
      const landed = new URL(response.headers.get('location')!);
      expect(landed.searchParams.get('error')).toBe('login_required');
      expect(landed.searchParams.get('state')).toBe('silent');
      expect(landed.searchParams.get('iss')).toBe(test.issuer);
    });
    it('answers from the session without any page when there is one', async () => {
      const browser = await signedIn();
      const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code', prompt: 'none', state: 'silent', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
      expect(response.status).toBe(302);
      expect(new URL(response.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    });
    it('prompt=login and max_age=0 send a signed-in user back to the login page', async () => {
      const browser = await signedIn();
      for (const extra of [{ prompt: 'login' }, { max_age: '0' }] as Record<string, string>[]) {
        const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256', ...extra })}`);
        expect(response.status).toBe(302);
        expect(response.headers.get('location')).toMatch(/^\/u\/login\?state=/);
      }
    });
  });

  it('form_post: an auto-submitting form to the redirect URI, allowed by its CSP form-action', async () => {
    const browser = await signedIn();
    const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code', response_mode: 'form_post', state: 'fp', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
    expect(response.status).toBe(200);
    const page = await response.text();
    const form = readForm(page, test.url);
    expect(form.action).toBe(CALLBACK);
    expect(form.fields.state).toBe('fp');
    expect(form.fields.iss).toBe(test.issuer);
    expect(form.fields.code).toBeTruthy();
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(/form-action [^;]*https:\/\/app\.example/);
    expect(csp).not.toContain('unsafe-inline');
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)(?![^>]*application\/json)[^>]*>/);
  });

  describe('web_message', () => {
    it('posts to the redirect URI origin from a page only the client web origins may frame', async () => {
      const browser = await signedIn();
      const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'token id_token', response_mode: 'web_message', prompt: 'none', nonce: 'n1', scope: 'openid', state: 'wm' })}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain('frame-ancestors https://app.example');
      expect(response.headers.get('x-frame-options')).toBeNull();
      const page = await response.text();
      expect(page).toContain('https://app.example');
      expect(page).toContain('"state":"wm"');
    });
    it('refuses a redirect URI whose origin is not an allowed web origin, on the error page', async () => {
      const other = await createApp(test, { callbacks: ['https://other.example/cb'], web_origins: ['https://app.example'] });
      const response = await fetch(`${test.url}/authorize?${new URLSearchParams({ client_id: other.client_id, redirect_uri: 'https://other.example/cb', response_type: 'token', response_mode: 'web_message', prompt: 'none', nonce: 'n' })}`, { redirect: 'manual' });
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    });
    it('never shows UI: without a session it answers login_required in the message', async () => {
      const response = await fetch(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'token id_token', response_mode: 'web_message', nonce: 'n1', scope: 'openid', state: 'wm2' })}`, { redirect: 'manual' });
      expect(response.status).toBe(200);
      const page = await response.text();
      expect(page).toContain('login_required');
      expect(page).not.toContain('<form');
    });
  });

  describe('consent for third-party applications', () => {
    it('asks once, remembers, answers consent_required silently, and declining returns access_denied', async () => {
      const third = await createApp(test, { is_first_party: false, name: 'Third Party & Co' });
      const browser = await signedIn();
      const query = { client_id: third.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email', code_challenge: pkce().challenge, code_challenge_method: 'S256' };
      const silent = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...query, prompt: 'none', state: 'c0' })}`);
      expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('consent_required');

      const declined = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...query, state: 'c1' })}`));
      const declinePage = await (declined as Response).text();
      expect(declinePage).toContain('Third Party &amp; Co');
      const declineForm = readForm(declinePage, test.url);
      const denied = await browser.post(declineForm.action, { ...declineForm.fields, decision: 'deny' });
      expect(denied.status).toBe(303);
      const deniedAt = new URL(denied.headers.get('location')!);
      expect(deniedAt.searchParams.get('error')).toBe('access_denied');
      expect(deniedAt.searchParams.get('state')).toBe('c1');

      const consent = await browser.follow(test.url, await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...query, state: 'c2' })}`));
      const form = readForm(await (consent as Response).text(), test.url);
      const accepted = await browser.follow(test.url, await browser.post(form.action, { ...form.fields, decision: 'accept' }));
      expect(accepted).toBeInstanceOf(URL);
      expect((accepted as URL).searchParams.get('code')).toBeTruthy();

      const again = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...query, prompt: 'none', state: 'c3' })}`);
      expect(new URL(again.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    });
  });

  it('bad input never gives a 500: wrong types, repeats, oversized values, unknown parameters', async () => {
    const cases = [
      `client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&state=a&state=b`,
      `client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&state=${'x'.repeat(5000)}`,
      `client_id=${'c'.repeat(5000)}`,
      `client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&max_age=-1`,
      `client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&prompt=none%20login`,
      `client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&response_mode=bogus`,
      `client_id=${spa.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&connection=nope`,
      `client_id[a]=1`,
      '',
    ];
    for (const query of cases) {
      const response = await fetch(`${test.url}/authorize?${query}`, { redirect: 'manual' });
      expect(response.status, query.slice(0, 80)).toBeLessThan(500);
      if (response.status === 302) expect(new URL(response.headers.get('location')!).searchParams.get('error') ?? fragmentParams(new URL(response.headers.get('location')!)).get('error')).toBeTruthy();
    }
    const post = await fetch(`${test.url}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: '{"client_id": 5}' });
    expect(post.status).toBeLessThan(500);
  });

  it('never answers CORS on /authorize (checklist 20)', async () => {
    const preflight = await fetch(`${test.url}/authorize`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const simple = await fetch(`${test.url}/authorize?client_id=${spa.client_id}`, { headers: { origin: 'https://app.example' }, redirect: 'manual' });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('accepts POST /authorize with a form body and answers with 303', async () => {
    const browser = await signedIn();
    const response = await browser.post(`${test.url}/authorize`, { ...base(), response_type: 'code', state: 'post', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    expect(response.status).toBe(303);
    expect(new URL(response.headers.get('location')!).searchParams.get('state')).toBe('post');
  });

  it('gives a first-party SPA a Management API token with the current-user scopes only (library rule 7)', async () => {
    const browser = await signedIn();
    const audience = `${test.url}/api/v2/`;
    const response = await browser.get(
      `${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'token', audience, scope: 'openid read:current_user update:current_user_metadata read:users', nonce: 'n', state: 'm' })}`,
    );
    const params = fragmentParams(new URL(response.headers.get('location')!));
    const accessToken = params.get('access_token')!;
    const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { aud: string[]; scope: string; sub: string };
    expect(claims.aud).toContain(audience);
    expect(claims.scope.split(' ').sort()).toEqual(['openid', 'read:current_user', 'update:current_user_metadata']);
    const own = await fetch(`${test.url}/api/v2/users/${encodeURIComponent(claims.sub)}`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(own.status).toBe(200);
    const patched = await fetch(`${test.url}/api/v2/users/${encodeURIComponent(claims.sub)}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user_metadata: { theme: 'dark' } }),
    });
    expect(patched.status).toBe(200);
    const others = await fetch(`${test.url}/api/v2/users`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(others.status).toBe(403);
  });

  it('a connection that is not enabled for the client is refused; an unknown audience is access_denied', async () => {
    const browser = await signedIn();
    const response = await browser.get(`${test.url}/authorize?${new URLSearchParams({ ...base(), response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256', audience: 'https://unknown.example/api' })}`);
    const landed = new URL(response.headers.get('location')!);
    expect(landed.searchParams.get('error')).toBe('access_denied');
    void management;
  });
});
