#!/usr/bin/env node
// The `gatehouse` command. A committed launcher (not dist/cli.js itself) so that npm links the bin on a fresh
// install, before anything is built.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('gatehouse is not built yet: run `npm run build` in the repository root first.');
  process.exit(1);
}
await import(cli.href);
