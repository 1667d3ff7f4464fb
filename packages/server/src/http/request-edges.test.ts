/**
 * HTTP itself at the edges, written byte for byte over a real socket (issue #19, "Request edge cases"): what
 * Node's parser refuses before Fastify sees a request (an oversized header, a method it does not know, a
 * malformed request line), CONNECT, methods no route has, repeated headers that decide who the request is for,
 * and JWTs without `exp`. Every answer is JSON in the family of its path, never Node's or Fastify's own shape.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rsaSha256 } from '../crypto/jwt.js';
import { managementToken, startTestServer, type TestServer } from '../test-support/server.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** As a chunk: the client closes its side (half-close) there. */
const END = '\u0000END';

/** Writes `chunks` to the server (each as its own write, a tick apart) and reads the first answer. */
function raw(server: TestServer, ...chunks: string[]): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.server.listenUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length']);
      const body = rest.join('\r\n\r\n');
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: Number.isInteger(length) ? Buffer.from(body).subarray(0, length).toString() : body });
    });
    void (async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        if (chunk === END) socket.end();
        else socket.write(chunk);
      }
    })();
  });
}

const OAUTH = { error: expect.any(String), error_description: expect.any(String) };
const MANAGEMENT = (statusCode: number, errorCode: string) => ({ statusCode, error: expect.any(String), message: expect.any(String), errorCode });

