/** The `gatehouse` command as a user runs it: built JS in a child process, real ports, real signals. */
import https from 'node:https';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runCliToEnd, type CliProcess } from './test-support/cli.js';
import { freePort } from './test-support/services.js';
import { startTestServer } from './test-support/server.js';

const dirs: string[] = [];
const running: CliProcess[] = [];
function dataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const run of running.splice(0)) {
    if (run.child.exitCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>, args: string[] = []): Promise<CliProcess> {
  const run = runCli(['start', ...args], env);
  running.push(run);
  await run.waitFor(/Management API token/);
  return run;
}

async function stop(run: CliProcess): Promise<number | null> {
  run.child.kill('SIGTERM');
  return (await run.exited).code;
}

const jwksKids = async (base: string) =>
  ((await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

describe('gatehouse CLI', () => {
  it('migrates a fresh database, then reports it up to date', async () => {
    const env = { GATEHOUSE_DATA_DIR: dataDir() };
    const first = await runCliToEnd(['migrate'], env);
    expect(first).toMatchObject({ code: 0 });
    expect(first.output).toContain('Applied: 0001_foundation');
    const second = await runCliToEnd(['migrate'], env);
    expect(second.output).toMatch(/is up to date/);
  });

  it('starts, prints where things are, stops on SIGTERM, and restarts with the same tenant and keys', async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1' };
    const base = `http://localhost:${port}`;
    const first = await start(env);
    const banner = first.output();
    expect(banner).toContain(`Issuer:           ${base}/`);
    expect(banner).toContain(`${base}/.well-known/openid-configuration`);
    expect(banner).toContain(path.join(env.GATEHOUSE_DATA_DIR, 'admin-credentials.json'));
    expect(banner).toMatch(/client_secret:\s+\S{40,}/); // shown once, on creation
    const clientId = banner.match(/client_id:\s+(\w+)/)![1];
    const kids = await jwksKids(base);
    expect(await stop(first)).toBe(0);

    const second = await start(env);
    expect(second.output()).toContain(`Admin credentials: ${path.join(env.GATEHOUSE_DATA_DIR, 'admin-credentials.json')} (client_id ${clientId})`);
    expect(second.output()).not.toMatch(/client_secret:\s+\S{40,}/);
    expect(await jwksKids(base)).toEqual(kids);
    expect(await stop(second)).toBe(0);

    // `keys rotate` promotes the next key: it is served first (as current) after the next start.
    const rotate = await runCliToEnd(['keys', 'rotate'], env);
    expect(rotate.code).toBe(0);
    expect(rotate.output).toContain(`Now signing with ${kids[1]}`);
    const third = await start(env);
    const rotated = await jwksKids(base);
    expect(rotated.slice(0, 1)).toEqual([kids[1]]);
    expect(rotated).toContain(kids[0]); // previous, still published
    expect(rotated).toHaveLength(3);
    expect(await stop(third)).toBe(0);
  });

  it('serves the same over TLS with --https, reusing its self-signed certificate', async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1' };
    const run = await start(env, ['--https']);
    expect(run.output()).toContain(`Issuer:           https://localhost:${port}/`);
    const metadata = await new Promise<{ issuer: string }>((resolve, reject) => {
      https
        .get(`https://localhost:${port}/.well-known/openid-configuration`, { rejectUnauthorized: false }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve(JSON.parse(body) as { issuer: string }));
        })
        .on('error', reject);
    });
    expect(metadata.issuer).toBe(`https://localhost:${port}/`);
    expect(await stop(run)).toBe(0);
  });

  it('runs several worker processes on one port', async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1', GATEHOUSE_WORKERS: '2' };
    const run = await start(env);
    expect(run.output()).toContain('2 workers');
    // The banner comes once the first worker listens; wait until the server answers (however long a loaded machine takes).
    await expect.poll(async () => (await fetch(`http://localhost:${port}/readyz`).catch(() => undefined))?.status, { interval: 100 }).toBe(200);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://localhost:${port}/.well-known/jwks.json`).then((r) => r.status)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await stop(run)).toBe(0);
  });

  it('refuses a bad configuration with a clear message and exit code 78', async () => {
    const result = await runCliToEnd(['start'], { GATEHOUSE_DATA_DIR: dataDir(), PORT: 'abc' });
    expect(result.code).toBe(78);
    expect(result.output).toContain('Configuration error: PORT=abc: expected a whole number');
    const unknown = await runCliToEnd(['frobnicate'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain('Usage:');
  });
});

