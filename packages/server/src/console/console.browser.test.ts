/**
 * The admin console in real Chromium against the real server (#15), the acceptance's workflows in order, one
 * browser for the file:
 *  - the first admin follows the setup link printed at start, chooses a password and lands in the console;
 *  - creates a single-page application, adds its callback, and a person logs in to it with auth0-spa-js
 *    (unmodified, its published browser build) from another origin;
 *  - creates an API and a machine-to-machine application, authorizes it for the API, and the curl the
 *    console shows gets a client_credentials token;
 *  - creates an event stream to a local receiver and sends a test event (the record says delivered); finds a
 *    user by email and blocks them, and their login is refused; the receiver refused that user.updated event,
 *    and the console shows the failed delivery and redelivers it;
 *  - a user who is not an admin gets the "No access" page.
 * Every page is scanned with axe-core (no serious or critical violation) and photographed at 1280 and 390 px
 * into test-results/console/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { createApp, createUser, logIn, management, readForm, TestBrowser } from '../test-support/sign-in.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { lookAt, SHOTS } from '../test-support/console-look.js';

const ADMIN = { email: 'first.admin@example.com', password: 'Console-first-admin-2026!' };
const USER_PASSWORD = 'Blockable-user-2026!';
const require = createRequire(import.meta.url);
const SPA_JS = readFileSync(require.resolve('@auth0/auth0-spa-js/dist/auth0-spa-js.production.js'), 'utf8');
const ORDERS_API = 'https://orders.example/api';

/**
 * A single-page app on another origin, using auth0-spa-js's published browser build as a page would, configured
 * by the console's own quick-start snippet run as it is shown (only its import becomes the browser build's global).
 */