describe('HTTP edge cases', () => {
  let server: TestServer;
  let host: string;
  beforeAll(async () => {
    server = await startTestServer();
    host = new URL(server.url).host;
  });
  afterAll(async () => {
    await server?.close();
  });

  const request = (method: string, path: string, headers: string[] = [], body = '') =>
    [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...headers, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', body].join('\r\n');

  describe('an oversized header is a 431 in the family of its path', () => {
    const large = `X-Large: ${'a'.repeat(40 * 1024)}`;
    it('on the Management API', async () => {
      const answer = await raw(server, request('GET', '/api/v2/roles', [large]));
      expect(answer.status).toBe(431);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toStrictEqual(MANAGEMENT(431, 'request_header_fields_too_large'));
    });
    it('on an OAuth endpoint', async () => {
      const answer = await raw(server, request('GET', '/userinfo', [large]));
      expect(answer.status).toBe(431);
      expect(JSON.parse(answer.body)).toStrictEqual({ error: 'request_header_fields_too_large', error_description: expect.stringMatching(/header/i) });
    });
    it('after another request on the same connection, when its own request line is too long to read', async () => {
      const { hostname, port } = new URL(server.server.listenUrl);
      const text = await new Promise<string>((resolve, reject) => {
        const socket = net.connect({ host: hostname, port: Number(port) });
        const received: Buffer[] = [];
        let sent = false;
        socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
        socket.on('error', reject);
        socket.on('data', (chunk) => {
          received.push(chunk);
          // Once the Management API has answered the first request, the second: a 20 KiB query string.
          if (!sent && Buffer.concat(received).includes('\r\n\r\n{')) {
            sent = true;
            socket.write(`GET /oidc/logout?id_token_hint=${'a'.repeat(20 * 1024)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
          }
        });
        socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
        socket.write(`GET /api/v2/roles HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      });
      const second = text.slice(text.indexOf('HTTP/1.1', 1));
      expect(second.split(' ')[1]).toBe('431');
      expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toStrictEqual({ error: 'request_header_fields_too_large', error_description: expect.stringMatching(/header/i) });
    });
    it('when the headers arrive in several packets after the request line', async () => {
      const answer = await raw(server, `GET /api/v2/users HTTP/1.1\r\nHost: ${host}\r\n`, `X-One: ${'b'.repeat(10_000)}\r\n`, `X-Two: ${'c'.repeat(10_000)}\r\n\r\n`);
      expect(answer.status).toBe(431);
      expect(JSON.parse(answer.body)).toStrictEqual(MANAGEMENT(431, 'request_header_fields_too_large'));
    });
  });

  it("a request Node's parser refuses is a 400 in the family's shape, not Node's", async () => {
    const answer = await raw(server, `GET /api/v2/roles HTTP/1.1\r\nHost: ${host}\r\nBad Header Name: x\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toStrictEqual(MANAGEMENT(400, 'invalid_headers'));
    const oauth = await raw(server, `GET /oauth/token HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`);
    expect(oauth.status).toBe(400);
    expect(JSON.parse(oauth.body)).toStrictEqual(OAUTH);
    // A body cut short by the end of the connection fails with no packet at all: the path is still known.
    const token = await managementToken(server, ['update:roles']);
    const cut = await raw(server, `PATCH /api/v2/roles/x HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{}`, END);
    expect(cut.status).toBe(400);
    expect(JSON.parse(cut.body)).toStrictEqual(MANAGEMENT(400, 'invalid_headers'));
    const garbage = await raw(server, '\u0001\u0002 nonsense\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toStrictEqual(OAUTH);
  });

  describe('methods no route has are a 405 with Allow (404 where the path has no route at all)', () => {
    it.each(['QUERY', 'PROPFIND', 'FOO', 'get', 'TRACE'])('%s', async (method) => {
      const answer = await raw(server, request(method, '/oauth/token'));
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
      expect(JSON.parse(answer.body)).toStrictEqual({ error: 'method_not_allowed', error_description: expect.stringContaining('POST') });
      const management = await raw(server, request(method, '/api/v2/roles'));
      expect(management.status).toBe(405);
      expect(management.headers.allow).toBe('GET, HEAD, POST');
      expect(JSON.parse(management.body)).toStrictEqual(MANAGEMENT(405, 'method_not_allowed'));
      const nowhere = await raw(server, request(method, '/api/v2/no-such-thing'));
      expect(nowhere.status).toBe(404);
      expect(JSON.parse(nowhere.body)).toStrictEqual(MANAGEMENT(404, 'not_found'));
    });

    it('CONNECT gets an answer, not a closed connection (this server is no proxy)', async () => {
      const answer = await raw(server, request('CONNECT', '/oauth/token'));
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
      expect(JSON.parse(answer.body)).toStrictEqual({ error: 'method_not_allowed', error_description: expect.any(String) });
      const authority = await raw(server, `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`);
      expect(authority.status).toBe(400);
      expect(JSON.parse(authority.body)).toStrictEqual({ error: 'invalid_request', error_description: expect.stringMatching(/not a proxy/) });
    });
  });

  it('a client that closes its side once the request is sent still gets the answer', async () => {
    const token = await managementToken(server, ['read:roles']);
    // Verifying the token takes a moment, so the close arrives before the answer is ready.
    const answer = await raw(server, request('GET', '/api/v2/roles', [`Authorization: Bearer ${token}`]), END);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual(expect.any(Array));
  });

  describe('headers that decide who a request is for or who sends it may not be repeated', () => {
    it.each([
      ['Host', 'other-tenant.invalid'],
      ['Host', ''],
      ['Authorization', 'Bearer x'],
      ['Content-Type', 'text/plain'],
      ['DPoP', 'x.y.z'],
    ])('two %s headers are a 400', async (name, value) => {
      // request() sends one Host of its own.
      const twice = name === 'Host' ? [`Host: ${value || host}`] : [`${name}: ${value}`, `${name}: ${value}`];
      const answer = await raw(server, request('GET', '/.well-known/openid-configuration', twice));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toStrictEqual({ error: 'invalid_request', error_description: expect.stringContaining(name) });
      const management = await raw(server, request('GET', '/api/v2/roles', twice));
      expect(management.status).toBe(400);
      expect(JSON.parse(management.body)).toStrictEqual(MANAGEMENT(400, 'invalid_headers'));
    });

    it('one of each is served', async () => {
      const answer = await raw(server, request('GET', '/.well-known/openid-configuration', ['Accept: application/json']));
      expect(answer.status).toBe(200);
    });
  });

  describe('a JWT without exp is refused, even signed with our key', () => {
    async function signWithoutExp(claims: Record<string, unknown>): Promise<string> {
      const { tenant } = server.server.prepared.bootstrap!;
      const key = await server.server.prepared.keyRing.signingKey(tenant.id);
      const input = key.accessTokenHeader + Buffer.from(JSON.stringify(claims)).toString('base64url');
      return `${input}.${(await rsaSha256(input, key.privateKey)).toString('base64url')}`;
    }

    it('on the Management API and /userinfo', async () => {
      const { tenant, managementAudience } = server.server.prepared.bootstrap!;
      const now = Math.floor(Date.now() / 1000);
      const base = { iss: tenant.issuer, sub: `${server.admin.client_id}@clients`, azp: server.admin.client_id, iat: now, scope: 'read:roles openid' };
      const management = await signWithoutExp({ ...base, aud: managementAudience });
      // The same token with exp is accepted: only the missing claim is refused.
      const valid = await managementToken(server, ['read:roles']);
      expect((await fetch(`${server.url}/api/v2/roles`, { headers: { authorization: `Bearer ${valid}` } })).status).toBe(200);
      const refused = await fetch(`${server.url}/api/v2/roles`, { headers: { authorization: `Bearer ${management}` } });
      expect(refused.status).toBe(401);
      const userinfo = await signWithoutExp({ ...base, sub: 'auth0|nobody', aud: [`${server.url}/userinfo`] });
      const answer = await fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${userinfo}` } });
      expect(answer.status).toBe(401);
    });

    it('as an id_token_hint at logout', async () => {
      const { tenant } = server.server.prepared.bootstrap!;
      const hint = await signWithoutExp({ iss: tenant.issuer, sub: 'auth0|nobody', aud: server.admin.client_id, iat: Math.floor(Date.now() / 1000) });
      const answer = await fetch(`${server.url}/oidc/logout?id_token_hint=${hint}`, { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(answer.status).toBe(400);
    });
  });
});
