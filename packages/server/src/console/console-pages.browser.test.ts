/**
 * The console's tenant pages in real Chromium against the real server (#15), one browser for the file and one
 * sign-in per database dialect (the first admin's setup link):
 *  - Connections: a database connection with a password policy, enabled for an application, and the hosted
 *    signup refuses a password the policy does not allow; an OpenID Connect connection whose client secret is
 *    never shown back, yet kept when its settings are saved again; a name already taken is refused in place;
 *  - Roles: a role with a permission of an API, assigned to a user by email (the user then has the permission);
 *    a permission removed after a confirmation dialog;
 *  - Organizations: created, a member added by email and given the role in the organization, a connection enabled;
 *  - Attack protection: the brute-force threshold changed;
 *  - Branding: a primary colour typed shows in the preview at once, and once saved on the hosted login page;
 *  - Tenant settings: the friendly name (the hosted login page shows it) and MFA's remember-browser lifetime.
 * On SQLite, every new page is scanned with axe-core (no serious or critical violation) and photographed at
 * 1280 and 390 px into test-results/console/; on PostgreSQL the same workflows run without them.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { findConnectionById } from '../store/connections.js';
import { launchBrowser, type BrowserSession } from '../test-support/browser.js';
import { createApp, createUser, management } from '../test-support/sign-in.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { lookAt as lookAtPage, SHOTS } from '../test-support/console-look.js';

const ADMIN = { email: 'pages.admin@example.com', password: 'Console-pages-admin-2026!' };
const MEMBER = { email: 'member.person@example.com', password: 'Member-person-2026!' };
const ORDERS_API = 'https://orders.example/api';
const OIDC_SECRET = 'oidc-client-secret-never-shown-4f2a';
const PKCE = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };

/** In the page (the server's tsconfig has no DOM types). */
interface Styled {
  getComputedStyle(element: unknown): { backgroundColor: string };
}

let browser: BrowserSession;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function json<T>(response: Response): Promise<T> {
  expect(response.ok, `${response.status} ${response.url}`).toBe(true);
  return (await response.json()) as T;
}

