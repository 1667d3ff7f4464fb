import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from './config.js';
import { openStore } from './store/db.js';

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      // A localhost public URL: loopback only (issue #19, item 9).
      host: '127.0.0.1',
      publicUrl: 'http://localhost:3000',
      dataDir: path.resolve('./data'),
      databaseUrl: `sqlite:${path.resolve('./data/gatehouse.sqlite')}`,
      redisUrl: undefined,
      workers: 1,
      tls: undefined,
    });
  });

  it('derives the public URL from PORT and TLS, and trims a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ GATEHOUSE_TLS_CERT: 'c.pem', GATEHOUSE_TLS_KEY: 'k.pem' }).publicUrl).toBe('https://localhost:3000');
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://ID.example.com/' }).publicUrl).toBe('https://id.example.com');
  });

  it.each([
    [{ PORT: 'abc' }, /PORT=abc: expected a whole number/],
    [{ PORT: '70000' }, /PORT=70000/],
    [{ GATEHOUSE_PUBLIC_URL: 'not a url' }, /GATEHOUSE_PUBLIC_URL=not a url: expected an absolute/],
    [{ GATEHOUSE_PUBLIC_URL: 'ftp://x' }, /scheme must be http or https/],
    [{ GATEHOUSE_PUBLIC_URL: 'https://x/auth' }, /a path is not supported/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL: expected postgres/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL: expected redis:\/\//],
    [{ GATEHOUSE_MASTER_KEY: 'short' }, /GATEHOUSE_MASTER_KEY: expected 32 bytes/],
    [{ GATEHOUSE_TLS_CERT: 'c.pem' }, /must be set together/],
    [{ GATEHOUSE_ADMIN_CLIENT_ID: 'abcdefgh' }, /must be set together/],
    [{ GATEHOUSE_ADMIN_CLIENT_ID: 'abcdefgh', GATEHOUSE_ADMIN_CLIENT_SECRET: 'short' }, /at least 32 characters/],
    [{ GATEHOUSE_WORKERS: '0' }, /GATEHOUSE_WORKERS=0/],
    [{ GATEHOUSE_LOG_LEVEL: 'loud' }, /GATEHOUSE_LOG_LEVEL=loud/],
    [{ GATEHOUSE_SQLITE_SYNCHRONOUS: 'off' }, /GATEHOUSE_SQLITE_SYNCHRONOUS=off: expected normal or full/],
    [{ GATEHOUSE_TENANT_LOGS: 'no' }, /GATEHOUSE_TENANT_LOGS=no: expected on or off/],
  ])('refuses %o with a message naming the key', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('listens on loopback only for a localhost public URL, unless HOST says otherwise, and says why', () => {
    expect(loadConfig({})).toMatchObject({ host: '127.0.0.1', hostSource: expect.stringMatching(/loopback only.*HOST=0\.0\.0\.0/) });
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'http://127.0.0.1:4000' }).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' })).toMatchObject({ host: '0.0.0.0', hostSource: 'HOST=0.0.0.0' });
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://id.example.com' })).toMatchObject({ host: '0.0.0.0', hostSource: expect.stringMatching(/every interface/) });
    expect(loadConfig({ PORT: '4100' }).publicUrlSource).toMatch(/PORT=4100/);
    expect(loadConfig({ GATEHOUSE_PUBLIC_URL: 'https://id.example.com' }).publicUrlSource).toBe('GATEHOUSE_PUBLIC_URL');
  });

  it('runs SQLite with synchronous NORMAL unless FULL is asked for, and the database says so', async () => {
    expect(loadConfig({}).sqliteSynchronous).toBe('normal');
    expect(loadConfig({ GATEHOUSE_SQLITE_SYNCHRONOUS: 'FULL' }).sqliteSynchronous).toBe('full');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-sync-'));
    for (const [setting, level] of [['normal', 1], ['full', 2]] as const) {
      const config = loadConfig({ GATEHOUSE_SQLITE_SYNCHRONOUS: setting, GATEHOUSE_DATA_DIR: dir });
      const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
      try {
        const row = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
        expect(row.rows[0]!.synchronous).toBe(level);
      } finally {
        await store.close();
      }
    }
  });

  it('records tenant logs unless GATEHOUSE_TENANT_LOGS is off', () => {
    expect(loadConfig({}).tenantLogs).toBe(true);
    expect(loadConfig({ GATEHOUSE_TENANT_LOGS: 'on' }).tenantLogs).toBe(true);
    expect(loadConfig({ GATEHOUSE_TENANT_LOGS: ' OFF ' }).tenantLogs).toBe(false);
  });

  it('accepts a master key in hex or base64', () => {
    expect(loadConfig({ GATEHOUSE_MASTER_KEY: 'ab'.repeat(32) }).masterKey).toBe('ab'.repeat(32));
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ GATEHOUSE_MASTER_KEY: b64 }).masterKey).toBe(b64);
  });

  it('reads an optional JSON file, with the environment winning', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-config-'));
    const file = path.join(dir, 'gatehouse.json');
    writeFileSync(file, JSON.stringify({ PORT: 4000, GATEHOUSE_PUBLIC_URL: 'https://file.example', GATEHOUSE_WORKERS: '2' }));
    const config = loadConfig({ GATEHOUSE_CONFIG_FILE: file, GATEHOUSE_PUBLIC_URL: 'https://env.example' });
    expect(config).toMatchObject({ port: 4000, publicUrl: 'https://env.example', workers: 2 });
    writeFileSync(file, JSON.stringify({ PROT: 1 }));
    expect(() => loadConfig({ GATEHOUSE_CONFIG_FILE: file })).toThrow(/unknown key PROT/);
    writeFileSync(file, '{ nope');
    expect(() => loadConfig({ GATEHOUSE_CONFIG_FILE: file })).toThrow(/cannot read it as JSON/);
  });
});
