/**
 * The admin console in real Chromium against the real server (#15): the first admin follows the setup link
 * printed at start, chooses a password and lands in the console; creates an application and adds a callback
 * URL; finds a user, blocks them and sees their login refused; and a user who is not an admin gets the
 * "No access" page. One browser for the file.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { createApp, createUser, management, readForm, TestBrowser } from '../test-support/sign-in.js';
import { startTestServer, type TestServer } from '../test-support/server.js';

const ADMIN = { email: 'first.admin@example.com', password: 'Console-first-admin-2026!' };
const USER_PASSWORD = 'Blockable-user-2026!';
const SHOTS = path.resolve('test-results');

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true });
}

describe('admin console in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let setupUrl: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
    setupUrl = server.server.prepared.bootstrap!.console.setupUrl!;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('setup link → console; create an application and add a callback; find a user, block them, their login is refused; a non-admin sees "No access"', async (context) => {
    expect(setupUrl).toMatch(new RegExp(`^${server.url}/u/console-setup\\?ticket=`));
    const target = await createUser(server, 'blockable.person@example.com', USER_PASSWORD);
    const page = await openPage(browser, context);
    const problems: string[] = [];
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
    await page.setViewportSize({ width: 1280, height: 800 });
    await screenshot(page, 'home-1280');

    // The link worked once.
    const again = await fetch(setupUrl);
    expect(again.status).toBe(400);

    // Applications: create a single-page app, then add a callback URL on its page.
    await page.getByRole('link', { name: 'Applications' }).click();
    await page.getByLabel('Name').fill('Shop front');
    await page.getByLabel('Type').selectOption('spa');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Shop front' }).waitFor();
    const clientId = await page.getByTestId('client-id').innerText();
    expect(clientId).toMatch(/^[A-Za-z0-9]{32}$/);
    await page.getByLabel('Allowed callback URLs').fill('https://shop.example/callback');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await (await management(server, 'GET', `/clients/${clientId}`)).json()) as { name: string; app_type: string; callbacks: string[] };
    expect(saved).toMatchObject({ name: 'Shop front', app_type: 'spa', callbacks: ['https://shop.example/callback'] });
    await screenshot(page, 'application-1280');

    // Users: search, open, block (confirmed in a dialog).
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Search').fill('blockable');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'blockable.person@example.com' }).click();
    await page.getByTestId('user-status').filter({ hasText: 'Active' }).waitFor();
    await page.getByRole('button', { name: 'Block', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Block user' }).click();
    await page.getByTestId('user-status').filter({ hasText: 'Blocked' }).waitFor();
    const blocked = (await (await management(server, 'GET', `/users/${encodeURIComponent(target.user_id)}`)).json()) as { blocked?: boolean };
    expect(blocked.blocked).toBe(true);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'user-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Their login is refused now.
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

    // The failed-deliveries page answers (no streams yet).
    await page.getByRole('link', { name: 'Failed deliveries' }).click();
    await page.getByText('No event streams yet.').waitFor();

    // Sign out; a user who is not an admin signs in and gets a clear page, not a broken console.
    await createUser(server, 'not.admin@example.com', USER_PASSWORD);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel(/email/i).first().waitFor();
    await page.getByLabel(/email/i).first().fill('not.admin@example.com');
    await page.getByLabel('Password', { exact: true }).fill(USER_PASSWORD);
    await page.getByRole('button', { name: /continue|log in/i }).click();
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    await screenshot(page, 'no-access-1280');
    expect(problems).toEqual([]);
  });
});