describe.each(['sqlite', 'postgres'] as const)('console tenant pages in Chromium (%s)', (dialect) => {
  let server: TestServer;
  let page: Page;
  let app: { client_id: string };
  let member: { user_id: string };
  const inaccessible: string[] = [];
  const problems: string[] = [];
  const nav = () => page.getByRole('navigation', { name: 'Sections' });

  /** axe-core and screenshots at 1280 and 390 px (serious and critical violations collected); SQLite only. */
  async function lookAt(name: string): Promise<void> {
    if (dialect === 'sqlite') inaccessible.push(...(await lookAtPage(page, name)));
  }

  function photographOnFailure(): void {
    onTestFailed(async ({ task }) => {
      mkdirSync(SHOTS, { recursive: true });
      const name = `${dialect}-${task.name}`.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 80);
      for (const [i, tab] of browser.context.pages().entries()) {
        await tab.screenshot({ path: path.join(SHOTS, `failed-${name}-${i}.png`), fullPage: true }).catch(() => undefined);
      }
    });
  }

  /** Unfolds the "Create a connection" form (folded above the list) unless it is open already. */
  async function openCreateConnection(): Promise<void> {
    const form = page.getByTestId('create-connection');
    if (!(await form.evaluate((details) => (details as unknown as { open: boolean }).open))) await form.locator('summary').click();
  }

  /** A hosted page of the flow /authorize starts for the test app, in a tab of its own (prompt=login: the admin's session would skip it). */
  async function hostedPage(query: Record<string, string> = {}): Promise<Page> {
    const tab = await browser.context.newPage();
    const params = { client_id: app.client_id, response_type: 'code', redirect_uri: 'https://app.example/callback', scope: 'openid', state: 's', ...PKCE, prompt: 'login', ...query };
    await tab.goto(`${server.url}/authorize?${new URLSearchParams(params)}`);
    return tab;
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    app = await createApp(server, { name: 'Partner portal' });
    member = await createUser(server, MEMBER.email, MEMBER.password);
    await json(await management(server, 'POST', '/resource-servers', { name: 'Orders', identifier: ORDERS_API, scopes: [{ value: 'read:orders', description: 'Read orders' }, { value: 'write:orders' }] }));
    page = await browser.context.newPage();
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(server.server.prepared.bootstrap!.console.setupUrl!);
    await page.getByLabel('Your email address').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create account and open the console' }).click();
    await nav().waitFor();
  });
  afterAll(async () => {
    await page?.close();
    await server?.close();
  });

  it('creates a database connection with a password policy; the hosted signup refuses a password it does not allow', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('link', { name: 'Username-Password-Authentication' }).waitFor();
    await openCreateConnection();
    await lookAt('connections');
    await page.getByLabel('Type').selectOption('auth0');
    await page.getByLabel('Name', { exact: true }).fill('Partners');
    await page.getByLabel('Password strength').selectOption('good');
    await page.getByLabel('Minimum length').fill('16');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { name: 'Partners' }).waitFor();
    const id = await page.getByTestId('connection-id').innerText();
    const created = await json<{ strategy: string; options: Record<string, unknown> }>(await management(server, 'GET', `/connections/${id}`));
    expect(created.strategy).toBe('auth0');
    expect(created.options).toMatchObject({ passwordPolicy: 'good', password_complexity_options: { min_length: 16 }, brute_force_protection: true });
    // Enabled for the application, from the connection's page (the global client is not offered).
    await page.getByRole('checkbox', { name: 'Partner portal' }).check();
    expect(await page.getByRole('checkbox', { name: 'All Applications' }).count()).toBe(0);
    await expect.poll(async () => (await json<{ enabled_clients: string[] }>(await management(server, 'GET', `/connections/${id}`))).enabled_clients).toContain(app.client_id);
    await lookAt('connection-database');

    // The hosted signup of that connection: a 12-character password that "good" alone would take is refused.
    const signup = await hostedPage({ connection: 'Partners', screen_hint: 'signup' });
    await signup.getByText('At least 16 characters in length').waitFor();
    await signup.getByLabel(/email/i).fill('new.partner@example.com');
    await signup.getByLabel('Password', { exact: true }).fill('Abcdef12!xyz');
    await signup.getByRole('button', { name: /continue|sign up/i }).click();
    await signup.getByRole('alert').waitFor();
    expect(new URL(signup.url()).pathname).toBe('/u/signup');
    expect(await json<unknown[]>(await management(server, 'GET', `/users-by-email?${new URLSearchParams({ email: 'new.partner@example.com' })}`))).toEqual([]);
    await signup.close();

    // A second connection of that name is refused, with the API's message in place.
    await nav().getByRole('link', { name: 'Connections' }).click();
    await openCreateConnection();
    await page.getByLabel('Name', { exact: true }).fill('Partners');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('alert').filter({ hasText: 'A connection with the name Partners already exists' }).waitFor();
  });

  it('creates an OpenID Connect connection whose client secret is write-only: never shown, kept on save', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Connections' }).click();
    await openCreateConnection();
    await page.getByLabel('Type').selectOption('oidc');
    await page.getByLabel('Name', { exact: true }).fill('Corporate-SSO');
    await page.getByLabel('Client ID').fill('console-test-client');
    await page.getByLabel('Client secret').fill(OIDC_SECRET);
    await page.getByLabel('Issuer').fill('https://idp.example');
    await page.getByLabel('Authorization endpoint').fill('https://idp.example/authorize');
    await page.getByLabel('Token endpoint', { exact: true }).fill('https://idp.example/token');
    await page.getByLabel('JWKS URI').fill('https://idp.example/jwks');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { name: 'Corporate-SSO' }).waitFor();
    const id = await page.getByTestId('connection-id').innerText();
    // Not in the form, not anywhere in the page, not in the API's answer.
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    expect(await page.content()).not.toContain(OIDC_SECRET);
    const read = await json<{ options: Record<string, unknown> }>(await management(server, 'GET', `/connections/${id}`));
    expect(read.options).toMatchObject({ client_id: 'console-test-client', issuer: 'https://idp.example' });
    expect(JSON.stringify(read)).not.toContain(OIDC_SECRET);
    // Saved again without typing the secret: the server still has it (a back-channel connection needs it).
    await page.getByLabel('Scopes').fill('openid email');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('connection-settings').getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await json<{ options: Record<string, unknown> }>(await management(server, 'GET', `/connections/${id}`));
    expect(saved.options.scope).toBe('openid email');
    // Stored sealed (never in plain), and still there after the save that did not send it.
    const stored = await findConnectionById(server.server.services.store.db, server.server.prepared.bootstrap!.tenant.id, id);
    expect(stored?.options.client_secret).toBeUndefined();
    expect(stored?.options.client_secret_sealed).toEqual(expect.any(String));
    expect(JSON.stringify(stored?.options)).not.toContain(OIDC_SECRET);
    expect(problems.filter((p) => p.includes(OIDC_SECRET))).toEqual([]);
    await lookAt('connection-oidc');
  });

  it('creates a role with a permission of an API, assigns it to a user by email, and removes a permission after confirming', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Roles' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Order reader');
    await page.getByLabel('Description').fill('Reads orders');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { name: 'Order reader' }).waitFor();
    await page.getByLabel('API', { exact: true }).selectOption(ORDERS_API);
    await page.getByLabel('Permission', { exact: true }).selectOption('read:orders');
    await page.getByRole('button', { name: 'Add permission' }).click();
    await page.getByRole('table', { name: 'Permissions this role grants' }).getByText('read:orders', { exact: true }).waitFor();
    await page.getByLabel('Permission', { exact: true }).selectOption('write:orders');
    await page.getByRole('button', { name: 'Add permission' }).click();
    await page.getByRole('table', { name: 'Permissions this role grants' }).getByText('write:orders', { exact: true }).waitFor();
    await page.getByLabel('User’s email').fill(MEMBER.email);
    await page.getByRole('button', { name: 'Assign role' }).click();
    await page.getByRole('table', { name: 'Users who hold this role' }).getByRole('link', { name: MEMBER.email }).waitFor();
    await lookAt('role');
    // Removing write:orders asks first; with the keyboard alone: Escape cancels, then Tab to confirm.
    const remove = page.getByRole('button', { name: 'Remove the permission write:orders' });
    await remove.focus();
    const focused = (locator: ReturnType<Page['getByRole']>) => locator.evaluate((e) => e === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement);
    await page.keyboard.press('Enter');
    // An alert dialog named by its question; Escape closes it and gives focus back to the button.
    await page.getByRole('alertdialog', { name: /^Remove write:orders \(Orders\) from this role\?/ }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('alertdialog').count()).toBe(0);
    await expect.poll(() => focused(remove)).toBe(true);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('alertdialog');
    await dialog.getByRole('button', { name: 'Cancel' }).waitFor();
    // Focus starts on Cancel and stays in the dialog: Tab past the last button comes back to the first.
    await expect.poll(() => focused(dialog.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await page.keyboard.press('Tab');
    await expect.poll(() => focused(dialog.getByRole('button', { name: 'Remove permission' }))).toBe(true);
    await page.keyboard.press('Tab');
    await expect.poll(() => focused(dialog.getByRole('button', { name: 'Cancel' }))).toBe(true);
    // The open dialog passes the same scan, at both widths.
    await lookAt('role-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('table', { name: 'Permissions this role grants' }).getByText('write:orders', { exact: true }).count()).toBe(0);
    const permissions = await json<{ permission_name: string }[]>(await management(server, 'GET', `/users/${encodeURIComponent(member.user_id)}/permissions`));
    expect(permissions.map((p) => p.permission_name)).toEqual(['read:orders']);
    // An unknown email is refused in place.
    await page.getByLabel('User’s email').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Assign role' }).click();
    await page.getByRole('alert').filter({ hasText: 'No user has the email nobody@example.com.' }).waitFor();
    // The list pages with the API's paging: 20 a page.
    for (let i = 1; i <= 20; i++) await json(await management(server, 'POST', '/roles', { name: `Filler ${String(i).padStart(2, '0')}` }));
    await nav().getByRole('link', { name: 'Roles' }).click();
    const pager = page.getByRole('navigation', { name: 'Pages' });
    await pager.getByText('Page 1 of 2').waitFor();
    await lookAt('roles');
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('Page 2 of 2').waitFor();
    const { total } = await json<{ total: number }>(await management(server, 'GET', '/roles?include_totals=true&per_page=1'));
    expect(total).toBeGreaterThan(20);
    expect(total).toBeLessThanOrEqual(40);
    await expect.poll(() => page.getByRole('table', { name: 'Roles of this tenant' }).getByRole('link').count()).toBe(total - 20);
  });

  it('creates an organization, adds a member by email with a role in it, and enables a connection', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Organizations' }).click();
    await page.getByLabel('Identifier').fill('acme');
    await page.getByLabel('Display name').fill('Acme Corporation');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Acme Corporation' }).waitFor();
    const orgId = await page.getByTestId('organization-id').innerText();
    await page.getByLabel('Email').fill(MEMBER.email);
    await page.getByRole('button', { name: 'Add member' }).click();
    const members = page.getByRole('table', { name: 'Members of this organization' });
    await members.getByRole('link', { name: MEMBER.email }).waitFor();
    await page.getByLabel(`Role to assign to ${MEMBER.email}`).selectOption({ label: 'Order reader' });
    await page.getByRole('button', { name: `Assign the role to ${MEMBER.email}` }).click();
    await page.getByRole('list', { name: `Roles of ${MEMBER.email}` }).getByText('Order reader', { exact: true }).waitFor();
    await page.getByLabel('Connection', { exact: true }).selectOption({ label: 'Partners' });
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('table', { name: 'Connections enabled for this organization' }).getByRole('link', { name: 'Partners' }).waitFor();
    const listed = await json<{ members: { user_id: string }[] }>(await management(server, 'GET', `/organizations/${orgId}/members?include_totals=true`));
    expect(listed.members.map((m) => m.user_id)).toEqual([member.user_id]);
    const roles = await json<{ name: string }[]>(await management(server, 'GET', `/organizations/${orgId}/members/${encodeURIComponent(member.user_id)}/roles`));
    expect(roles.map((r) => r.name)).toEqual(['Order reader']);
    const connections = await json<{ connection: { name: string } }[]>(await management(server, 'GET', `/organizations/${orgId}/enabled_connections`));
    expect(connections.map((c) => c.connection.name)).toEqual(['Partners']);
    await lookAt('organization');
    await nav().getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('link', { name: 'Acme Corporation' }).waitFor();
    await lookAt('organizations');
  });

  it('changes the brute-force threshold', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Attack protection' }).click();
    const card = page.getByTestId('brute-force');
    await card.getByLabel('Failed attempts before blocking').fill('7');
    await card.getByRole('button', { name: 'Save brute-force protection' }).click();
    await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const settings = await json<{ max_attempts: number; enabled: boolean }>(await management(server, 'GET', '/attack-protection/brute-force-protection'));
    expect(settings.max_attempts).toBe(7);
    // "Enabled" is a switch: Space flips it, and what is saved follows; flipped back, saved back.
    const enabled = card.getByRole('switch', { name: 'Enabled' });
    expect(await enabled.getAttribute('aria-checked')).toBe(String(settings.enabled));
    for (const want of [!settings.enabled, settings.enabled]) {
      await enabled.focus();
      await page.keyboard.press('Space');
      await expect.poll(() => enabled.getAttribute('aria-checked')).toBe(String(want));
      await card.getByRole('button', { name: 'Save brute-force protection' }).click();
      await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await expect.poll(async () => (await json<{ enabled: boolean }>(await management(server, 'GET', '/attack-protection/brute-force-protection'))).enabled).toBe(want);
    }
    // Out of the API's range: its message, in the card.
    await card.getByLabel('Failed attempts before blocking').evaluate((input) => (input as unknown as { removeAttribute(name: string): void }).removeAttribute('max'));
    await card.getByLabel('Failed attempts before blocking').fill('500');
    await card.getByRole('button', { name: 'Save brute-force protection' }).click();
    await card.getByRole('alert').filter({ hasText: /max_attempts/ }).waitFor();
    await page.getByTestId('suspicious-ip').waitFor();
    await page.getByTestId('breached-password').waitFor();
    await lookAt('attack-protection');
  });

  it('shows a branding colour in the preview as it is typed, and on the hosted login page once saved', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Branding' }).click();
    await page.getByLabel('Primary colour', { exact: true }).fill('#0a7d33');
    const background = (locator: ReturnType<Page['getByTestId']>) => locator.evaluate((element) => (globalThis as unknown as Styled).getComputedStyle(element).backgroundColor);
    await expect.poll(() => background(page.getByTestId('preview-button'))).toBe('rgb(10, 125, 51)');
    await page.getByLabel('Page background', { exact: true }).fill('#fff4e0');
    await expect.poll(() => page.getByTestId('branding-preview').locator('.login-preview-page').evaluate((e) => (globalThis as unknown as Styled).getComputedStyle(e).backgroundColor)).toBe('rgb(255, 244, 224)');
    await lookAt('branding');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect(await json<unknown>(await management(server, 'GET', '/branding'))).toEqual({ colors: { primary: '#0a7d33', page_background: '#fff4e0' } });
    const login = await hostedPage();
    await login.waitForURL((url) => url.pathname === '/u/login');
    expect(await login.locator('button[type=submit]').first().evaluate((e) => (globalThis as unknown as Styled).getComputedStyle(e).backgroundColor)).toBe('rgb(10, 125, 51)');
    expect(await login.locator('body').evaluate((e) => (globalThis as unknown as Styled).getComputedStyle(e).backgroundColor)).toBe('rgb(255, 244, 224)');
    await login.close();
    // A colour the API refuses: its message in place.
    await page.getByLabel('Primary colour', { exact: true }).evaluate((input) => (input as unknown as { removeAttribute(name: string): void }).removeAttribute('pattern'));
    await page.getByLabel('Primary colour', { exact: true }).fill('green');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByRole('alert').filter({ hasText: /primary/ }).waitFor();
  });

  it('changes the tenant friendly name (the hosted login page shows it) and the MFA remember-browser lifetime', async () => {
    photographOnFailure();
    await nav().getByRole('link', { name: 'Settings' }).click();
    const general = page.getByTestId('tenant-settings');
    await general.getByLabel('Friendly name').fill('Acme Identity');
    await general.getByLabel('Support email').fill('help@acme.example');
    await general.getByLabel('Session lifetime (hours)', { exact: true }).fill('48');
    await general.getByLabel('Default audience').selectOption(ORDERS_API);
    await general.getByRole('button', { name: 'Save settings' }).click();
    await general.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const settings = await json<Record<string, unknown>>(await management(server, 'GET', '/tenants/settings'));
    expect(settings).toMatchObject({ friendly_name: 'Acme Identity', support_email: 'help@acme.example', session_lifetime: 48, default_audience: ORDERS_API });
    const mfa = page.getByTestId('remember-browser');
    await mfa.getByLabel('Ask again after inactivity (days)').fill('3');
    await mfa.getByRole('button', { name: 'Save MFA settings' }).click();
    await mfa.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const remember = await json<{ mfa_session_inactivity_timeout: number }>(await management(server, 'GET', '/guardian/settings'));
    expect(remember.mfa_session_inactivity_timeout).toBe(3 * 86_400);
    // Longer than the overall lifetime: refused, with the API's reason.
    await mfa.getByLabel('Ask again after inactivity (days)').fill('29');
    await mfa.getByLabel('Ask again in any case after (days)').fill('2');
    await mfa.getByRole('button', { name: 'Save MFA settings' }).click();
    await mfa.getByRole('alert').filter({ hasText: 'cannot exceed' }).waitFor();
    await lookAt('settings');
    const login = await hostedPage();
    await login.waitForURL((url) => url.pathname === '/u/login');
    await expect.poll(() => login.title()).toContain('Acme Identity');
    await login.close();
  });

  it('folds the sections behind a Menu button at 390 px, opened by keyboard, folded again once a link is followed', async () => {
    photographOnFailure();
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const menu = nav().getByRole('button', { name: /^Menu/ });
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await nav().getByRole('link').count()).toBe(0);
      await menu.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('true');
      expect(await nav().getByRole('link').count()).toBe(11);
      // The button controls the list it unfolds.
      const controlled = await menu.getAttribute('aria-controls');
      expect(await nav().locator(`[id="${controlled}"]`).getByRole('link', { name: 'Roles' }).count()).toBe(1);
      expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await nav().getByRole('link', { name: 'Roles' }).click();
      await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
      await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
      expect(await menu.innerText()).toContain('Roles');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    // Wide again: every link in a row, no Menu button.
    await nav().getByRole('link', { name: 'Settings' }).waitFor();
    expect(await nav().getByRole('button').count()).toBe(0);
  });

  it('had no serious or critical accessibility violation on the new pages, and no error in the console', () => {
    expect(inaccessible).toEqual([]);
    // The refusals the tests provoke are logged by the browser as failed requests; nothing else.
    expect(problems.filter((p) => !/status of (400|404|409)/.test(p))).toEqual([]);
  });
});
