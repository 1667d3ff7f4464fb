/**
 * The demo app at /demo in Chromium, as a newcomer meets it after `npm start`: hosted login, the verified
 * claims, user_metadata through svc.Management, silent renewal, logout. Screenshots go to /tmp/screens.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchBrowser, openPage, type BrowserSession } from '../../packages/server/src/test-support/browser.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';
import { createUser } from '../../packages/server/src/test-support/sign-in.js';

const PASSWORD = 'correct horse battery staple 9';
const SCREENS = '/tmp/screens';

/** The embedded login form (/co/authenticate, then /authorize with the ticket), as far as the greeting. */
async function embeddedLogin(page: Page, email: string, password: string): Promise<void> {
  await page.locator('#login-email').fill(email);
  await page.locator('#login-password').fill(password);
  await page.locator('#embedded-login button').click();
  await page.getByRole('heading', { name: /Hello/ }).waitFor();
}

describe('the demo app', () => {
  let server: TestServer;
  let browser: BrowserSession;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    await createUser(server, 'demo@example.com', PASSWORD);
    mkdirSync(SCREENS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in through the hosted page, shows verified claims, saves user_metadata, renews silently and logs out', async (context) => {
    const page = await openPage(browser, context);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${server.url}/demo`);
    await page.getByRole('button', { name: 'Log in with the hosted page' }).waitFor();
    await page.screenshot({ path: `${SCREENS}/demo-signed-out.png`, fullPage: true });

    await page.getByRole('button', { name: 'Log in with the hosted page' }).click();
    await page.waitForURL((url) => url.pathname === '/u/login');
    await page.getByLabel('Email address').fill('demo@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.pathname === '/demo' && url.hash === '');
    await page.getByRole('heading', { name: /Hello/ }).waitFor();
    expect(await page.locator('#id-claims').textContent()).toContain('demo@example.com');
    expect(await page.locator('#access-claims').textContent()).toContain('read:current_user');

    await page.locator('#metadata-json').fill('{"theme":"dark"}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();

    await page.getByRole('button', { name: /Renew silently/ }).click();
    await page.getByText(/Renewed silently/).waitFor();
    await page.screenshot({ path: `${SCREENS}/demo-signed-in.png`, fullPage: true });

    // A reload restores the session with checkSession, and the saved metadata comes back from the API.
    await page.reload();
    await page.getByRole('heading', { name: /Hello/ }).waitFor();
    await expect.poll(() => page.locator('#metadata-json').inputValue()).toContain('dark');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Log in with the hosted page' }).waitFor();
    expect(problems.filter((p) => !/login_required|401|favicon/.test(p))).toEqual([]);
    await page.close();
  });

  it('waits for a slow session check when the page loads, rather than showing a logged-in person as logged out', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${server.url}/demo`);
    await embeddedLogin(page, 'demo@example.com', PASSWORD);
    // A loaded machine, played by holding the silent session check (prompt=none) past the 5 s the page once
    // allowed it: the page must wait for the answer, not decide on a clock.
    await page.route(
      (url) => url.pathname === '/authorize' && url.searchParams.get('prompt') === 'none',
      async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 6_000));
        await route.continue();
      },
    );
    await page.reload();
    await page.getByText('Checking whether you are already logged in').waitFor();
    const hello = page.getByRole('heading', { name: /Hello/ });
    await Promise.race([hello.waitFor(), page.getByRole('button', { name: 'Log in with the hosted page' }).waitFor()]);
    expect(await hello.isVisible()).toBe(true);
    await page.unrouteAll();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Log in with the hosted page' }).waitFor();
    await page.close();
  });

  it('explains a refused signup in words: the password rules marked met or not, then what to do about a taken address', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${server.url}/demo`);
    await page.locator('#signup-email').fill('rules@example.com');
    await page.locator('#signup-password').fill('lowercase only');
    await page.getByRole('button', { name: 'Sign up', exact: true }).click();
    const status = page.locator('#status');
    await status.getByText('Choose a stronger password. It must have:').waitFor();
    expect(await status.textContent()).not.toMatch(/[{}[\]"]/); // no JSON
    expect(await status.locator('li.met', { hasText: /^Done: At least 8 characters in length$/ }).count()).toBe(1);
    expect(await status.locator('li.met', { hasText: /^Done: lower case letters \(a-z\)$/ }).count()).toBe(1);
    expect(await status.locator('li.unmet', { hasText: /^Still needed: upper case letters \(A-Z\)$/ }).count()).toBe(1);
    expect(await status.locator('li.unmet', { hasText: /^Still needed: Contain at least 3 of the following 4 types of characters:/ }).count()).toBe(1);
    await page.screenshot({ path: `${SCREENS}/demo-signup-rules.png`, fullPage: true });

    // A taken address with a weak password: the address is what to act on (log in instead), so it comes first.
    await page.locator('#signup-email').fill('DEMO@example.com');
    await page.getByRole('button', { name: 'Sign up', exact: true }).click();
    await status.getByText(/An account with this email already exists\. Log in with it instead/).waitFor();
    await page.locator('#login-email').fill('demo@example.com');
    await page.locator('#login-password').fill('not the password');
    await page.locator('#embedded-login button').click();
    await status.getByText(/Wrong email or password\. Check both and try again/).waitFor();
    await page.close();
  });

  it('embedded login, signup then login, passwordless by email code, and linking a second account in a popup', async (context) => {
    const page = await openPage(browser, context);
    await page.goto(`${server.url}/demo`);
    await embeddedLogin(page, 'demo@example.com', PASSWORD);
    const primary = await page.locator('#who').textContent();
    expect(primary).toBe('demo@example.com');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Log in with the hosted page' }).waitFor();

    // Sign up, then the embedded login that follows.
    await page.locator('#signup-email').fill('second@example.com');
    await page.locator('#signup-password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up', exact: true }).click();
    await page.getByRole('heading', { name: /Hello/ }).waitFor();
    expect(await page.locator('#who').textContent()).toBe('second@example.com');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Send me a code' }).waitFor();

    // Passwordless by email code, read from the dev mailbox.
    await page.locator('#pwl-email').fill('otp@example.com');
    await page.getByRole('button', { name: 'Send me a code' }).click();
    await page.locator('#pwl-code').waitFor();
    let code: string | undefined;
    await expect
      .poll(async () => {
        const mailbox = await (await fetch(`${server.url}/dev/mailbox`)).text();
        const article = mailbox.split('<article').find((a) => a.includes('otp@example.com'));
        code = article?.match(/\b(\d{6})\b/)?.[1];
        return code;
      })
      .toBeTruthy();
    await page.locator('#pwl-code').fill(code!);
    await page.locator('#passwordless-login button').click();
    await page.getByRole('heading', { name: /Hello/ }).waitFor();
    expect(await page.locator('#who').textContent()).toBe('otp@example.com');

    // Link the database account into this one: it logs in in a popup, its ID token goes to linkUser.
    const popupOpened = page.waitForEvent('popup');
    await page.getByRole('button', { name: 'Link another account' }).click();
    const popup = await popupOpened;
    await popup.waitForURL((url) => url.pathname === '/u/login');
    await popup.getByLabel('Email address').fill('second@example.com');
    await popup.getByLabel('Password').fill(PASSWORD);
    await popup.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Linked second@example.com.').waitFor();
    await expect.poll(() => page.locator('#identities li').count()).toBe(2);
    await page.screenshot({ path: `${SCREENS}/demo-linked.png`, fullPage: true });
    await page.close();
  });
});
