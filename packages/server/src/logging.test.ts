/** Secrets never reach the log: redacted fields, and redacted query values in request URLs. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyChildLoggerFactory, loggerOptions, redactUrl } from './logging.js';
import { startTestServer, type TestServer } from './test-support/server.js';

describe('log redaction', () => {
  it('replaces the values of secret query parameters and keeps the rest', () => {
    expect(redactUrl('/authorize?client_id=abc&code=xyz&state=s')).toBe('/authorize?client_id=abc&code=%5BREDACTED%5D&state=s');
    expect(redactUrl('/callback?login_ticket=t&Token=u')).not.toMatch(/=t(&|$)|=u(&|$)/);
    expect(redactUrl('/plain/path')).toBe('/plain/path');
  });

  it('redacts secret fields in logged objects, one and two levels deep', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    const logger = pino(loggerOptions('info', false), sink);
    logger.info({ body: { password: 'hunter2', client_secret: 'cs', username: 'ann' }, token: 'tkn' }, 'login');
    logger.info({ req: { headers: { authorization: 'Bearer abc', cookie: 'sid=1' } } }, 'headers');
    const text = lines.join('');
    for (const secret of ['hunter2', '"cs"', 'tkn', 'Bearer abc', 'sid=1']) expect(text).not.toContain(secret);
    expect(text).toContain('ann');
    expect(text).toContain('[REDACTED]');
  });
});

describe('request loggers made on first write', () => {
  it('writes what the level lets through with the request bindings, and nothing below it', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    const parent = pino(loggerOptions('warn', false), sink);
    const log = lazyChildLoggerFactory(parent, { reqId: 'r-1' }, {});
    expect(log.level).toBe('warn');
    expect(log.isLevelEnabled('info')).toBe(false);
    log.info({ token: 'tkn' }, 'below the level');
    log.debug('below the level');
    expect(lines).toHaveLength(0);
    log.warn({ password: 'hunter2' }, 'a warning');
    log.child({ stream: 's-1' }).error('from a child');
    expect(lines).toHaveLength(2);
    const [warning, error] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warning).toMatchObject({ reqId: 'r-1', msg: 'a warning', password: '[REDACTED]' });
    expect(error).toMatchObject({ reqId: 'r-1', stream: 's-1', msg: 'from a child' });
    // A route's own level (Fastify's logLevel) applies to its requests.
    const verbose = lazyChildLoggerFactory(parent, { reqId: 'r-2' }, { level: 'info' });
    verbose.info('let through');
    expect(JSON.parse(lines[2]!)).toMatchObject({ reqId: 'r-2', msg: 'let through' });
  });
});

describe('request logs of a running server', () => {
  let server: TestServer;
  const lines: string[] = [];
  beforeAll(async () => {
    server = await startTestServer({ env: { GATEHOUSE_LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('carries request ids and no secret query values', async () => {
    const { buildApp } = await import('./app.js');
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    // A second app over the same services, logging into a sink, so the lines can be read back.
    const app = await buildApp(server.server.services, { logger: { ...loggerOptions('info', false), stream: sink } as never });
    const res = await app.inject({ method: 'GET', url: '/healthz?code=SECRETCODE', headers: { 'x-request-id': 'req-42' } });
    expect(res.statusCode).toBe(200);
    await app.close();
    const text = lines.join('');
    expect(text).toContain('"reqId":"req-42"');
    expect(text).not.toContain('SECRETCODE');
  });
});
