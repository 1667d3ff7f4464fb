// One esbuild pass: src/main.tsx → dist/app.js (+ app.css from the imported stylesheet), and index.html as is.
// Code splitting: each page is its own chunk (pages.ts imports them lazily), and what the pages share with the
// frame lands in chunk-*.js files app.js imports; the server serves them flat from dist/ like app.js.
// esbuild rather than Vite: it is already the repository's bundler (svc's build), needs no dev server, and the
// whole console builds in well under a second, which matters because `npm test` builds first.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
rmSync(`${here}dist`, { recursive: true, force: true });
mkdirSync(`${here}dist`, { recursive: true });
await build({
  // test-login: the test login's callback page (a few lines, no React).
  entryPoints: { app: `${here}src/main.tsx`, 'test-login': `${here}src/test-login.ts` },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  outdir: `${here}dist`,
  splitting: true,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(`${here}src/index.html`, `${here}dist/index.html`);
copyFileSync(`${here}src/test-login.html`, `${here}dist/test-login.html`);
copyFileSync(`${here}src/favicon.svg`, `${here}dist/favicon.svg`);
