/**
 * Request objects (RFC 9101) at /authorize and /oauth/par over real HTTP: openid-client@6 signs them (PS256 at
 * /authorize; ES256 through PAR with an ES256 private_key_jwt client), the hosted login finishes them and the
 * code is redeemed. Then each refusal, with jose building the objects: alg none, unsigned, HS256, another key,
 * wrong iss/aud, expired, not yet valid, too long-lived, request beside request_uri, and the client setting
 * `signed_request_object.required` (and `.credentials`, which narrows the keys).
 */
import { randomUUID } from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type GenerateKeyPairResult } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { createApp, createUser, logIn, management, TestBrowser } from '../../test-support/sign-in.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('request objects (RFC 9101)', () => {
  let server: TestServer;
  const email = 'jar@example.com';
  let rsa: GenerateKeyPairResult;
  let ec: GenerateKeyPairResult;
  let app: { client_id: string };
  let credentialIds: string[];

  const request = (extra: Record<string, unknown> = {}) => ({
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid',
    state: 'from-the-object',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    ...extra,
  });
  /** A request object as the client would sign it; `claims` and `options` bend it for each refusal. */
  async function sign(claims: Record<string, unknown> = {}, options: { key?: CryptoKey; alg?: string; lifetime?: number; nbf?: number } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ ...request(), jti: randomUUID(), ...claims })
      .setProtectedHeader({ alg: options.alg ?? 'PS256', typ: 'oauth-authz-req+jwt' })
      .setIssuer((claims.iss as string) ?? app.client_id)
      .setAudience((claims.aud as string) ?? server.issuer)
      .setIssuedAt(now)
      .setNotBefore(options.nbf ?? now)
      .setExpirationTime(now + (options.lifetime ?? 60))
      .sign(options.key ?? rsa.privateKey);
  }
  async function authorize(query: Record<string, string>): Promise<{ status: number; location: string | null; text: string }> {
    const res = await new TestBrowser().get(`${server.url}/authorize?${new URLSearchParams(query)}`);
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }
  async function refusedAtAuthorize(jwt: string, description: RegExp): Promise<void> {
    const res = await authorize({ client_id: app.client_id, request: jwt });
    expect(res.status).toBe(400);
    expect(res.location).toBeNull(); // the redirect_uri inside an unverified object is never used
    expect(res.text).toContain('invalid_request_object');
    expect(res.text).toMatch(description);
  }

  beforeAll(async () => {
    server = await startTestServer();
    await createUser(server, email, PASSWORD);
    rsa = await generateKeyPair('PS256', { extractable: true });
    ec = await generateKeyPair('ES256', { extractable: true });
    const created = await createApp(server, {
      app_type: 'regular_web',
      token_endpoint_auth_method: undefined,
      grant_types: ['authorization_code'],
      client_authentication_methods: {
        private_key_jwt: {
          credentials: [
            { credential_type: 'public_key', pem: await exportSPKI(rsa.publicKey), alg: 'PS256' },
            { credential_type: 'public_key', pem: await exportSPKI(ec.publicKey), alg: 'ES256' },
          ],
        },
      },
    });
    app = created;
    const got = (await (await management(server, 'GET', `/clients/${app.client_id}`)).json()) as {
      client_authentication_methods: { private_key_jwt: { credentials: { id: string }[] } };
    };
    credentialIds = got.client_authentication_methods.private_key_jwt.credentials.map((c) => c.id);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is announced in discovery', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ request_parameter_supported: true, request_object_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'] });
    expect(metadata.token_endpoint_auth_signing_alg_values_supported).toContain('ES256');
  });

  it('openid-client: a PS256 request object at /authorize, then the code at the token endpoint', async () => {
    const config = await oidc.discovery(new URL(server.url), app.client_id, { token_endpoint_auth_signing_alg: 'PS256' }, oidc.PrivateKeyJwt(rsa.privateKey), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithJAR(
      config,
      { redirect_uri: CALLBACK, scope: 'openid email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state },
      rsa.privateKey,
    );
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request']);
    const callback = await logIn(server, new TestBrowser(), Object.fromEntries(url.searchParams), { username: email, password: PASSWORD });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ aud: app.client_id, email });
  });

  it('openid-client: an ES256 request object pushed to /oauth/par (client authenticated with ES256 private_key_jwt)', async () => {
    const config = await oidc.discovery(new URL(server.url), app.client_id, { token_endpoint_auth_signing_alg: 'ES256' }, oidc.PrivateKeyJwt(ec.privateKey), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const jar = await oidc.buildAuthorizationUrlWithJAR(
      config,
      { redirect_uri: CALLBACK, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' },
      ec.privateKey,
    );
    const url = await oidc.buildAuthorizationUrlWithPAR(config, jar.searchParams);
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const callback = await logIn(server, new TestBrowser(), Object.fromEntries(url.searchParams), { username: email, password: PASSWORD });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({ aud: app.client_id });
  });

  it('takes its parameters from the object only', async () => {
    const res = await authorize({ client_id: app.client_id, request: await sign(), redirect_uri: 'https://evil.example/', response_type: 'token' });
    expect(res.status).toBe(302);
    expect(res.location).toMatch(/^\/u\/login\?state=/);
  });

  it('refuses alg none, unsigned, HS256 and encrypted objects', async () => {
    const none = new UnsecuredJWT({ ...request(), iss: app.client_id, aud: server.issuer }).setExpirationTime('1m').encode();
    await refusedAtAuthorize(none, /alg none/);
    const [header, payload] = (await sign()).split('.');
    await refusedAtAuthorize(`${header}.${payload}.`, /Unsigned/);
    const hs = await new SignJWT(request()).setProtectedHeader({ alg: 'HS256' }).setIssuer(app.client_id).setAudience(server.issuer).setExpirationTime('1m').sign(new TextEncoder().encode('k'.repeat(32)));
    await refusedAtAuthorize(hs, /Unsupported request object alg HS256/);
    await refusedAtAuthorize('a.b.c.d.e', /Encrypted/);
    await refusedAtAuthorize('not-a-jwt', /not a JWT/);
  });

  it('refuses another key, a wrong iss or aud, an expired, early or too long-lived object', async () => {
    const stranger = (await generateKeyPair('PS256')).privateKey;
    await refusedAtAuthorize(await sign({}, { key: stranger }), /signature could not be verified/);
    await refusedAtAuthorize(await sign({ iss: 'someone-else' }), /iss claim is invalid/);
    await refusedAtAuthorize(await sign({ aud: 'https://elsewhere.example/' }), /aud claim is invalid/);
    await refusedAtAuthorize(await sign({}, { lifetime: -120 }), /expired/);
    await refusedAtAuthorize(await sign({}, { nbf: Math.floor(Date.now() / 1000) + 600 }), /nbf claim is invalid/);
    await refusedAtAuthorize(await sign({}, { lifetime: 7200 }), /3600 seconds at most/);
    await refusedAtAuthorize(await sign({ client_id: 'other' }), /client_id claim/);
    // An EC key for a PS256 header: no registered key of that type verifies it.
    await refusedAtAuthorize(await sign({}, { key: ec.privateKey, alg: 'ES256', lifetime: 60 }).then((jwt) => jwt.replace(/^[^.]+/, Buffer.from(JSON.stringify({ alg: 'PS256' })).toString('base64url'))), /signature/);
  });

  it('refuses the same objects at /oauth/par as JSON errors', async () => {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ jti: randomUUID() }).setProtectedHeader({ alg: 'PS256' }).setIssuer(app.client_id).setSubject(app.client_id).setAudience(server.issuer).setIssuedAt(now).setExpirationTime(now + 60).sign(rsa.privateKey);
    const push = async (fields: Record<string, string>) =>
      fetch(`${server.url}/oauth/par`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion, client_id: app.client_id, ...fields }),
      });
    const res = await push({ request: new UnsecuredJWT({ ...request(), iss: app.client_id, aud: server.issuer }).setExpirationTime('1m').encode() });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request_object', error_description: 'Unsigned request objects (alg none) are not accepted' });
  });

  it('refuses request beside request_uri', async () => {
    const res = await authorize({ client_id: app.client_id, request: await sign(), request_uri: 'urn:ietf:params:oauth:request_uri:x' });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/invalid_request_uri|request and request_uri/);
  });

  it('signed_request_object.required refuses plain requests; .credentials narrows the signing keys', async () => {
    const patched = await management(server, 'PATCH', `/clients/${app.client_id}`, { signed_request_object: { required: true, credentials: [{ id: credentialIds[1]! }] } });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(((await patched.json()) as Record<string, unknown>).signed_request_object).toEqual({ required: true, credentials: [{ id: credentialIds[1] }] });
    const plain = await authorize({ client_id: app.client_id, ...request() } as Record<string, string>);
    expect(plain.status).toBe(400);
    expect(plain.text).toContain('requires a signed request object');
    // Only the EC credential may sign now.
    await refusedAtAuthorize(await sign(), /signature could not be verified/);
    const byEc = await authorize({ client_id: app.client_id, request: await sign({}, { key: ec.privateKey, alg: 'ES256' }) });
    expect(byEc.status).toBe(302);
    const refused = await management(server, 'PATCH', `/clients/${app.client_id}`, { signed_request_object: { required: 'yes' } });
    expect(refused.status).toBe(400);
  });
});
