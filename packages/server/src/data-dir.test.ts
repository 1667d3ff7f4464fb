/**
 * The data directory is 0700 and every file in it 0600, the SQLite database's WAL and shared-memory files too
 * (issue #19, item 8), whatever the umask; what an older start left more open is tightened.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { startServer } from './server.js';
import { freePort } from './test-support/services.js';

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

async function startIn(dataDir: string) {
  const config = loadConfig({ GATEHOUSE_LOG_LEVEL: 'silent' }, { port: await freePort(), host: '127.0.0.1', dataDir });
  const server = await startServer(config, { log: false });
  // A write, so that SQLite has its WAL and shared-memory files.
  const res = await fetch(`${config.publicUrl}/dbconnections/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(400);
  return server;
}

describe('the data directory', () => {
  it('is created 0700 with every file 0600, WAL and SHM included, under a permissive umask', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-modes-'));
    roots.push(root);
    const dataDir = path.join(root, 'data');
    const previous = process.umask(0o022);
    try {
      const server = await startIn(dataDir);
      try {
        const files = readdirSync(dataDir);
        expect(files).toEqual(expect.arrayContaining(['gatehouse.sqlite', 'gatehouse.sqlite-wal', 'gatehouse.sqlite-shm', 'master.key', 'admin-credentials.json']));
        expect(mode(dataDir)).toBe('700');
        expect(Object.fromEntries(files.map((f) => [f, mode(path.join(dataDir, f))]))).toEqual(Object.fromEntries(files.map((f) => [f, '600'])));
      } finally {
        await server.close();
      }
    } finally {
      process.umask(previous);
    }
  });

  it('tightens a directory and database an older start left world-readable', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-modes-'));
    roots.push(root);
    const dataDir = path.join(root, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const first = await startIn(dataDir);
    await first.close();
    for (const file of readdirSync(dataDir)) chmodSync(path.join(dataDir, file), 0o644);
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'gatehouse.sqlite-shm'), Buffer.alloc(0), { flag: 'a' });
    const second = await startIn(dataDir);
    try {
      expect(mode(dataDir)).toBe('700');
      for (const file of readdirSync(dataDir).filter((f) => f.startsWith('gatehouse.sqlite'))) expect([file, mode(path.join(dataDir, file))]).toEqual([file, '600']);
    } finally {
      await second.close();
    }
  });
});
