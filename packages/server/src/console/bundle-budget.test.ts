/**
 * The console's bundle budget, as the README states it (gzip-compressed sizes, the figure a slow link pays once
 * per visit; the files are revalidated, not re-downloaded):
 *  - the initial load, app.js and the chunks it imports statically, at most 150 KB;
 *  - each page's chunk (imported lazily when the page is first visited), and each shared chunk, at most 25 KB.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ASSET_NAME } from './assets.js';

const DIST = new URL('../../../console/dist/', import.meta.url);
const INITIAL_BUDGET = 150 * 1024;
const CHUNK_BUDGET = 25 * 1024;

const source = (name: string) => readFileSync(new URL(name, DIST), 'utf8');
const gzipped = (name: string) => gzipSync(readFileSync(new URL(name, DIST))).length;

// The minifier quotes specifiers with " or ` (Vite's output uses template literals for dynamic imports).
const QUOTE = '["\'`]';

/** The files a module imports statically (`import … from "./x.js"`, `import "./x.js"`), not `import("./x.js")`. */
function staticImports(name: string): string[] {
  return [...source(name).matchAll(new RegExp(`(?:\\bfrom|\\bimport)\\s*${QUOTE}\\./([A-Za-z0-9_-]+\\.js)${QUOTE}`, 'g'))].map((m) => m[1]!);
}

function lazyImports(name: string): string[] {
  return [...source(name).matchAll(new RegExp(`\\bimport\\(\\s*${QUOTE}\\./([A-Za-z0-9_-]+\\.js)${QUOTE}\\s*\\)`, 'g'))].map((m) => m[1]!);
}

/** app.js and everything it needs before it runs. */
function initialLoad(): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    staticImports(name).forEach(visit);
  };
  visit('app.js');
  return [...seen];
}

describe('console bundle budget', () => {
  it('the initial load (app.js and its static imports) is within 150 KB gzip, and app.css is small', () => {
    const initial = initialLoad();
    const bytes = initial.reduce((sum, name) => sum + gzipped(name), 0);
    expect(gzipped('app.js')).toBeGreaterThan(10 * 1024);
    expect(bytes).toBeLessThanOrEqual(INITIAL_BUDGET);
    expect(gzipped('app.css')).toBeLessThanOrEqual(10 * 1024);
  });

  it('the pages are lazy chunks, not in the initial load, and every other chunk is within 25 KB gzip', () => {
    const initial = new Set(initialLoad());
    // Unique files: one chunk may hold two pages (a list and its detail).
    const pages = [...new Set(lazyImports('app.js'))];
    // The pages this slice added, at least, load on demand.
    for (const page of ['Connections', 'Organizations', 'Roles', 'AttackProtection', 'Branding', 'TenantSettings']) {
      expect(pages.some((file) => file.startsWith(`${page}-`))).toBe(true);
    }
    const others = readdirSync(DIST).filter((name) => name.endsWith('.js') && !initial.has(name));
    expect(others.length).toBeGreaterThanOrEqual(pages.length);
    for (const name of others) expect(gzipped(name), name).toBeLessThanOrEqual(CHUNK_BUDGET);
    // Every file a chunk imports, lazily or statically, exists, and every file has a name the server's route takes
    // (dist/ is served flat: a folder or a second dot in a name would be a file the browser cannot get).
    const files = new Set(readdirSync(DIST));
    for (const name of files) expect(name).toMatch(new RegExp(CONSOLE_ASSET_NAME));
    for (const name of [...initial, ...others]) for (const imported of [...staticImports(name), ...lazyImports(name)]) expect(files.has(imported)).toBe(true);
  });
});
