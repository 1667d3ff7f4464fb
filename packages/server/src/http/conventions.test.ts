/**
 * HTTP conventions over real HTTP: error shapes per family, body limits, content types, 404/405, unknown
 * hosts, CORS, security headers, request ids and rate limits. Probe routes in each family's path space stand in
 * for the POST endpoints later issues add; they use the same parsers, validators and error handler.
 */
import { Type } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../store/tenants.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import type { App } from '../services.js';

const Probe = Type.Object({ name: Type.String({ minLength: 1 }), count: Type.Optional(Type.Integer()) }, { additionalProperties: false });

const ALLOWED_ORIGIN = 'https://app.example';

function addProbeRoutes(app: App): void {
  for (const url of ['/api/v2/_probe', '/dbconnections/_probe', '/oauth/_probe']) {
    app.post(url, { schema: { body: Probe, hide: true } }, async (request) => ({ received: request.body }));
  }
  // As an endpoint for browsers configures it: only origins a client allows, with credentials.
  app.post('/co/_probe', {
    schema: { body: Probe, hide: true },
    config: { cors: { kind: 'origins', credentials: true, isAllowed: (_request, origin) => origin === ALLOWED_ORIGIN } },
    handler: async () => ({ ok: true }),
  });
}

describe('HTTP conventions', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ configure: addProbeRoutes });
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (path: string, body: string | Buffer, contentType: string | undefined, host?: string) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      body,
      headers: { ...(contentType && { 'content-type': contentType }), ...(host && { host }) },
    });

  it('accepts JSON and form bodies on the same route', async () => {
    const json = await post('/oauth/_probe', JSON.stringify({ name: 'a', count: 2 }), 'application/json');
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ received: { name: 'a', count: 2 } });
    const form = await post('/oauth/_probe', 'name=b', 'application/x-www-form-urlencoded');
    expect(await form.json()).toEqual({ received: { name: 'b' } });
  });

  describe.each([
    ['/api/v2/_probe', 'management'],
    ['/dbconnections/_probe', 'dbconnections'],
    ['/oauth/_probe', 'oauth'],
  ] as const)('errors on %s have the %s shape', (path, family) => {
    const shapes = {
      management: (status: number, code: string) => ({ statusCode: status, error: expect.any(String), message: expect.any(String), errorCode: code }),
      dbconnections: (status: number, code: string) => ({ name: expect.stringMatching(/Error$/), code, description: expect.any(String), statusCode: status }),
      oauth: (_status: number, code: string) => ({ error: code, error_description: expect.any(String) }),
    };
    const expectShape = async (res: Response, status: number, code: string, managementCode = code) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toStrictEqual(shapes[family](status, family === 'management' ? managementCode : code));
      expect(JSON.stringify(body)).not.toMatch(/at .*\.(js|ts):\d+/); // no stack traces
      return body;
    };

    it('malformed JSON is a 400', async () => {
      await expectShape(await post(path, '{"name": ', 'application/json'), 400, 'invalid_request', 'invalid_body');
    });
    it('an empty body labelled JSON is no body: a route that needs one says so, prototype keys stay refused', async () => {
      const body = await expectShape(await post(path, '', 'application/json'), 400, 'invalid_request', 'invalid_body');
      expect(JSON.stringify(body)).toMatch(/object/i);
      await expectShape(await post(path, '{"__proto__":{"name":"x"}}', 'application/json'), 400, 'invalid_request', 'invalid_body');
    });
    it('a body that breaks the schema is a 400 naming the problem', async () => {
      const body = await expectShape(await post(path, JSON.stringify({ name: 'x', extra: 1 }), 'application/json'), 400, 'invalid_request', 'invalid_body');
      expect(JSON.stringify(body)).toMatch(/additional properties/i);
    });
    it('a repeated form parameter is a 400', async () => {
      await expectShape(await post(path, 'name=a&name=b', 'application/x-www-form-urlencoded'), 400, 'invalid_request', 'invalid_body');
    });
    it('an unsupported content type is a 415', async () => {
      await expectShape(await post(path, 'name=a', 'text/plain'), 415, 'unsupported_media_type');
      await expectShape(await post(path, '<a/>', 'application/xml'), 415, 'unsupported_media_type');
    });
    it('a body over 1 MB is a 413', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
      await expectShape(await post(path, big, 'application/json'), 413, 'payload_too_large');
    });
    it('an unknown path is a 404 and a wrong method a 405 with Allow', async () => {
      const prefix = path.slice(0, path.lastIndexOf('/'));
      await expectShape(await fetch(`${server.url}${prefix}/nothing-here`), 404, 'not_found');
      const res = await fetch(`${server.url}${path}`, { method: 'DELETE' });
      expect(res.headers.get('allow')).toBe('POST');
      await expectShape(res, 405, 'method_not_allowed');
    });
  });

  it('routes long path parameters (user ids up to 255 characters plus a prefix) instead of failing', async () => {
    const { managementToken } = await import('../test-support/server.js');
    const id = encodeURIComponent(`auth0|${'x'.repeat(255)}`);
    const res = await fetch(`${server.url}/api/v2/users/${id}`, { headers: { authorization: `Bearer ${await managementToken(server)}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { errorCode: string }).errorCode).toBe('inexistent_user');
    const tooLong = await fetch(`${server.url}/api/v2/users/${'y'.repeat(1200)}`, { headers: { authorization: `Bearer ${await managementToken(server)}` } });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'A path parameter is too long', errorCode: 'invalid_uri' });
    const malformed = await fetch(`${server.url}/api/v2/users/%E0%A4%A`);
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { errorCode: string }).errorCode).toBe('invalid_uri');
  });

  it('an unknown Host gets a JSON 404 and no tenant data', async () => {
    const { request } = await import('node:http');
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.server.listenUrl}/.well-known/jwks.json`, { headers: { host: 'other-tenant.example' } }, (r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ error: 'unknown_tenant', error_description: 'No tenant is served at host other-tenant.example' });
    expect(res.body).not.toContain('"keys"');
  });

  it('sets security headers and a request id (kept when the caller sent a sane one)', async () => {
    const res = await fetch(`${server.url}/.well-known/openid-configuration`, { headers: { 'x-request-id': 'trace-123' } });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const odd = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers CORS preflights for public routes and adds no CORS headers elsewhere', async () => {
    const preflight = await fetch(`${server.url}/.well-known/jwks.json`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    const health = await fetch(`${server.url}/healthz`, { headers: { origin: 'https://app.example' } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
    const missing = await fetch(`${server.url}/nope`, { method: 'OPTIONS', headers: { origin: 'https://app.example' } });
    expect(missing.status).toBe(404);
  });

  it('echoes only allowed origins, with credentials, on requests, errors and preflights', async () => {
    const call = (origin: string, body = '{"name":"x"}') =>
      fetch(`${server.url}/co/_probe`, { method: 'POST', body, headers: { origin, 'content-type': 'application/json' } });
    const allowed = await call(ALLOWED_ORIGIN);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('vary')).toMatch(/Origin/);
    const failing = await call(ALLOWED_ORIGIN, '{');
    expect(failing.status).toBe(400);
    expect(failing.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN); // the browser can read the error
    const other = await call('https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-credentials')).toBeNull();

    const preflight = (origin: string) =>
      fetch(`${server.url}/co/_probe`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const ok = await preflight(ALLOWED_ORIGIN);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ok.headers.get('access-control-allow-methods')).toBe('POST');
    expect(ok.headers.get('access-control-allow-headers')).toMatch(/Content-Type/i);
    const refused = await preflight('https://evil.example');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('rate-limits per tenant settings: headers on every response, then a 429 in the family shape', async () => {
    const { tenant } = server.server.prepared.bootstrap!;
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, rate_limits: { discovery: { capacity: 3, per_second: 0.01 } } },
    });
    server.server.services.tenants.invalidate(); // as the Management API will after changing settings
    const url = `${server.url}/.well-known/openid-configuration`;
    const responses = [];
    for (let i = 0; i < 4; i++) responses.push(await fetch(url));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    for (const res of responses) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    }
    expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    const limited = responses[3]!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('access-control-allow-origin')).toBe('*'); // a browser can read the 429
    const body = (await limited.json()) as { error: string; error_description: string };
    expect(body.error).toBe('too_many_requests');
    expect(body.error_description).toMatch(/X-RateLimit-Limit.*X-RateLimit-Remaining.*X-RateLimit-Reset/);
    // Other buckets are not affected.
    expect((await fetch(`${server.url}/.well-known/jwks.json`)).status).toBe(200);
  });
});
