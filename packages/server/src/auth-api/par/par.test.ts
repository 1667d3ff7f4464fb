/**
 * POST /oauth/par (RFC 9126) and request_uri at /authorize, over real HTTP on both dialects: openid-client@6
 * pushes its request (client_secret_post and private_key_jwt), the hosted login finishes it, and the code is
 * redeemed; then each refusal: unauthenticated pushes, parameters /authorize would refuse, a request_uri sent
 * to PAR, a reused, expired, forged or other client's request_uri, and `require_pushed_authorization_requests`
 * per client and per tenant (Management API).
 */
import { exportSPKI, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../../test-support/services.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser, logIn, management, TestBrowser } from '../../test-support/sign-in.js';
import { REQUEST_URI_PREFIX } from './requests.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';

describe.each(dialects)('pushed authorization requests (%s)', (dialect) => {
  let server: TestServer;
  let email: string;
  let confidential: { client_id: string; client_secret: string };

  const push = (fields: Record<string, string>) =>
    fetch(`${server.url}/oauth/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  const authorizeRequest = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid profile',
    state: 'st-1',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    ...extra,
  });
  async function pushed(fields: Record<string, string> = {}, client = confidential): Promise<string> {
    const res = await push({ client_id: client.client_id, client_secret: client.client_secret, ...authorizeRequest(), ...fields });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { request_uri: string }).request_uri;
  }
  /** /authorize in a browser with no session: the login page when the request holds, the error page otherwise. */
  async function authorize(query: Record<string, string>): Promise<{ status: number; location: string | null; text: string }> {
    const res = await new TestBrowser().get(`${server.url}/authorize?${new URLSearchParams(query)}`);
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    email = `par-${dialect}@example.com`;
    await createUser(server, email, PASSWORD);
    confidential = (await createApp(server, { app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'] })) as typeof confidential;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is announced in discovery', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ pushed_authorization_request_endpoint: `${server.url}/oauth/par`, require_pushed_authorization_requests: false });
  });

  it('openid-client pushes with client_secret_post, and the code flow completes through the hosted login', async () => {
    const config = await oidc.discovery(new URL(server.url), confidential.client_id, confidential.client_secret, oidc.ClientSecretPost(confidential.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK,
      scope: 'openid profile email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    // Only client_id and request_uri travel through the browser.
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    const callback = await logIn(server, new TestBrowser(), Object.fromEntries(url.searchParams), { username: email, password: PASSWORD });
    expect(callback.searchParams.get('state')).toBe(state);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ iss: server.issuer, aud: confidential.client_id, email });
  });

  it('openid-client pushes with private_key_jwt', async () => {
    const keys = await generateKeyPair('PS256', { extractable: true });
    const app = await createApp(server, {
      app_type: 'regular_web',
      token_endpoint_auth_method: undefined, // dropped by JSON: the two are exclusive
      grant_types: ['authorization_code'],
      client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: await exportSPKI(keys.publicKey), alg: 'PS256' }] } },
    });
    const config = await oidc.discovery(new URL(server.url), app.client_id, { token_endpoint_auth_signing_alg: 'PS256' }, oidc.PrivateKeyJwt(keys.privateKey), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await logIn(server, new TestBrowser(), Object.fromEntries(url.searchParams), { username: email, password: PASSWORD });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ aud: app.client_id });
  });

  it('answers 201 with a request_uri of at most 60 s, shorter when the client asks (par_request_expiry)', async () => {
    const res = await push({ ...confidential, ...authorizeRequest() });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { request_uri: string; expires_in: number };
    expect(body.request_uri.startsWith(REQUEST_URI_PREFIX)).toBe(true);
    expect(body.expires_in).toBe(60);

    const quick = (await createApp(server, { app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], par_request_expiry: 15 })) as typeof confidential;
    const short = await push({ ...quick, ...authorizeRequest() });
    expect(((await short.json()) as { expires_in: number }).expires_in).toBe(15);
    const long = (await createApp(server, { app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], par_request_expiry: 600 })) as typeof confidential;
    expect(((await (await push({ ...long, ...authorizeRequest() })).json()) as { expires_in: number }).expires_in).toBe(60);
  });

  it('never stores the client credentials with the request', async () => {
    await pushed();
    const rows = await server.server.prepared.store.db.selectFrom('pushed_authorization_requests').select('params').execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.params).not.toContain(confidential.client_secret);
  });

  it('authenticates the client as the token endpoint does', async () => {
    const missing = await push({ client_id: confidential.client_id, ...authorizeRequest() });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    const wrong = await push({ client_id: confidential.client_id, client_secret: 'nope', ...authorizeRequest() });
    expect(wrong.status).toBe(401);
    const basic = await fetch(`${server.url}/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${confidential.client_id}:${confidential.client_secret}`).toString('base64')}` },
      body: new URLSearchParams(authorizeRequest()),
    });
    expect(basic.status).toBe(201); // a secret either way, as at the token endpoint (RFC 6749 §2.3.1)
  });

  it('refuses what /authorize refuses, as JSON errors (RFC 6749 §4.1.2.1 codes)', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ redirect_uri: 'https://evil.example/cb' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unauthorized_client'],
      [{ response_type: 'bogus' }, 'unsupported_response_type'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ prompt: 'sometimes' }, 'invalid_request'],
      [{ response_mode: 'carrier-pigeon' }, 'invalid_request'],
      [{ request_uri: `${REQUEST_URI_PREFIX}${'a'.repeat(43)}` }, 'invalid_request'],
      [{ client_id: 'someone-else' }, 'invalid_request'],
    ];
    for (const [fields, error] of cases) {
      const res = await push({ client_id: confidential.client_id, client_secret: confidential.client_secret, ...authorizeRequest(), ...fields });
      const body = (await res.json()) as { error: string; error_description: string };
      expect({ fields, status: res.status, error: body.error }).toEqual({ fields, status: fields.client_id ? 401 : 400, error: fields.client_id ? 'invalid_client' : error });
      expect(body.error_description).toEqual(expect.any(String));
    }
  });

  it('uses a request_uri once, only for its client, only before it expires', async () => {
    const requestUri = await pushed();
    const first = await authorize({ client_id: confidential.client_id, request_uri: requestUri });
    expect(first.status).toBe(302);
    expect(first.location).toMatch(/^\/u\/login\?state=/);
    const again = await authorize({ client_id: confidential.client_id, request_uri: requestUri });
    expect(again.status).toBe(400);
    expect(again.text).toContain('invalid_request_uri');

    const other = await createApp(server, { app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'] });
    const stolen = await authorize({ client_id: other.client_id, request_uri: await pushed() });
    expect(stolen.status).toBe(400);
    expect(stolen.text).toContain('invalid_request_uri');

    const expiring = await pushed();
    await server.server.prepared.store.db.updateTable('pushed_authorization_requests').set({ expires_at: Date.now() - 1 }).execute();
    const expired = await authorize({ client_id: confidential.client_id, request_uri: expiring });
    expect(expired.status).toBe(400);
    expect(expired.text).toContain('invalid_request_uri');

    for (const forged of [`${REQUEST_URI_PREFIX}${'A'.repeat(43)}`, 'https://evil.example/request.jwt', `${REQUEST_URI_PREFIX}short`]) {
      const res = await authorize({ client_id: confidential.client_id, request_uri: forged });
      expect(res.status).toBe(400);
      expect(res.text).toContain('invalid_request_uri');
    }
    // Without client_id the request_uri is not even looked at.
    const anonymous = await authorize({ request_uri: await pushed() });
    expect(anonymous.status).toBe(400);
    expect(anonymous.text).toContain('client_id');
  });

  it('the pushed parameters win over any sent beside the request_uri', async () => {
    const requestUri = await pushed({ state: 'pushed-state' });
    const browser = new TestBrowser();
    const callback = await logIn(server, browser, { client_id: confidential.client_id, request_uri: requestUri, redirect_uri: 'https://evil.example/cb', state: 'front' }, { username: email, password: PASSWORD });
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe('pushed-state');
  });

  it('require_pushed_authorization_requests per client refuses a plain /authorize and accepts a pushed one', async () => {
    const strict = (await createApp(server, {
      app_type: 'regular_web',
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code'],
      require_pushed_authorization_requests: true,
    })) as typeof confidential;
    const plain = await authorize({ client_id: strict.client_id, ...authorizeRequest() });
    expect(plain.status).toBe(400);
    expect(plain.text).toContain('Pushed Authorization Request is required');
    expect(plain.location).toBeNull();
    const viaPar = await authorize({ client_id: strict.client_id, request_uri: await pushed({}, strict) });
    expect(viaPar.status).toBe(302);
    // Other clients are not affected.
    expect((await authorize({ client_id: confidential.client_id, ...authorizeRequest() })).status).toBe(302);
  });

  it('require_pushed_authorization_requests per tenant (Management API), shown in discovery', async () => {
    const patched = await management(server, 'PATCH', '/tenants/settings', { require_pushed_authorization_requests: true });
    expect(patched.status).toBe(200);
    try {
      const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(metadata.require_pushed_authorization_requests).toBe(true);
      const plain = await authorize({ client_id: confidential.client_id, ...authorizeRequest() });
      expect(plain.status).toBe(400);
      expect(plain.text).toContain('Pushed Authorization Request is required');
      expect((await authorize({ client_id: confidential.client_id, request_uri: await pushed() })).status).toBe(302);
    } finally {
      expect((await management(server, 'PATCH', '/tenants/settings', { require_pushed_authorization_requests: false })).status).toBe(200);
    }
  });
});
