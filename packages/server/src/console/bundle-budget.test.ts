/**
 * The console's bundle budget, as the README states it: app.js at most 150 KB gzip-compressed. A size, not a
 * speed: the figure a slow link pays once per visit (the files are revalidated, not re-downloaded).
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const DIST = new URL('../../../console/dist/', import.meta.url);
const BUDGET_BYTES = 150 * 1024;

describe('console bundle budget', () => {
  it('app.js (built by npm run build) is within 150 KB gzip, and app.css is small', () => {
    const js = gzipSync(readFileSync(new URL('app.js', DIST))).length;
    const css = gzipSync(readFileSync(new URL('app.css', DIST))).length;
    expect(js).toBeGreaterThan(10 * 1024);
    expect(js).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(css).toBeLessThanOrEqual(10 * 1024);
  });
});
