/**
 * No credential reaches the log (issue #19, item 5). The server logs at `trace` into a sink while every
 * sign-in flow runs (the hosted pages, every grant, embedded login, passwordless, logout with id_token_hint,
 * password reset and email verification links, a signed export link, the Management API); every credential
 * those requests sent or their answers carried is then looked for in the log, in every encoding a URL or a JSON
 * line could give it.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSecretParameter } from './logging.js';
import { createFixtures, PASSWORD, runAuthenticationFlows, startRefusingReceiver } from './test-support/operation-examples.js';
import { startTestServer, type TestServer } from './test-support/server.js';

/** Response fields that are credentials. */
const SECRET_FIELDS = /^(access_token|id_token|refresh_token|client_secret|login_ticket|co_verifier|code|ticket|signature|password)$/;
/** Request and response headers that carry credentials. */
const SECRET_HEADERS = ['authorization', 'cookie', 'dpop', 'proxy-authorization'];

describe('credentials in the log', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startRefusingReceiver>>;
  const log: string[] = [];
  const credentials = new Map<string, string>();
  const original = globalThis.fetch;

  const keep = (where: string, value: string | null | undefined) => {
    // Short values are placeholders ("x", "nope"), not credentials, and would match ordinary words.
    if (value && value.length >= 12 && value !== '[REDACTED]') credentials.set(value, where);
  };

  function collectParams(where: string, params: URLSearchParams): void {
    for (const [name, value] of params) if (isSecretParameter(name) || name === 'password') keep(`${where} ${name}`, value);
  }

  /** Fields named as credentials in a request body (any credential-like name) or an answer (SECRET_FIELDS). */
  function collectJson(where: string, value: unknown, isSecret: (name: string) => boolean): void {
    if (!value || typeof value !== 'object') return;
    // An error's `code` is a word such as invalid_request, not a credential.
    const error = 'error' in value || 'statusCode' in value;
    for (const [name, field] of Object.entries(value)) {
      if (typeof field === 'string' && isSecret(name) && !error) keep(`${where} ${name}`, field);
      else collectJson(where, field, isSecret);
    }
  }

  beforeAll(async () => {
    receiver = await startRefusingReceiver();
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (log.push(chunk.toString()), done()) });
    server = await startTestServer({ env: { GATEHOUSE_LOG_LEVEL: 'trace' }, logStream: sink });
    // Every request the flows make goes through fetch: what it sends and what comes back is collected.
    globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const where = `${init?.method ?? 'GET'} ${url.pathname}`;
      collectParams(`${where} query`, url.searchParams);
      const headers = new Headers(init?.headers);
      for (const name of SECRET_HEADERS) {
        const value = headers.get(name);
        keep(`${where} ${name}`, value);
        // The token alone, and each cookie's value alone, as well as the whole header.
        keep(`${where} ${name} credential`, value?.replace(/^(Bearer|Basic|DPoP) /i, ''));
        if (name === 'cookie') for (const pair of (value ?? '').split(';')) keep(`${where} a cookie`, pair.split('=').slice(1).join('='));
      }
      if (typeof init?.body === 'string') {
        if (init.body.startsWith('{')) collectJson(`${where} body`, JSON.parse(init.body), (name) => isSecretParameter(name) || name === 'password');
        else collectParams(`${where} body`, new URLSearchParams(init.body));
      }
      const response = await original(input, init);
      const location = response.headers.get('location');
      if (location) {
        const target = new URL(location, url);
        collectParams(`${where} redirect`, target.searchParams);
        collectParams(`${where} redirect fragment`, new URLSearchParams(target.hash.slice(1)));
      }
      for (const cookie of response.headers.getSetCookie()) keep(`${where} set-cookie`, cookie.split(';')[0]!.split('=').slice(1).join('='));
      const text = await response.clone().text();
      if ((response.headers.get('content-type') ?? '').includes('json')) {
        try {
          collectJson(`${where} answer`, JSON.parse(text), (name) => SECRET_FIELDS.test(name));
        } catch {
          // not JSON after all
        }
      }
      // Hidden fields of hosted pages (form_post responses carry codes and tokens).
      for (const match of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
        if (isSecretParameter(match[1]!)) keep(`${where} page field ${match[1]}`, match[2]!);
      }
      return response;
    };
  }, 120_000);

  afterAll(async () => {
    globalThis.fetch = original;
    await server?.close();
    await receiver?.close();
  });

  it('holds none of the credentials every flow used', async () => {
    const f = await createFixtures(server, receiver.url);
    await runAuthenticationFlows(f);
    // Logout with a real id_token_hint (both endpoints), a DPoP header and a request object: credentials that
    // travel in the URL or in headers of their own.
    const realm = { grant_type: 'http://auth0.com/oauth/grant-type/password-realm', client_id: f.app.client_id, realm: 'Username-Password-Authentication', scope: 'openid', username: f.user.email, password: PASSWORD };
    const tokens = (await (await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(realm) })).json()) as { id_token: string; access_token: string };
    expect(tokens.id_token).toMatch(/^ey/);
    for (const path of ['/oidc/logout', '/v2/logout']) {
      const res = await fetch(`${server.url}${path}?id_token_hint=${tokens.id_token}&post_logout_redirect_uri=${encodeURIComponent('https://app.example/')}`, { redirect: 'manual' });
      expect(res.status).toBeLessThan(500);
    }
    await fetch(`${server.url}/userinfo`, { headers: { authorization: `DPoP ${tokens.access_token}`, dpop: `${tokens.id_token}.dpop-proof` } });
    await fetch(`${server.url}/authorize?client_id=${f.app.client_id}&request=${tokens.id_token}.request-object`, { redirect: 'manual' });

    const text = log.join('');
    expect(text).toContain('"reqId"'); // the log was written, request by request
    expect(credentials.size).toBeGreaterThan(30);
    const found = [...credentials]
      .filter(([value]) => [value, encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2), JSON.stringify(value).slice(1, -1)].some((form) => text.includes(form)))
      .map(([value, where]) => `${where}: ${value.slice(0, 16)}…`);
    expect(found).toEqual([]);
  });
});
