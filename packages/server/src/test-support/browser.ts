/**
 * Real Chromium (Debian's /usr/bin/chromium) driven by playwright-core: headless, fresh profile, no background
 * traffic (this machine has no internet, and Chromium's background requests would otherwise fail noisily).
 * `openPage` saves a full-page screenshot to test-results/ when the test that used it fails.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { onTestFailed, type TestContext } from 'vitest';

export const CHROMIUM_PATH = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
/** Relative to where the test runner was started (the repository root). */
const RESULTS_DIR = path.resolve('test-results');

export interface BrowserSession {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<BrowserSession> {
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    ignoreHTTPSErrors: true,
  });
  // Every wait is for a condition (an element, a URL, an event); on a loaded machine it may take long, so
  // Playwright's own 30 s bound is raised to the test's (vitest.config.ts), which then reports a real failure.
  context.setDefaultTimeout(110_000);
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** A new page; if the current test fails, its last state is saved as test-results/<test name>.png. */
export async function openPage(session: BrowserSession, test: TestContext): Promise<Page> {
  const page = await session.context.newPage();
  onTestFailed(async () => {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const name = test.task.name.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 100);
    await page.screenshot({ path: path.join(RESULTS_DIR, `${name}.png`), fullPage: true }).catch(() => undefined);
  });
  return page;
}
