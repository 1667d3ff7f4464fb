// Checks the built artefacts in dist/ (the root `npm test` builds first). A missing dist/ is a
// failure, not a skip: run `npm run build -w @gatehouse/client`.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

function readBuilt(file: string): string {
  const path = dist(file);
  if (!existsSync(path)) {
    throw new Error(`${path} does not exist: run the build first (npm run build -w @gatehouse/client)`);
  }
  return readFileSync(path, 'utf8');
}

interface SvcGlobal {
  VERSION: string;
  WebAuth: new (options: unknown) => { baseUrl: string };
  Management: new (options: unknown) => { baseUrl: string };
}

describe('dist/svc.js (IIFE, global svc)', () => {
  let context: vm.Context;
  let svc: SvcGlobal;

  beforeAll(() => {
    const code = readBuilt('svc.js');
    // A browser-like global: the bundle may rely on standard web APIs such as URL, nothing else.
    context = vm.createContext({ URL });
    vm.runInContext(code, context, { filename: 'svc.js' });
    svc = (context as { svc: SvcGlobal }).svc;
  });

  it('defines the global svc and nothing else', () => {
    expect(Object.keys(context).sort()).toEqual(['URL', 'svc']);
    expect(typeof svc).toBe('object');
  });

  it('exposes VERSION, WebAuth and Management', () => {
    expect(svc.VERSION).toBe('10.0.0');
    expect(typeof svc.WebAuth).toBe('function');
    expect(typeof svc.Management).toBe('function');
  });

  it('constructs and validates like the source', () => {
    expect(new svc.WebAuth({ domain: 'example.com', clientID: 'abc' }).baseUrl).toBe('https://example.com');
    expect(new svc.Management({ domain: 'http://localhost:3000/', token: 't' }).baseUrl).toBe('http://localhost:3000');
    expect(() => new svc.WebAuth({ clientID: 'abc' })).toThrow('domain option is required');
    expect(() => new svc.WebAuth({ domain: 'example.com' })).toThrow('clientID option is required');
    expect(() => new svc.Management({ domain: 'example.com' })).toThrow('token option is required');
  });

  it('is minified and carries the version banner', () => {
    const code = readBuilt('svc.js');
    expect(code.startsWith('/*! svc v10.0.0 ')).toBe(true);
    expect(code.split('\n').length).toBeLessThan(6);
  });
});

describe('dist/svc.mjs (ESM)', () => {
  it('exports VERSION, WebAuth and Management', async () => {
    readBuilt('svc.mjs');
    const mod = (await import(/* @vite-ignore */ pathToFileURL(dist('svc.mjs')).href)) as SvcGlobal;
    expect(mod.VERSION).toBe('10.0.0');
    expect(new mod.WebAuth({ domain: 'example.com', clientID: 'abc' }).baseUrl).toBe('https://example.com');
    expect(typeof mod.Management).toBe('function');
  });
});

describe('dist/index.d.ts', () => {
  it('declares the public API', () => {
    const dts = readBuilt('index.d.ts');
    for (const name of ['VERSION', 'WebAuth', 'Management', 'WebAuthOptions', 'ManagementOptions']) {
      expect(dts).toContain(name);
    }
  });
});
