/**
 * Looking at a console page as #15's acceptance asks, for the console's Chromium tests: axe-core's scan (injected
 * through the debugging protocol, which the console's strict CSP does not govern) and screenshots at 1280 and
 * 390 px in test-results/console/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** Where the console tests leave their screenshots. */
export const SHOTS = path.resolve('test-results', 'console');

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** Scans and photographs `page` at both widths; returns the serious and critical violations and any sideways overflow, for the test to assert on. */
export async function lookAt(page: Page, name: string): Promise<string[]> {
  mkdirSync(SHOTS, { recursive: true });
  const found: string[] = [];
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      // In the page: axe.run() scans the whole document.
      const axe = (globalThis as unknown as { axe: { run: (options: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
      const result = await axe.run({ resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
    });
    // Responsive down to 390 px (#15): nothing wider than the screen, so no page scrolls sideways.
    const wide = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
    if (wide > width) found.push(`${name}@${width}: the page is ${wide} px wide, wider than the screen`);
    for (const v of violations) {
      if (v.impact === 'serious' || v.impact === 'critical') found.push(`${name}@${width}: ${v.id} (${v.impact}) ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
    }
    await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  return found;
}
