/**
 * /authorize?login_ticket=… and POST /co/verify over real HTTP: completion without UI (top-level and
 * web_message), single use, expiry, binding to the client and to the browser cookie of /co/authenticate, and the
 * verification fallback page when that cookie is missing. Runs on SQLite, and on PostgreSQL when reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../login/session.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { postgresAvailable } from '../../test-support/services.js';
import { createApp, createUser, readForm, TestBrowser, type TestApp } from '../../test-support/sign-in.js';
import { devSmsMessages } from '../../messaging/sms.js';
import { codeIn, createPasswordlessConnection, postJson } from '../passwordless/testing.js';

type Dialect = 'sqlite' | 'postgres';
type Json = Record<string, unknown>;

const dialects: Dialect[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];
if (dialects.length === 1) {
  describe('login tickets: PostgreSQL', () => {
    it.skip('PostgreSQL unreachable: skipped', () => undefined);
  });
}

const APP_ORIGIN = 'https://app.example';
const CALLBACK = `${APP_ORIGIN}/callback`;
const VERIFY_PAGE = `${APP_ORIGIN}/co-verify`;
const PASSWORD = 'correct horse battery staple 9';

interface Ticket {
  login_ticket: string;
  co_verifier: string;
  co_id: string;
}

function claimsOf(jwt: string): Json {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Json;
}

describe.each(dialects)('login tickets (%s)', (dialect) => {
  let test: TestServer;
  let app: TestApp;
  let userId: string;

  beforeAll(async () => {
    test = await startTestServer({ dialect });
    app = await createApp(test, { cross_origin_authentication: true, cross_origin_loc: VERIFY_PAGE });
    userId = (await createUser(test, 'ada@example.com', PASSWORD)).user_id;
  });
  afterAll(() => test.close());

  /** /co/authenticate as the browser's credentialed XHR: the browser keeps the cookie it sets. */
  async function issueTicket(browser: TestBrowser, clientId = app.client_id): Promise<Ticket> {
    const response = await fetch(`${test.url}/co/authenticate`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: APP_ORIGIN,
        ...(browser.cookies.size > 0 ? { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
      },
      body: JSON.stringify({ client_id: clientId, username: 'ada@example.com', password: PASSWORD, realm: 'Username-Password-Authentication', credential_type: 'http://auth0.com/oauth/grant-type/password-realm' }),
    });
    expect(response.status).toBe(200);
    for (const line of response.headers.getSetCookie()) {
      const [name = '', value = ''] = line.split(';')[0]!.split('=');
      browser.cookies.set(name, value);
    }
    return (await response.json()) as Ticket;
  }

  function authorizeUrl(ticket: string, extra: Record<string, string> = {}, clientId = app.client_id): string {
    const params = { client_id: clientId, redirect_uri: CALLBACK, response_type: 'token id_token', scope: 'openid profile email', state: 's~1.x', nonce: 'n-1', realm: 'Username-Password-Authentication', login_ticket: ticket, ...extra };
    return `${test.url}/authorize?${new URLSearchParams(params)}`;
  }

  function landedAt(response: Response): { url: URL; params: URLSearchParams } {
    expect([302, 303]).toContain(response.status);
    const url = new URL(response.headers.get('location')!);
    expect(url.origin + url.pathname).toBe(CALLBACK);
    return { url, params: new URLSearchParams(url.hash.slice(1)) };
  }

  it('completes without UI at the top level: tokens for the ticket’s user in the fragment, and an SSO session', async () => {
    const browser = new TestBrowser();
    const ticket = await issueTicket(browser);
    expect(browser.cookies.has('gh_co')).toBe(true);
    const { params } = landedAt(await browser.get(authorizeUrl(ticket.login_ticket)));
    expect(params.get('error')).toBeNull();
    expect(params.get('state')).toBe('s~1.x');
    expect(params.get('token_type')).toBe('Bearer');
    expect(claimsOf(params.get('id_token')!)).toMatchObject({ sub: userId, aud: app.client_id, nonce: 'n-1', iss: test.issuer });
    expect(browser.cookies.has('gh_session')).toBe(true);
    // The session it started answers silent authentication afterwards.
    const silent = landedAt(await browser.get(`${test.url}/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'token', prompt: 'none', state: 'again' })}`));
    expect(silent.params.get('access_token')).toBeTruthy();
  });

  it('is single use: the same ticket a second time is access_denied at the redirect URI', async () => {
    const browser = new TestBrowser();
    const ticket = await issueTicket(browser);
    landedAt(await browser.get(authorizeUrl(ticket.login_ticket)));
    const { params } = landedAt(await browser.get(authorizeUrl(ticket.login_ticket, { state: 'second' })));
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('second');
    expect(params.get('access_token')).toBeNull();
  });

  it('expires: a ticket past its lifetime is refused', async () => {
    const browser = new TestBrowser();
    const ticket = await issueTicket(browser);
    const db = test.server.prepared.store.db;
    const row = await db.selectFrom('cross_origin_tickets').select(['expires_at', 'created_at']).where('ticket_hash', '=', sha256(ticket.login_ticket)).executeTakeFirstOrThrow();
    // 60 seconds, as documented; then move the deadline into the past.
    expect(Number(row.expires_at) - Number(row.created_at)).toBe(60_000);
    await db.updateTable('cross_origin_tickets').set({ expires_at: Date.now() - 1 }).where('ticket_hash', '=', sha256(ticket.login_ticket)).execute();
    expect(landedAt(await browser.get(authorizeUrl(ticket.login_ticket))).params.get('error')).toBe('access_denied');
  });

  it('stores the ticket and verifier hashed only', async () => {
    const ticket = await issueTicket(new TestBrowser());
    const row = await test.server.prepared.store.db.selectFrom('cross_origin_tickets').selectAll().where('id', '=', ticket.co_id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(ticket.login_ticket);
    expect(JSON.stringify(row)).not.toContain(ticket.co_verifier);
    expect(row.ticket_hash).toBe(sha256(ticket.login_ticket));
  });

  it('is bound to its client: another client’s /authorize refuses it, and it is spent', async () => {
    const other = await createApp(test, { cross_origin_authentication: true, cross_origin_loc: VERIFY_PAGE });
    const browser = new TestBrowser();
    const ticket = await issueTicket(browser);
    expect(landedAt(await browser.get(authorizeUrl(ticket.login_ticket, {}, other.client_id))).params.get('error')).toBe('access_denied');
    expect(landedAt(await browser.get(authorizeUrl(ticket.login_ticket))).params.get('error')).toBe('access_denied');
  });

  it('refuses a malformed or unknown ticket without a 500', async () => {
    const browser = new TestBrowser();
    for (const ticket of ['x', 'A'.repeat(43), '<script>'.repeat(10)]) {
      expect(landedAt(await browser.get(authorizeUrl(ticket))).params.get('error')).toBe('access_denied');
    }
  });

  it('satisfies prompt=login and max_age=0: the user has just authenticated', async () => {
    const browser = new TestBrowser();
    const ticket = await issueTicket(browser);
    const { params } = landedAt(await browser.get(authorizeUrl(ticket.login_ticket, { prompt: 'login', max_age: '0' })));
    expect(params.get('access_token')).toBeTruthy();
  });

  it('completes in a web_message iframe: the response page posts tokens to the web origin', async () => {
    const browser = new TestBrowser();
    const ticket = await issueTicket(browser);
    const response = await browser.get(authorizeUrl(ticket.login_ticket, { response_mode: 'web_message', state: 'wm-1' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain(`frame-ancestors ${APP_ORIGIN}`);
    const page = await response.text();
    const data = /<script type="application\/json" id="authorization-response">([^<]*)<\/script>/.exec(page);
    const payload = JSON.parse(data![1]!) as Json;
    expect(payload).toMatchObject({ state: 'wm-1', token_type: 'Bearer' });
    expect(payload.access_token).toBeTruthy();
    expect(page).toContain(`data-target-origin="${APP_ORIGIN}"`);
  });

  it('a ticket from a passwordless code (credential_type passwordless/otp) completes for the sms| user', async () => {
    const sms = await createPasswordlessConnection(test, 'sms', [app.client_id]);
    const phone = `+1555017${dialect === 'sqlite' ? '1' : '2'}234`;
    const started = await postJson(test, '/passwordless/start', { client_id: app.client_id, connection: sms.name, send: 'code', phone_number: phone });
    expect(started.status).toBe(200);
    const code = codeIn(devSmsMessages(test.server.prepared.bootstrap!.tenant.id).filter((m) => m.to === phone).at(-1)!.body);
    const browser = new TestBrowser();
    const response = await fetch(`${test.url}/co/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: APP_ORIGIN },
      body: JSON.stringify({ client_id: app.client_id, username: phone, otp: code, realm: sms.name, credential_type: 'http://auth0.com/oauth/grant-type/passwordless/otp' }),
    });
    expect(response.status).toBe(200);
    const [name = '', value = ''] = response.headers.getSetCookie()[0]!.split(';')[0]!.split('=');
    browser.cookies.set(name, value);
    const ticket = (await response.json()) as Ticket;
    const { params } = landedAt(await browser.get(authorizeUrl(ticket.login_ticket, { realm: sms.name })));
    expect(claimsOf(params.get('id_token')!).sub).toMatch(/^sms\|/);
  });

  describe('without the cookie of /co/authenticate (third-party cookies blocked)', () => {
    /** A ticket issued to one browser (whose cookie the top-level browser never gets). */
    async function fallbackPage(extra: Record<string, string> = {}): Promise<{ browser: TestBrowser; ticket: Ticket; page: string; response: Response }> {
      const ticket = await issueTicket(new TestBrowser());
      const browser = new TestBrowser();
      const response = await browser.get(authorizeUrl(ticket.login_ticket, extra));
      return { browser, ticket, page: await response.text(), response };
    }

    it('shows the verification page: frames cross_origin_loc with #origin, under a CSP framing only that origin', async () => {
      const { response, page, ticket } = await fallbackPage();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain(`frame-src ${APP_ORIGIN}`);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(page).toContain(`data-frame-src="${VERIFY_PAGE}#origin=${encodeURIComponent(new URL(test.url).origin)}"`);
      expect(page).toContain(`data-co-id="${ticket.co_id}"`);
      expect(page).toContain(`data-app-origin="${APP_ORIGIN}"`);
      expect(page).not.toContain(ticket.co_verifier);
      expect(page).not.toContain('access_token');
      const script = /<script src="([^"]+)"/.exec(page)![1]!;
      const asset = await fetch(new URL(script, test.url));
      expect(asset.status).toBe(200);
      expect(await asset.text()).toContain('co_verifier_request');
    });

    it('in a web_message iframe, the verification page may be framed by the web origins only', async () => {
      const { response } = await fallbackPage({ response_mode: 'web_message' });
      expect(response.status).toBe(200);
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain(`frame-ancestors ${APP_ORIGIN}`);
      expect(csp).toContain(`frame-src ${APP_ORIGIN}`);
      expect(response.headers.get('x-frame-options')).toBeNull();
    });

    it('/co/verify with the right verifier finishes the authorization', async () => {
      const { browser, page, ticket } = await fallbackPage({ state: 'fb-1' });
      const form = readForm(page, test.url);
      expect(form.action).toBe(`${test.url}/co/verify`);
      expect(Object.keys(form.fields).sort()).toEqual(['state', 'verifier']);
      const { params } = landedAt(await browser.post(form.action, { ...form.fields, verifier: ticket.co_verifier }));
      expect(params.get('state')).toBe('fb-1');
      expect(claimsOf(params.get('id_token')!)).toMatchObject({ sub: userId, nonce: 'n-1' });
      expect(browser.cookies.has('gh_session')).toBe(true);
    });

    it('/co/verify for a third-party client with prompt=login goes through consent, not back to the login page', async () => {
      const thirdParty = await createApp(test, { cross_origin_authentication: true, cross_origin_loc: VERIFY_PAGE, is_first_party: false });
      const ticket = await issueTicket(new TestBrowser(), thirdParty.client_id);
      const browser = new TestBrowser();
      const page = await (await browser.get(authorizeUrl(ticket.login_ticket, { prompt: 'login', state: 'tp-1' }, thirdParty.client_id))).text();
      const form = readForm(page, test.url);
      const consent = await browser.follow(test.url, await browser.post(form.action, { ...form.fields, verifier: ticket.co_verifier }));
      expect(consent).toBeInstanceOf(Response);
      const consentPage = consent as Response;
      expect(new URL(consentPage.url).pathname).toBe('/u/consent');
      const consentForm = readForm(await consentPage.text(), test.url);
      const landed = await browser.follow(test.url, await browser.post(consentForm.action, { ...consentForm.fields, decision: 'accept' }));
      expect(landed).toBeInstanceOf(URL);
      const params = new URLSearchParams((landed as URL).hash.slice(1));
      expect(params.get('state')).toBe('tp-1');
      expect(params.get('access_token')).toBeTruthy();
    });

    it('/co/verify with a wrong or empty verifier is access_denied, and spends the ticket', async () => {
      const { browser, page, ticket } = await fallbackPage({ state: 'fb-2' });
      const form = readForm(page, test.url);
      const wrong = landedAt(await browser.post(form.action, { ...form.fields, verifier: 'not-the-verifier' }));
      expect(wrong.params.get('error')).toBe('access_denied');
      expect(wrong.params.get('state')).toBe('fb-2');
      const retry = landedAt(await browser.post(form.action, { ...form.fields, verifier: ticket.co_verifier }));
      expect(retry.params.get('error')).toBe('access_denied');

      const empty = await fallbackPage();
      const emptyForm = readForm(empty.page, test.url);
      expect(landedAt(await empty.browser.post(emptyForm.action, emptyForm.fields)).params.get('error')).toBe('access_denied');
    });

    it('/co/verify after the verification deadline is access_denied; reloads never extend past 3 minutes', async () => {
      const { browser, page, ticket } = await fallbackPage();
      const db = test.server.prepared.store.db;
      const row = await db.selectFrom('cross_origin_tickets').selectAll().where('id', '=', ticket.co_id).executeTakeFirstOrThrow();
      expect(row.transaction_id).toBe(readForm(page, test.url).fields.state);
      expect(Number(row.expires_at)).toBeLessThanOrEqual(Number(row.created_at) + 180_000);
      await db.updateTable('cross_origin_tickets').set({ expires_at: Date.now() - 1 }).where('id', '=', ticket.co_id).execute();
      const form = readForm(page, test.url);
      expect(landedAt(await browser.post(form.action, { ...form.fields, verifier: ticket.co_verifier })).params.get('error')).toBe('access_denied');
    });

    it('/co/verify from another browser (without the transaction’s cookie) gets the error page', async () => {
      const { page, ticket } = await fallbackPage();
      const form = readForm(page, test.url);
      const response = await new TestBrowser().post(form.action, { ...form.fields, verifier: ticket.co_verifier });
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).not.toContain('access_token');
    });

    it('/co/verify with no or a made-up state gets the error page, never a 500', async () => {
      const browser = new TestBrowser();
      const attempts: Record<string, string>[] = [{}, { state: 'x'.repeat(32), verifier: 'v' }, { state: '<b>', verifier: '' }];
      for (const fields of attempts) {
        const response = await browser.post(`${test.url}/co/verify`, fields);
        expect(response.status).toBe(400);
      }
    });

    it('without a cross_origin_loc the ticket cannot be verified: access_denied', async () => {
      const bare = await createApp(test, { cross_origin_authentication: true });
      const ticket = await issueTicket(new TestBrowser(), bare.client_id);
      const { params } = landedAt(await new TestBrowser().get(authorizeUrl(ticket.login_ticket, {}, bare.client_id)));
      expect(params.get('error')).toBe('access_denied');
      expect(params.get('error_description')).toContain('cross_origin_loc');
    });
  });
});
