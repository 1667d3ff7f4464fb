/**
 * The console's one build (Vite: Rolldown bundles, Oxc compiles the TSX with React's automatic JSX runtime, so no
 * React plugin is needed). What the server relies on (packages/server/src/console/assets.ts serves dist/ flat, by
 * name, under a strict CSP with no inline script):
 *  - index.html and test-login.html, their entries app.js and test-login.js, app.css, favicon.svg, all at the top
 *    of dist/ (no assets/ folder: the server's route takes one file name);
 *  - every page a chunk of its own (App.tsx imports them lazily), named <Page>-<hash>.js;
 *  - no modulepreload polyfill: every browser the console targets has modulepreload, and the polyfill is code on
 *    the first load for nothing. The preload links themselves stay (same origin: the CSP allows them).
 */
import { defineConfig } from 'vite';

const src = new URL('./src/', import.meta.url).pathname;

export default defineConfig({
  root: src,
  base: '/console/',
  // favicon.svg is copied as it is from here.
  publicDir: new URL('./public/', import.meta.url).pathname,
  logLevel: 'warn',
  build: {
    outDir: new URL('./dist/', import.meta.url).pathname,
    emptyOutDir: true,
    target: ['chrome110', 'firefox110', 'safari16'],
    assetsDir: '',
    modulePreload: { polyfill: false },
    // One stylesheet for both pages (test-login.html links the console's).
    cssCodeSplit: false,
    reportCompressedSize: false,
    rolldownOptions: {
      // Radix marks its modules "use client" (for React Server Components); in a browser-only bundle it means nothing.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      input: { app: `${src}index.html`, 'test-login': `${src}test-login.html` },
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: '[name]-[hash].js',
        assetFileNames: (asset) => (asset.names.some((name) => name.endsWith('.css')) ? 'app.css' : '[name][extname]'),
      },
    },
  },
});
