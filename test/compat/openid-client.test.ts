/**
 * The unmodified openid-client@6 against the real server: discovery, authorization code + PKCE with the hosted
 * login form submitted over HTTP (as a browser would: cookies carried, redirects followed by hand), ID token
 * validation, userinfo, refresh with rotation, the family killed by a replayed refresh token, and revocation.
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createUser, PASSWORD, REDIRECT_URI } from '../../packages/server/src/auth-api/user-tokens/testing.js';
import type { User } from '../../packages/server/src/store/users.js';
import { startTestServer, type TestServer } from '../../packages/server/src/test-support/server.js';

/** A minimal cookie jar: name → value, from Set-Cookie headers (attributes ignored; one host only). */
class CookieJar {
  readonly #cookies = new Map<string, string>();

  store(res: Response): void {
    for (const header of res.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      if (eq > 0) this.#cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The single POST form of a page: its action and hidden inputs, read generically. */
function parseForm(html: string, base: string): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/gi)];
  expect(forms).toHaveLength(1);
  const form = forms[0]!;
  const action = /action="([^"]*)"/i.exec(form[0])?.[1] ?? '';
  const fields: Record<string, string> = {};
  for (const input of form[1]!.matchAll(/<input\b[^>]*>/gi)) {
    const tag = input[0];
    if (!/type="hidden"/i.test(tag)) continue;
    const name = /name="([^"]*)"/i.exec(tag)?.[1];
    if (name) fields[decodeEntities(name)] = decodeEntities(/value="([^"]*)"/i.exec(tag)?.[1] ?? '');
  }
  return { action: new URL(decodeEntities(action), base).href, fields };
}

/**
 * Drives the browser side of /authorize: follows redirects, fills the login form when one is shown, and returns
 * the URL the server finally sends to the redirect URI.
 */
async function signIn(authorizationUrl: URL, jar: CookieJar, user: User): Promise<{ callback: URL; formsSubmitted: number }> {
  let next: { url: string; init: RequestInit } = { url: authorizationUrl.href, init: { method: 'GET' } };
  let formsSubmitted = 0;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next.url, { ...next.init, redirect: 'manual', headers: { ...(next.init.headers as Record<string, string>), cookie: jar.header() } });
    jar.store(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const target = new URL(location, next.url);
      if (target.href.startsWith(REDIRECT_URI)) return { callback: target, formsSubmitted };
      next = { url: target.href, init: { method: 'GET' } };
      continue;
    }
    expect(res.status, `unexpected answer from ${next.url}`).toBe(200);
    const form = parseForm(await res.text(), next.url);
    formsSubmitted++;
    next = {
      url: form.action,
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(next.url).origin },
        body: new URLSearchParams({ ...form.fields, username: user.email!, password: PASSWORD }).toString(),
      },
    };
  }
  throw new Error('too many redirects');
}

describe('openid-client@6', () => {
  let server: TestServer;
  let config: client.Configuration;
  let user: User;
  const jar = new CookieJar();

  let formsSubmitted = 0;

  async function authorizationCodeFlow(): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile email offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const signedIn = await signIn(url, jar, user);
    formsSubmitted += signedIn.formsSubmitted;
    const callback = signedIn.callback;
    // RFC 9207: the authorization response names the issuer.
    expect(callback.searchParams.get('iss')).toBe(server.issuer);
    return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  }

  beforeAll(async () => {
    server = await startTestServer();
    user = await createUser(server);
    const app = await createClient(server, { refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 0 } });
    config = await client.discovery(new URL(server.url), app.client.client_id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('discovers the server', () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(server.issuer);
    expect(metadata).toMatchObject({
      userinfo_endpoint: `${server.url}/userinfo`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      token_endpoint: `${server.url}/oauth/token`,
    });
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
  });

  it('completes authorization code + PKCE through the hosted login form, then reads userinfo', async () => {
    const tokens = await authorizationCodeFlow();
    expect(formsSubmitted).toBe(1); // the login form; later flows ride on the SSO session
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: server.issuer, sub: user.user_id, email: user.email, name: 'Ada Lovelace' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: user.user_id, email: user.email, email_verified: true, given_name: 'Ada' });
  });

  it('refreshes with rotation, and a replayed refresh token kills the family', async () => {
    const first = await authorizationCodeFlow();
    const second = await client.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.claims()).toMatchObject({ sub: user.user_id });

    await expect(client.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(config, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes a refresh token', async () => {
    const tokens = await authorizationCodeFlow();
    await client.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
