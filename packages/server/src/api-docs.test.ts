/**
 * /docs in real Chromium: both documents' operations render, under a CSP without inline script, with no CSP
 * violation, and nothing is fetched from anywhere but this server (it works offline).
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from './test-support/browser.js';
import { startTestServer, type TestServer } from './test-support/server.js';

const RENDERED_WITHIN_MS = 90_000;

/**
 * Swagger UI keeps only the operations near the viewport in the page: scroll down from the top, a little at a
 * time, until `target` is rendered.
 */
async function scrollTo(page: Page, target: Locator): Promise<void> {
  const deadline = Date.now() + RENDERED_WITHIN_MS;
  // As strings: this package is type-checked without the DOM library.
  await page.evaluate('window.scrollTo(0, 0)');
  while ((await target.count()) === 0) {
    if (Date.now() > deadline) throw new Error(`not rendered within ${RENDERED_WITHIN_MS} ms: ${target.toString()}`);
    const atEnd = await page.evaluate<boolean>('(() => { const before = window.scrollY; window.scrollBy(0, 500); return window.scrollY === before; })()');
    await page.waitForTimeout(atEnd ? 500 : 100);
  }
}

describe('GET /docs', () => {
  let test: TestServer;
  let browser: BrowserSession;

  beforeAll(async () => {
    test = await startTestServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
  });

  it('serves the viewer with a CSP that allows no inline script', async () => {
    const response = await fetch(`${test.url}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await response.text()).not.toMatch(/<script>(?!<\/script>)/);
    expect((await fetch(`${test.url}/docs/nothing.js`)).status).toBe(404);
  });

  // Swagger UI resolves a large document before it shows it: seconds on a busy machine, hence the generous waits.
  it('renders the operations of both documents in Chromium, offline and without CSP violations', { timeout: 240_000 }, async (context) => {
    const page = await openPage(browser, context);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const elsewhere: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(test.url) && !request.url().startsWith('data:')) elsewhere.push(request.url());
    });

    await page.goto(`${test.url}/docs`);
    const path = (text: string) => page.locator('.opblock-summary-path', { hasText: text });
    await page.locator('.opblock').first().waitFor({ timeout: RENDERED_WITHIN_MS });
    await scrollTo(page, path('/oauth/token'));
    await scrollTo(page, path('/authorize'));
    await scrollTo(page, path('/u/login'));
    await scrollTo(page, path('/api/v2/roles/{id}'));

    await page.goto(`${test.url}/docs?urls.primaryName=Management%20API`);
    await page.locator('.opblock').first().waitFor({ timeout: RENDERED_WITHIN_MS });
    await scrollTo(page, path('/attack-protection/suspicious-ip-throttling'));
    await scrollTo(page, path('/roles/{id}/permissions'));
    // An operation opens with its documented responses and their error bodies.
    await path('/roles/{id}/permissions').first().click();
    await page.locator('.responses-table').first().waitFor({ timeout: RENDERED_WITHIN_MS });
    expect(await page.locator('.response-col_status', { hasText: '401' }).count()).toBeGreaterThan(0);
    expect(await page.locator('.response-col_status', { hasText: '404' }).count()).toBeGreaterThan(0);

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
