/**
 * GET /: a page in Chromium (under the hosted pages' CSP, without violations, every link answering), and the
 * same links as JSON for Accept: application/json.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import type { LandingLinks } from './landing-page.js';

describe('GET / (landing page)', () => {
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

  it('answers JSON links for Accept: application/json, each of which answers', async () => {
    const response = await fetch(`${test.url}/`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('vary')).toMatch(/Accept/i);
    const links = (await response.json()) as LandingLinks;
    const discovery = (await (await fetch(links.discovery)).json()) as { issuer: string };
    expect(discovery.issuer).toBe(links.issuer);
    for (const url of [links.documentation, links.openapi, links.management_openapi, links.demo!]) expect((await fetch(url)).status, url).toBe(200);
    if (links.dev_mailbox) expect((await fetch(links.dev_mailbox)).status).toBe(200);
  });

  it('renders the page in Chromium under the CSP, with its links, and no violation', async (context) => {
    const page = await openPage(browser, context);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    const response = await page.goto(`${test.url}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).not.toContain('unsafe-inline');
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.locator('body').innerText()).toContain('Gatehouse identity service');
    const hrefs = await page.locator('dl a').evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href));
    expect(hrefs).toEqual(expect.arrayContaining([`${test.url}/.well-known/openid-configuration`, `${test.url}/docs`, `${test.url}/demo`]));
    const dir = path.resolve('test-results', 'screens');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, 'landing.png'), fullPage: true });
    expect(problems).toEqual([]);
  });
});
