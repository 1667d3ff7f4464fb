/**
 * The dev mailbox (every password-reset link and one-time code) is for this machine only (issue #19, item 9):
 * a request from another address is a 404 whatever its Host header says, and so is one forwarded by a proxy
 * that is not trusted, or one a trusted proxy forwards for a remote client.
 */
import http from 'node:http';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { startServer, type RunningServer } from '../server.js';
import { freePort } from '../test-support/services.js';

/** This machine's first address that is not loopback (the "other machine" a request comes from). */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

function getFrom(address: string, port: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: address, port, path, localAddress: address, agent: false, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('the dev mailbox is for loopback peers only', () => {
  let server: RunningServer;
  let port: string;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mailbox-'));
  beforeAll(async () => {
    // Every interface (as HOST=0.0.0.0 says), a localhost public URL, and a proxy on loopback that is trusted.
    const config = loadConfig({ GATEHOUSE_LOG_LEVEL: 'silent', HOST: '0.0.0.0', GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1' }, { port: await freePort(), dataDir });
    expect(config.devMailbox).toBe(true);
    server = await startServer(config, { log: false });
    port = String(config.port);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers this machine', async () => {
    expect(await getFrom('127.0.0.1', port, '/dev/mailbox', { host: `localhost:${port}` })).toBe(200);
  });

  it('is a 404 to another address, even with Host: localhost', async () => {
    const address = externalAddress();
    expect(address, 'a non-loopback interface to send from').toBeDefined();
    expect(await getFrom(address!, port, '/dev/mailbox', { host: `localhost:${port}` })).toBe(404);
    expect(await getFrom(address!, port, '/dev/mailbox/eml_0000000000000000000000', { host: `localhost:${port}` })).toBe(404);
    // The rest of the server still answers it.
    expect(await getFrom(address!, port, '/.well-known/openid-configuration', { host: `localhost:${port}` })).toBe(200);
  });

  it('is a 404 to a remote client behind the trusted proxy', async () => {
    expect(await getFrom('127.0.0.1', port, '/dev/mailbox', { host: `localhost:${port}`, 'x-forwarded-for': '203.0.113.9' })).toBe(404);
    expect(await getFrom('127.0.0.1', port, '/dev/mailbox', { host: `localhost:${port}`, 'x-forwarded-for': '127.0.0.1' })).toBe(200);
  });
});