function spaPage(snippet: string): string {
  const code = snippet.replace(/^import \{ createAuth0Client \} from '@auth0\/auth0-spa-js';$/m, 'const { createAuth0Client } = window.auth0;');
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>Shop front</title>
<p id="state">starting</p><p id="user"></p><button id="login">Log in</button>
<script src="/auth0-spa-js.js"></script>
<script type="module">
${code}
const client = auth0;
document.getElementById('login').onclick = () => client.loginWithRedirect({ authorizationParams: { prompt: 'login' } });
try {
  if (location.pathname === '/callback') { await client.handleRedirectCallback(); history.replaceState(null, '', '/'); }
  const user = await client.getUser();
  document.getElementById('user').textContent = user ? user.email : '';
  document.getElementById('state').textContent = user ? 'signed in' : 'signed out';
} catch (error) { document.getElementById('state').textContent = 'error: ' + error.message; }
</script></html>`;
}

describe('admin console in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let setupUrl: string;
  /** A webhook receiver that accepts (204) or refuses (400, which fails a delivery at once), as told. */
  let receiver: Server;
  let receiverUrl: string;
  const received = { events: [] as { type: string; a0purpose?: string; authorization?: string }[], accept: true };
  /** The single-page app's origin: another port, so another origin than the server's. */
  let spaServer: Server;
  let spaOrigin: string;
  /** The auth0-spa-js snippet the console's home page shows for the single-page app. */
  let spaSnippet = '';
  let m2m = { id: '', secret: '' };

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; a0purpose?: string };
          received.events.push({ type: event.type, ...(event.a0purpose !== undefined && { a0purpose: event.a0purpose }), ...(request.headers.authorization !== undefined && { authorization: request.headers.authorization }) });
        } catch {
          received.events.push({ type: 'unreadable' });
        }
        if (received.accept) response.writeHead(204).end();
        else response.writeHead(400).end('not now');
      });
    });
    spaServer = createServer((request, response) => {
      const pathname = new URL(request.url ?? '/', 'http://x').pathname;
      if (pathname === '/auth0-spa-js.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(SPA_JS);
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(spaPage(spaSnippet));
    });
    await Promise.all([
      new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve)),
      new Promise<void>((resolve) => spaServer.listen(0, '127.0.0.1', resolve)),
    ]);
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
    spaOrigin = `http://${new URL(server.url).hostname}:${(spaServer.address() as AddressInfo).port}`;
    setupUrl = server.server.prepared.bootstrap!.console.setupUrl!;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    receiver?.close();
    spaServer?.close();
  });

  /** The admin's tab, kept from test to test (each test goes on from where the one before stopped). */
  let page: Page;
  const inaccessible: string[] = [];
  let target: { user_id: string };
  const problems: string[] = [];
  const nav = () => page.getByRole('navigation', { name: 'Sections' });
  /** A tab of a detail page (an application's, a user's). */
  const detailTab = (name: string) => page.getByRole('tab', { name, exact: true });

  /** On failure, the admin's tab (and any other open tab) as it was, in test-results/. */
  function photographOnFailure(): void {
    onTestFailed(async ({ task }) => {
      mkdirSync(SHOTS, { recursive: true });
      const name = task.name.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 80);
      for (const [i, tab] of browser.context.pages().entries()) {
        await tab.screenshot({ path: path.join(SHOTS, `failed-${name}-${i}.png`), fullPage: true }).catch(() => undefined);
      }
    });
  }

  it('setup link → console: the first admin chooses a password and lands in the console, once', async (context) => {
    photographOnFailure();
    expect(setupUrl).toMatch(new RegExp(`^${server.url}/u/console-setup\\?ticket=`));
    target = await createUser(server, 'blockable.person@example.com', USER_PASSWORD);
    page = await openPage(browser, context);
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));

    // The setup link: choose a password, land in the console (signed in through /authorize, no second prompt).
    await page.goto(setupUrl);
    await page.getByLabel('Your email address').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create account and open the console' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/');
    await expect(page.getByText(ADMIN.email).count()).resolves.toBeGreaterThan(0);
    inaccessible.push(...(await lookAt(page, 'home')));

    // The link worked once.
    const again = await fetch(setupUrl);
    expect(again.status).toBe(400);
  });

  it('creates a single-page application with a callback; a person logs in to it with auth0-spa-js from another origin', async () => {
    photographOnFailure();
    expect(new URL(spaOrigin).origin).not.toBe(new URL(server.url).origin);
    await createUser(server, 'shopper@example.com', USER_PASSWORD);
    // Applications: create a single-page app, then add its callback, logout URL and web origin on its page.
    await nav().getByRole('link', { name: 'Applications' }).click();
    await page.getByLabel('Name').fill('Shop front');
    await page.getByLabel('Type').selectOption('spa');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Shop front' }).waitFor();
    const spaClientId = await page.getByTestId('client-id').innerText();
    expect(spaClientId).toMatch(/^[A-Za-z0-9]{32}$/);
    await page.getByLabel('Allowed callback URLs').fill(`${spaOrigin}/callback`);
    await page.getByLabel('Allowed logout URLs').fill(spaOrigin);
    await page.getByLabel('Allowed web origins').fill(spaOrigin);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await (await management(server, 'GET', `/clients/${spaClientId}`)).json()) as { name: string; app_type: string; callbacks: string[]; web_origins: string[] };
    expect(saved).toMatchObject({ name: 'Shop front', app_type: 'spa', callbacks: [`${spaOrigin}/callback`], web_origins: [spaOrigin] });
    // It starts with the database connection enabled, so people can log in to it at once.
    await detailTab('Connections').click();
    await expect.poll(() => page.getByRole('checkbox', { name: /Username-Password-Authentication/ }).isChecked()).toBe(true);
    inaccessible.push(...(await lookAt(page, 'application-spa')));

    // The home page's quick starts, for this application: the tenant's values in each library's own options.
    await nav().getByRole('link', { name: 'Getting started' }).click();
    await page.getByLabel('Application', { exact: true }).selectOption({ label: 'Shop front' });
    const snippet = (library: string) => page.getByTestId(`snippet-${library}`).innerText();
    await expect.poll(() => snippet('auth0-spa-js')).toContain(`clientId: '${spaClientId}'`);
    spaSnippet = await snippet('auth0-spa-js');
    expect(spaSnippet).toContain(`domain: '${server.url}'`);
    expect(spaSnippet).toContain(`redirect_uri: '${spaOrigin}/callback'`);
    // The issuer is <domain>/, which auth0-spa-js derives by itself: no issuer option.
    expect(server.issuer).toBe(`${server.url}/`);
    expect(spaSnippet).not.toContain('issuer');
    // auth0-js derives https://<domain>/ as the issuer: on http it is told the tenant's.
    expect(await snippet('auth0-js')).toContain(`clientID: '${spaClientId}'`);
    expect(await snippet('auth0-js')).toContain(`overrides: { __token_issuer: '${server.issuer}' }`);
    expect(await snippet('svc')).toContain(`<script src="${server.url}/lib/svc.js"></script>`);
    // Tokens in the redirect need the implicit grant, which this application does not have: the page says so.
    await page.getByText('This application does not allow the Implicit grant yet').waitFor();
    expect(await snippet('express-openid-connect')).toContain(`issuerBaseURL: '${server.url}'`);
    expect(await snippet('express-openid-connect')).toContain(`baseURL: '${spaOrigin}'`);
    expect(await snippet('express-oauth2-jwt-bearer')).toContain(`issuerBaseURL: '${server.url}'`);
    // express-openid-connect checks its options when auth() is called (an unknown or misspelt one throws): the
    // snippet, run as shown, passes; the same with a misspelt option does not.
    const runExpressSnippet = (code: string) => {
      const registered: string[] = [];
      const app = { use: (handler: unknown) => registered.push(`use ${typeof handler}`), get: (route: string) => registered.push(`get ${route}`) };
      const env = { CLIENT_SECRET: 'the-application-secret', SESSION_SECRET: 'a-long-enough-cookie-secret-for-the-app-session' };
      new Function('require', 'app', 'process', code)(require, app, { env });
      return registered;
    };
    const expressSnippet = await snippet('express-openid-connect');
    expect(runExpressSnippet(expressSnippet)).toEqual(['use function', 'get /profile']);
    expect(() => runExpressSnippet(expressSnippet.replace('authRequired:', 'authRequire:'))).toThrow('"authRequire" is not allowed');
    inaccessible.push(...(await lookAt(page, 'home-quick-start')));

    // A person logs in to that app with auth0-spa-js on the other origin, configured by that snippet as shown,
    // through the hosted login.
    const shop = await browser.context.newPage();
    await shop.goto(`${spaOrigin}/`);
    await expect.poll(() => shop.locator('#state').innerText()).toBe('signed out');
    await shop.getByRole('button', { name: 'Log in' }).click();
    await shop.waitForURL((url) => url.pathname === '/u/login');
    await shop.getByLabel(/email/i).first().fill('shopper@example.com');
    await shop.getByLabel('Password', { exact: true }).fill(USER_PASSWORD);
    await shop.getByRole('button', { name: /continue|log in/i }).click();
    await shop.waitForURL((url) => url.origin === spaOrigin && url.pathname === '/');
    await expect.poll(() => shop.locator('#state').innerText()).toBe('signed in');
    expect(await shop.locator('#user').innerText()).toBe('shopper@example.com');
    await shop.close();

  });

  it('creates an API and a machine-to-machine application, authorizes it, and its curl gets a client_credentials token', async () => {
    photographOnFailure();
    // APIs: create one with a scope.
    await nav().getByRole('link', { name: 'APIs' }).click();
    await page.getByLabel('Name').fill('Orders');
    await page.getByLabel('Identifier').fill(ORDERS_API);
    await page.getByLabel('Scopes').fill('read:orders Read orders\nwrite:orders');
    await page.getByRole('button', { name: 'Create API' }).click();
    await page.getByRole('heading', { name: 'Orders' }).waitFor();
    expect(await page.getByTestId('api-identifier').innerText()).toBe(ORDERS_API);
    const apis = (await (await management(server, 'GET', `/resource-servers/${encodeURIComponent(ORDERS_API)}`)).json()) as { scopes: unknown[] };
    expect(apis.scopes).toEqual([{ value: 'read:orders', description: 'Read orders' }, { value: 'write:orders', description: '' }]);

    // A machine-to-machine application: its secret once, then the quick start authorizes it for the API.
    await nav().getByRole('link', { name: 'Applications' }).click();
    inaccessible.push(...(await lookAt(page, 'applications')));
    await page.getByLabel('Name').fill('Order sync');
    await page.getByLabel('Type').selectOption('non_interactive');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Order sync' }).waitFor();
    const m2mId = await page.getByTestId('client-id').innerText();
    const secret = await page.getByTestId('secret').innerText();
    m2m = { id: m2mId, secret };
    expect(secret.length).toBeGreaterThan(30);
    await page.getByLabel('API', { exact: true }).selectOption(ORDERS_API);
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.getByRole('list', { name: 'Authorized APIs' }).getByText(ORDERS_API, { exact: true }).waitFor();
    inaccessible.push(...(await lookAt(page, 'application-m2m')));
    // The curl shown, run as is (its JSON body), gets a token for the API with the API's scopes.
    const curl = await page.getByTestId('curl').innerText();
    expect(curl).toContain(`${server.url}/oauth/token`);
    const body = JSON.parse(/--data '([^']*)'/.exec(curl)![1]!) as Record<string, string>;
    expect(body).toEqual({ grant_type: 'client_credentials', client_id: m2mId, client_secret: secret, audience: ORDERS_API });
    const tokenResponse = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(tokenResponse.status).toBe(200);
    const { access_token } = (await tokenResponse.json()) as { access_token: string };
    const { payload } = await jwtVerify(access_token, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), { issuer: server.issuer, audience: ORDERS_API });
    expect(payload).toMatchObject({ sub: `${m2mId}@clients`, scope: 'read:orders write:orders' });
    // The API's page shows that access, and the list shows the API.
    await nav().getByRole('link', { name: 'APIs' }).click();
    await page.getByRole('link', { name: 'Orders' }).click();
    await expect.poll(() => page.getByRole('checkbox', { name: 'Order sync' }).isChecked()).toBe(true);
    inaccessible.push(...(await lookAt(page, 'api')));
    await nav().getByRole('link', { name: 'APIs' }).click();
    await page.getByRole('link', { name: 'Orders' }).waitFor();
    inaccessible.push(...(await lookAt(page, 'apis')));

  });

  it('creates an event stream to a local receiver; the test event is delivered, or its record says why not', async () => {
    photographOnFailure();
    // Event streams: one to the local receiver; a test event is delivered, and the record says so.
    await nav().getByRole('link', { name: 'Event streams' }).click();
    await page.getByLabel('Name').fill('Audit receiver');
    await page.getByLabel('Webhook URL').fill(receiverUrl);
    await page.getByLabel('Bearer token').fill('receiver-token');
    await page.getByRole('button', { name: 'Create stream' }).click();
    await page.getByRole('heading', { name: 'Audit receiver' }).waitFor();
    await page.getByLabel('Event type').selectOption('user.created');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByTestId('test-record').filter({ hasText: 'Delivered.' }).waitFor();
    expect(received.events).toContainEqual({ type: 'user.created', a0purpose: 'test', authorization: 'Bearer receiver-token' });
    // With the receiver refusing, the record says why.
    received.accept = false;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByTestId('test-record').filter({ hasText: 'Not delivered.' }).filter({ hasText: '400' }).waitFor();
    inaccessible.push(...(await lookAt(page, 'event-stream-test')));

  });

  it('creates a user; finds one by email and blocks them; their login is refused', async () => {
    photographOnFailure();
    // Users: find one by email, block them (confirmed in a dialog); their login is refused.
    await nav().getByRole('link', { name: 'Users' }).click();
    // Created here, in the database connection (the first, and only, one).
    await page.getByText('Create a user').click();
    await page.getByLabel('Email', { exact: true }).fill('made.here@example.com');
    await page.getByLabel('Password', { exact: true }).fill(USER_PASSWORD);
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { name: 'made.here@example.com' }).waitFor();
    const made = (await (await management(server, 'GET', `/users-by-email?${new URLSearchParams({ email: 'made.here@example.com' })}`)).json()) as { identities: { connection: string }[] }[];
    expect(made.map((u) => u.identities[0]?.connection)).toEqual(['Username-Password-Authentication']);
    await nav().getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Search').fill('email:"blockable.person@example.com"');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    inaccessible.push(...(await lookAt(page, 'users')));
    await page.getByRole('link', { name: 'blockable.person@example.com' }).click();
    await page.getByTestId('user-status').filter({ hasText: 'Active' }).waitFor();
    await page.getByRole('button', { name: 'Block', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Block user' }).click();
    await page.getByTestId('user-status').filter({ hasText: 'Blocked' }).waitFor();
    const blocked = (await (await management(server, 'GET', `/users/${encodeURIComponent(target.user_id)}`)).json()) as { blocked?: boolean };
    expect(blocked.blocked).toBe(true);
    inaccessible.push(...(await lookAt(page, 'user')));
    const app = await createApp(server);
    const person = new TestBrowser();
    const query = { client_id: app.client_id, response_type: 'code', redirect_uri: 'https://app.example/callback', scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
    const loginPage = await person.follow(server.url, await person.get(`${server.url}/authorize?${new URLSearchParams(query)}`));
    if (loginPage instanceof URL) throw new Error(`expected the login page, went to ${loginPage.href}`);
    const form = readForm(await loginPage.text(), server.url);
    const refused = await person.follow(server.url, await person.post(form.action, { ...form.fields, username: 'blockable.person@example.com', password: USER_PASSWORD }));
    if (refused instanceof URL) throw new Error(`expected the login form again, went to ${refused.href}`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('This account is blocked.');

  });

  it('shows the delivery the receiver refused, and redelivers it', async () => {
    photographOnFailure();
    // Blocking updated the user: the receiver refused that event. The stream's page lists the failed
    // delivery, and redelivering it (the receiver fixed) delivers it.
    await expect.poll(() => received.events.filter((e) => e.type === 'user.updated' && !e.a0purpose).length).toBeGreaterThan(0);
    await nav().getByRole('link', { name: 'Event streams' }).click();
    inaccessible.push(...(await lookAt(page, 'event-streams')));
    await page.getByRole('link', { name: 'Audit receiver' }).click();
    const row = page.getByRole('row').filter({ hasText: 'user.updated' });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return row.filter({ hasText: '400' }).count();
      })
      .toBeGreaterThan(0);
    await page.getByRole('img', { name: /Last 24 hours: \d+ delivered, [1-9]\d* failed\./ }).waitFor();
    inaccessible.push(...(await lookAt(page, 'event-stream')));
    received.accept = true;
    const before = received.events.length;
    await row.first().getByRole('button', { name: 'Redeliver' }).click();
    await page.getByRole('status').filter({ hasText: 'Queued user.updated for delivery again.' }).waitFor();
    await expect.poll(() => received.events.slice(before).filter((e) => e.type === 'user.updated' && !e.a0purpose).length).toBeGreaterThan(0);
    await nav().getByRole('link', { name: 'Event streams' }).click();
    await page.getByRole('link', { name: 'Failed deliveries of every stream' }).click();
    await page.getByRole('heading', { name: 'Failed deliveries' }).waitFor();
    inaccessible.push(...(await lookAt(page, 'deliveries')));

  });

  it("edits a user's metadata (invalid JSON refused in place), assigns a role, unlinks an identity and revokes a session", async () => {
    photographOnFailure();
    // Made through the API: a user with a second account linked in, a role to give, an organization, a session.
    const person = await createUser(server, 'meta.person@example.com', USER_PASSWORD);
    const other = await createUser(server, 'linked.person@example.com', USER_PASSWORD);
    const path = `/users/${encodeURIComponent(person.user_id)}`;
    expect((await management(server, 'POST', `${path}/identities`, { provider: 'auth0', user_id: other.user_id.split('|')[1] })).status).toBe(201);
    const role = (await (await management(server, 'POST', '/roles', { name: 'Support', description: 'Answers tickets' })).json()) as { id: string };
    const org = (await (await management(server, 'POST', '/organizations', { name: 'acme', display_name: 'Acme' })).json()) as { id: string };
    expect((await management(server, 'POST', `/organizations/${org.id}/members`, { members: [person.user_id] })).status).toBe(204);
    const app = await createApp(server);
    const pkce = { challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' };
    const elsewhere = new TestBrowser();
    const query = { client_id: app.client_id, response_type: 'code', redirect_uri: 'https://app.example/callback', scope: 'openid', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' };
    await logIn(server, elsewhere, query, { username: 'meta.person@example.com', password: USER_PASSWORD });
    const read = async <T,>(suffix = '') => (await (await management(server, 'GET', `${path}${suffix}`)).json()) as T;
    expect((await read<{ sessions: unknown[] }>('/sessions')).sessions).toHaveLength(1);

    await nav().getByRole('link', { name: 'Users' }).click();
    // What the q syntax does not take is the API's 400, said where the search was typed.
    const before = problems.length;
    await page.getByLabel('Search', { exact: true }).fill('meta OR linked');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'OR is not supported; terms are joined with AND' }).waitFor();
    await expect.poll(() => problems.slice(before)).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    problems.splice(before, 1);
    await page.getByLabel('Search', { exact: true }).fill('email:meta.person@example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'meta.person@example.com' }).click();
    await page.getByRole('heading', { name: 'meta.person@example.com' }).waitFor();

    // user_metadata: broken JSON is refused where it was typed, and nothing is sent.
    const userMetadata = page.getByLabel('user_metadata', { exact: true });
    await userMetadata.fill('{"plan": "gold",');
    await page.getByRole('button', { name: 'Save user_metadata' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not saved: this is not valid JSON' }).waitFor();
    expect(await userMetadata.getAttribute('aria-invalid')).toBe('true');
    expect((await read<{ user_metadata: unknown }>()).user_metadata).toEqual({});
    // Valid JSON is saved and reads back through the API; a key taken out is deleted.
    await userMetadata.fill('{"plan": "gold", "seats": 3}');
    await page.getByRole('button', { name: 'Save user_metadata' }).click();
    await page.getByRole('status').filter({ hasText: 'user_metadata saved.' }).waitFor();
    expect((await read<{ user_metadata: unknown }>()).user_metadata).toEqual({ plan: 'gold', seats: 3 });
    await userMetadata.fill('{"plan": "gold"}');
    await page.getByRole('button', { name: 'Save user_metadata' }).click();
    await expect.poll(async () => (await read<{ user_metadata: unknown }>()).user_metadata).toEqual({ plan: 'gold' });
    // The API's own refusal is shown in place too.
    const seen = problems.length;
    await page.getByLabel('app_metadata', { exact: true }).fill('{"tier.level": 1}');
    await page.getByRole('button', { name: 'Save app_metadata' }).click();
    await page.getByRole('alert').filter({ hasText: 'the field name "tier.level" is not allowed' }).waitFor();
    // Chromium reports the refused request in the page's console: the one this test asked for, and no other.
    await expect.poll(() => problems.slice(seen)).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    problems.splice(seen, 1);

    // A role, assigned; its organization and its sessions are listed (each in its tab). The tabs follow the
    // arrow keys, and only the chosen one's panel is shown.
    await detailTab('Profile').focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => detailTab('Roles and permissions').getAttribute('aria-selected')).toBe('true');
    expect(await page.getByLabel('user_metadata', { exact: true }).isVisible()).toBe(false);
    await page.getByLabel('Role to assign').selectOption({ label: 'Support' });
    await page.getByRole('button', { name: 'Assign role' }).click();
    await page.getByRole('list', { name: 'Roles of this user' }).getByText('Support', { exact: true }).waitFor();
    expect((await read<{ id: string }[]>('/roles')).map((r) => r.id)).toEqual([role.id]);
    await detailTab('Organizations').click();
    await page.getByRole('list', { name: 'Organizations of this user' }).getByRole('link', { name: 'Acme' }).waitFor();
    await detailTab('Sessions').click();
    await expect.poll(() => page.getByTestId('session').count()).toBe(1);
    inaccessible.push(...(await lookAt(page, 'user-detail')));

    // The linked identity, unlinked (confirmed): the other account is a user of its own again.
    await detailTab('Identities').click();
    const identities = page.getByRole('list', { name: 'Identities' });
    await expect.poll(() => identities.getByRole('listitem').count()).toBe(2);
    await identities.getByRole('button', { name: `Unlink ${other.user_id}` }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Unlink identity' }).click();
    await expect.poll(() => identities.getByRole('listitem').count()).toBe(1);
    expect((await management(server, 'GET', `/users/${encodeURIComponent(other.user_id)}`)).status).toBe(200);

    // The session, revoked (confirmed): gone from the API, and that browser is signed out.
    await detailTab('Sessions').click();
    await page.getByTestId('session').getByRole('button', { name: /^Revoke the session started / }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke session' }).click();
    await page.getByRole('status').filter({ hasText: 'Session revoked.' }).waitFor();
    expect((await read<{ sessions: unknown[] }>('/sessions')).sessions).toEqual([]);
    const silent = await elsewhere.follow(server.url, await elsewhere.get(`${server.url}/authorize?${new URLSearchParams({ ...query, prompt: 'none' })}`));
    expect(silent instanceof URL && silent.searchParams.get('error')).toBe('login_required');
  });

  it('rotates a client secret (confirmed, shown once, kept nowhere): the new one gets a client_credentials token, the old one is refused', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('link', { name: 'Order sync' }).click();
    await page.getByRole('heading', { name: 'Order sync' }).waitFor();
    // The grant's scopes are edited in place: write:orders taken away.
    await page.getByRole('checkbox', { name: 'write:orders' }).uncheck();
    await expect
      .poll(async () => ((await (await management(server, 'GET', `/client-grants?client_id=${m2m.id}`)).json()) as { scope: string[] }[])[0]?.scope)
      .toEqual(['read:orders']);
    await detailTab('Credentials').click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Rotate' }).click();
    const rotated = page.getByTestId('secret');
    await expect.poll(() => rotated.innerText()).not.toBe(m2m.secret);
    const secret = await rotated.innerText();
    expect(secret.length).toBeGreaterThan(30);
    const stored = await page.evaluate<string>('JSON.stringify([{ ...localStorage }, { ...sessionStorage }])');
    expect(stored).not.toContain(secret);
    inaccessible.push(...(await lookAt(page, 'application-credentials')));
    const token = (clientSecret: string) =>
      fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: m2m.id, client_secret: clientSecret, audience: ORDERS_API }),
      });
    const fresh = await token(secret);
    expect(fresh.status).toBe(200);
    expect(((await fresh.json()) as { scope: string }).scope).toBe('read:orders');
    const old = await token(m2m.secret);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('tests a login to the single-page application through the hosted page and shows the ID token claims', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('link', { name: 'Shop front' }).click();
    await page.getByRole('heading', { name: 'Shop front' }).waitFor();
    const clientId = await page.getByTestId('client-id').innerText();
    // The console's callback is added only when asked.
    await detailTab('Test login').click();
    await page.getByRole('button', { name: 'Allow the test callback' }).click();
    await page.getByRole('button', { name: 'Test a login' }).waitFor();
    const app = (await (await management(server, 'GET', `/clients/${clientId}`)).json()) as { callbacks: string[] };
    expect(app.callbacks).toEqual([`${spaOrigin}/callback`, `${server.url}/console/test-login.html`]);
    const [tab] = await Promise.all([browser.context.waitForEvent('page'), page.getByRole('button', { name: 'Test a login' }).click()]);
    await tab.waitForURL((url) => url.pathname === '/u/login');
    await tab.getByLabel(/email/i).first().fill('shopper@example.com');
    await tab.getByLabel('Password', { exact: true }).fill(USER_PASSWORD);
    await tab.getByRole('button', { name: /continue|log in/i }).click();
    await tab.getByText('Done: the result is on the application').waitFor();
    // The code is out of the callback tab's address bar; the claims are in the console's.
    expect(new URL(tab.url()).search).toBe('');
    await tab.close();
    const claims = JSON.parse(await page.getByTestId('test-claims').innerText()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: server.issuer, aud: clientId, email: 'shopper@example.com' });
    inaccessible.push(...(await lookAt(page, 'application-test-login')));
  });

  it('gives a signed-in user who is not an admin a clear "No access" page', async () => {
    photographOnFailure();
    // Sign out; a user who is not an admin signs in and gets a clear page, not a broken console.
    await createUser(server, 'not.admin@example.com', USER_PASSWORD);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(/email/i).first().waitFor();
    await page.getByLabel(/email/i).first().fill('not.admin@example.com');
    await page.getByLabel('Password', { exact: true }).fill(USER_PASSWORD);
    await page.getByRole('button', { name: /continue|log in/i }).click();
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    inaccessible.push(...(await lookAt(page, 'no-access')));

  });

  it('had no serious or critical accessibility violation on any page, and no error in the console', () => {
    expect(inaccessible).toEqual([]);
    expect(problems).toEqual([]);
  });
});
