// One esbuild pass: src/main.tsx → dist/app.js (+ app.css from the imported stylesheet), and index.html as is.
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
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(`${here}src/index.html`, `${here}dist/index.html`);
copyFileSync(`${here}src/test-login.html`, `${here}dist/test-login.html`);
copyFileSync(`${here}src/favicon.svg`, `${here}dist/favicon.svg`);