describe('gatehouse CLI for a newcomer and an operator (issues #18, #19)', () => {
  it('answers -h, --help and --version, and names a port in use in one line', async () => {
    for (const flag of ['-h', '--help']) {
      const help = await runCliToEnd([flag], {});
      expect(help.code).toBe(0);
      expect(help.output).toMatch(/^Usage:/);
    }
    const version = await runCliToEnd(['--version'], {});
    expect(version).toMatchObject({ code: 0, output: expect.stringMatching(/^gatehouse \d+\.\d+\.\d+\n$/) });

    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1' };
    await start(env);
    const second = await runCliToEnd(['start'], { ...env, GATEHOUSE_DATA_DIR: dataDir() });
    expect(second.code).toBe(1);
    expect(second.output.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Port ${port} is already in use .*PORT=${port + 1} `))]);
  });

  it('with several workers, a port in use stops the server with the same one line instead of restarting workers', async () => {
    const port = await freePort();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      // Before the fix the primary replaced each failing worker forever: this never exited.
      const run = runCli(['start'], { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1', GATEHOUSE_WORKERS: '2' });
      running.push(run);
      expect((await run.exited).code).toBe(1);
      // One line, as without workers: no banner (nothing listened), no line per worker, no restart notices.
      expect(run.output().trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Port ${port} is already in use \\(127\\.0\\.0\\.1:${port}\\).*PORT=${port + 1} `))]);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('never prints an admin secret the operator supplied, and says where it came from', async () => {
    const secret = 'operator-supplied-secret-0123456789abcdef';
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(await freePort()), HOST: '127.0.0.1', GATEHOUSE_ADMIN_CLIENT_ID: 'ops-admin-client', GATEHOUSE_ADMIN_CLIENT_SECRET: secret };
    const run = await start(env);
    const banner = run.output();
    expect(banner).not.toContain(secret);
    expect(banner).not.toContain('undefined');
    expect(banner).toContain('ops-admin-client, created from GATEHOUSE_ADMIN_CLIENT_ID / GATEHOUSE_ADMIN_CLIENT_SECRET');
    expect(banner).toContain('-d client_secret=$GATEHOUSE_ADMIN_CLIENT_SECRET');
    expect(await stop(run)).toBe(0);
    const again = await start(env);
    expect(again.output()).not.toContain(secret);
    expect(await stop(again)).toBe(0);
  });

  it("prints a token one-liner that works, and where it listens", async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port) };
    const run = await start(env);
    // No HOST and a localhost public URL: loopback only, and the banner says so.
    expect(run.output()).toContain(`Listening on:     127.0.0.1:${port} (loopback only`);
    const line = /(TOKEN=\$\(curl[\s\S]*?access_token'\))/.exec(run.output())![1]!;
    const { execFileSync } = await import('node:child_process');
    const token = execFileSync('bash', ['-c', `${line.replace(/\\\n\s*/g, ' ')}; echo "$TOKEN"`], { encoding: 'utf8' }).trim();
    expect(token).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await stop(run)).toBe(0);
  });
});

describe('the public URL belongs to gatehouse start', () => {
  it('export and import from a shell without PORT leave the running tenant as stored; a start that moves it says so', async () => {
    const port = await freePort();
    const env = { GATEHOUSE_DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1' };
    const run = await start(env);
    const file = path.join(env.GATEHOUSE_DATA_DIR, 'tenant.json');
    // Another shell: the same data, no PORT (so its own default would be localhost:3000).
    const shell = { GATEHOUSE_DATA_DIR: env.GATEHOUSE_DATA_DIR };
    expect((await runCliToEnd(['export', file], shell)).code).toBe(0);
    expect((await runCliToEnd(['import', file], shell)).code).toBe(0);
    const { openStore } = await import('./store/db.js');
    const { findDefaultTenant } = await import('./store/tenants.js');
    const store = await openStore(`sqlite:${path.join(env.GATEHOUSE_DATA_DIR, 'gatehouse.sqlite')}`);
    try {
      expect((await findDefaultTenant(store.db))?.baseUrl).toBe(`http://localhost:${port}`);
    } finally {
      await store.close();
    }
    expect(((await (await fetch(`http://localhost:${port}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer).toBe(`http://localhost:${port}/`);
    expect(await stop(run)).toBe(0);

    const moved = await freePort();
    const next = await start({ ...env, PORT: String(moved), GATEHOUSE_LOG_LEVEL: 'info' });
    expect(next.output()).toContain(`Public URL:       changed from http://localhost:${port} to http://localhost:${moved} (no GATEHOUSE_PUBLIC_URL: localhost and PORT=${moved})`);
    // The log line (written asynchronously, so perhaps after the banner).
    await next.waitFor(/"from":"http:\/\/localhost:\d+".*"msg":"the default tenant's public URL changed"/);
    expect(await stop(next)).toBe(0);
  });
});

describe('graceful shutdown', () => {
  it('lets in-flight requests finish and refuses new connections', async () => {
    let release!: () => void;
    let arrived!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const server = await startTestServer({
      configure: (app) =>
        app.get('/slow-probe', { schema: { hide: true } }, async () => {
          arrived();
          await gate;
          return { done: true };
        }),
    });
    const inFlight = fetch(`${server.url}/slow-probe`);
    // Close once the request is being handled (not after a guessed time: on a loaded machine it may not be yet).
    await reached;
    const closing = server.close();
    await expect.poll(() => fetch(`${server.url}/healthz`).then(() => 'answered', () => 'refused'), { interval: 50 }).toBe('refused');
    release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await closing;
  });
});
