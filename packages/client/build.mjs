// Bundles src/index.ts into dist/: svc.mjs (ESM, unminified) and svc.js (minified IIFE that
// defines the global `svc`, for <script src="/lib/svc.js">). Declarations come from
// `tsc -p tsconfig.build.json`, which the package's build script runs after this file.
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

await rm(dist, { recursive: true, force: true });

/** @type {import('esbuild').BuildOptions} */
const common = {
  absWorkingDir: root,
  entryPoints: ['src/index.ts'],
  tsconfig: 'tsconfig.build.json',
  bundle: true,
  platform: 'browser',
  target: 'es2019',
  sourcemap: true,
  banner: { js: `/*! svc v${pkg.version} | Gatehouse browser library */` },
  logLevel: 'warning',
};

await Promise.all([
  build({ ...common, format: 'esm', outfile: 'dist/svc.mjs' }),
  build({ ...common, format: 'iife', globalName: 'svc', minify: true, outfile: 'dist/svc.js' }),
]);
