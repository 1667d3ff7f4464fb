import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { startTestServer, type TestServer } from '../test-support/server.js';

/** Sends two requests on one socket `pauseMs` apart; resolves with the status lines read, or 'closed'. */
async function twoRequestsOnOneSocket(url: string, pauseMs: number): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const lines: string[] = [];
  let buffer = '';
  let closed = false;
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    for (const match of buffer.matchAll(/HTTP\/1\.1 (\d{3})/g)) lines.push(match[1]!);
    buffer = '';
  });
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const request = `GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: keep-alive\r\n\r\n`;
  socket.write(request);
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  if (closed) {
    lines.push('closed');
  } else {
    socket.write(request);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  socket.destroy();
  return lines;
}

/**
 * One request; when its answer arrives this process (the server's too) is kept busy past the keep-alive timeout,
 * and the second request is written the moment it resumes, as a client does whose own work held its event loop
 * (auth0-deploy-cli validating its schema): the server's timer is due by then, and the request already waits on
 * the socket.
 */
async function secondRequestAfterBusyPause(url: string, busyMs: number): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const request = `GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: keep-alive\r\n\r\n`;
  const lines: string[] = [];
  socket.on('data', (chunk) => {
    for (const match of chunk.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3})/g)) lines.push(match[1]!);
    if (lines.length === 1) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, busyMs);
      socket.write(request);
    }
  });
  socket.on('error', (err: NodeJS.ErrnoException) => lines.push(err.code ?? 'error'));
  socket.on('close', () => lines.push('closed'));
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(request);
  await expect.poll(() => lines.length).toBeGreaterThanOrEqual(2);
  socket.destroy();
  return lines.slice(0, 2);
}

describe('keep-alive timeout', () => {
  let defaults: TestServer;
  let short: TestServer;

  beforeAll(async () => {
    defaults = await startTestServer();
    short = await startTestServer({ env: { GATEHOUSE_KEEP_ALIVE_TIMEOUT: '1' } });
  });
  afterAll(async () => {
    await defaults?.close();
    await short?.close();
  });

  it('is 65 s by default, configurable, with the headers timeout above it', () => {
    expect(loadConfig({}).keepAliveTimeoutMs).toBe(65_000);
    expect(loadConfig({ GATEHOUSE_KEEP_ALIVE_TIMEOUT: '120' }).keepAliveTimeoutMs).toBe(120_000);
    expect(() => loadConfig({ GATEHOUSE_KEEP_ALIVE_TIMEOUT: '0' })).toThrow(/GATEHOUSE_KEEP_ALIVE_TIMEOUT=0: expected a whole number from 1 to 3600/);
    expect(() => loadConfig({ GATEHOUSE_KEEP_ALIVE_TIMEOUT: '5s' })).toThrow(/GATEHOUSE_KEEP_ALIVE_TIMEOUT=5s/);
    const server = defaults.server.app.server;
    expect(server.keepAliveTimeout).toBe(65_000);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    expect(server.requestTimeout).toBeGreaterThan(server.headersTimeout);
  });

  it('keeps an idle connection open past Node’s 5 s default, and closes it after a configured shorter one', async () => {
    const [kept, closed] = await Promise.all([twoRequestsOnOneSocket(defaults.url, 6_000), twoRequestsOnOneSocket(short.url, 4_000)]);
    expect(kept).toEqual(['200', '200']);
    expect(closed).toEqual(['200', 'closed']);
  }, 15_000);

  // Node closes an idle connection 1 s after the advertised keep-alive timeout (1 s here): 3 s of busy process is
  // past both.
  it('serves a request that arrived before the server got to close the idle connection, instead of resetting it', async () => {
    expect(await secondRequestAfterBusyPause(short.url, 3_000)).toEqual(['200', '200']);
  }, 15_000);
});
