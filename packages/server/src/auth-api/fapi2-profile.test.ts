/**
 * The FAPI 2.0 Security Profile (final), authorization-server requirements, per client `compliance_level`
 * (auth-api/fapi-profile.ts), over real HTTP. Each row below is one `it`: the violation is refused with the
 * OAuth error the row names, and, where it can be, the same request with only that one thing put right is
 * accepted (so the refusal is for that reason and no other). Clause numbers are the list items of
 * FAPI 2.0 SP §5.3.2.1 (general) and §5.3.2.2 (authorization code flow), as the OpenID conformance suite cites
 * them (FAPI2-SP-FINAL-x-n).
 *
 * | clause      | requirement (authorization server)                                   | violation sent                              | refused with                       |
 * |-------------|----------------------------------------------------------------------|---------------------------------------------|------------------------------------|
 * | 5.3.2.1-2   | shall reject the resource owner password credentials grant           | grant_type=password                         | 403 unauthorized_client            |
 * | 5.3.2.1-3   | shall only support confidential clients                              | a FAPI client registered as public (none)   | 401 invalid_client                 |
 * | 5.3.2.1-6   | shall authenticate clients with mTLS or private_key_jwt              | client_secret_post                          | 401 invalid_client                 |
 * | 5.3.2.1-8   | shall only accept its issuer, as a string, as a client assertion aud | aud = token endpoint URL; aud = [issuer]    | 401 invalid_client                 |
 * | 5.3.2.1-4   | shall only issue sender-constrained access tokens (DPoP level)       | token request without a DPoP proof          | 400 invalid_request                |
 * | 5.3.2.1-4   | shall only issue sender-constrained access tokens (mTLS level)       | token request without a client certificate  | 400 invalid_request                |
 * | 5.3.2.1-9   | no refresh token rotation needed: refresh sender-constrained by the  | refresh without a DPoP proof; without       | 400 invalid_request; 401           |
 * |             | client's authentication (RFC 9449 §5) and the level's binding        | client authentication                       | invalid_client                     |
 * | 5.3.2.1-10  | shall support the DPoP server-provided nonce                         | DPoP proof without nonce                    | 400 use_dpop_nonce + DPoP-Nonce    |
 * | 5.3.2.1-11  | authorization codes live at most 60 s                                | (stored expiry checked)                     | —                                  |
 * | 5.3.2.1-12  | DPoP-bound authorization codes (dpop_jkt at PAR)                     | code redeemed with another DPoP key         | 400 invalid_grant                  |
 * | 5.3.2.2-1   | response_type shall be code (no implicit, no hybrid)                 | response_type=token / code id_token at PAR  | 400 unsupported_response_type      |
 * | 5.3.2.2-3   | shall reject authorization requests sent without PAR                 | the parameters straight to /authorize       | 400 error page, no redirect        |
 * | 5.3.2.2-4   | shall reject pushed authorization requests without client auth      | PAR with client_id only                     | 401 invalid_client                 |
 * | 5.3.2.2-5   | shall require PKCE with S256                                         | no code_challenge; method plain             | 400 invalid_request                |
 * | 5.3.2.2-6   | shall require redirect_uri in pushed authorization requests          | PAR without redirect_uri                    | 400 invalid_request                |
 * | 5.3.2.2-7   | shall return iss in the authorization response (RFC 9207)            | (iss checked on the callback)               | —                                  |
 * | 5.3.2.2-9   | shall reject a previously used authorization code                    | the code redeemed twice                     | 400 invalid_grant                  |
 * | 5.3.2.2-12  | request_uri expires_in under 600 s (ours ≤ 60 s), single use         | the request_uri used twice                  | 400 invalid_request_uri page       |
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { decodeJwt, exportJWK, exportSPKI, generateKeyPair, SignJWT, type GenerateKeyPairResult } from 'jose';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../store/tenants.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, createUser, logIn, management, TestBrowser } from '../test-support/sign-in.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';
const API_KEY = 'edge-api-key-fapi2-profile-0123456789';
type Json = Record<string, unknown>;

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('FAPI 2.0 Security Profile: authorization server requirements (compliance_level) (%s)', (dialect) => {
  let server: TestServer;
  let keys: GenerateKeyPairResult;
  let dpopKeys: GenerateKeyPairResult;
  let otherDpopKeys: GenerateKeyPairResult;
  let certificate: string;
  let managementAudience: string;
  /** fapi2_sp_pkj_dpop, private_key_jwt */
  let dpopClient: { client_id: string };
  /** fapi2_sp_pkj_mtls, private_key_jwt */
  let mtlsClient: { client_id: string };
  const email = 'fapi2@example.com';

  const edge = (pem: string): Record<string, string> => ({ 'cname-api-key': API_KEY, 'client-certificate': encodeURIComponent(pem), 'client-certificate-ca-verified': 'SUCCESS' });

  async function assertion(clientId: string, aud: string | string[] = server.issuer): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(aud)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(keys.privateKey);
  }
  async function authenticated(clientId: string, aud?: string | string[]): Promise<Record<string, string>> {
    return { client_id: clientId, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await assertion(clientId, aud) };
  }
  async function post(path: string, body: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; headers: Headers }> {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body) });
    return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
  }
  async function dpopProof(pair: GenerateKeyPairResult, htm: string, url: string, extra: Json = {}): Promise<string> {
    return new SignJWT({ htm, htu: url, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...extra })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(pair.publicKey) })
      .sign(pair.privateKey);
  }
  /** A DPoP proof carrying the server's current nonce (RFC 9449 §8). */
  async function noncedProof(pair: GenerateKeyPairResult, url: string, extra: Json = {}): Promise<string> {
    const first = await post('/oauth/token', { grant_type: 'client_credentials' }, { dpop: await dpopProof(pair, 'POST', url) });
    return dpopProof(pair, 'POST', url, { nonce: first.headers.get('dpop-nonce'), ...extra });
  }
  function pkce(): { verifier: string; challenge: string } {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  }
  const pushedParams = (challenge: string, extra: Record<string, string> = {}): Record<string, string> => ({
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid offline_access',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  async function push(clientId: string, params: Record<string, string>, aud?: string | string[]) {
    return post('/oauth/par', { ...(await authenticated(clientId, aud)), ...params });
  }
  async function authorizePage(query: Record<string, string>): Promise<{ status: number; text: string; location: string | null }> {
    const res = await fetch(`${server.url}/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  }

  /** PAR (bound to dpopKeys) → hosted login → the callback, for dpopClient. */
  async function loginThroughPar(): Promise<{ callback: URL; verifier: string }> {
    const { verifier, challenge } = pkce();
    const pushed = await push(dpopClient.client_id, { ...pushedParams(challenge), dpop_jkt: await jkt(dpopKeys) });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
    const callback = await logIn(server, new TestBrowser(), { client_id: dpopClient.client_id, request_uri: pushed.body.request_uri as string }, { username: email, password: PASSWORD });
    return { callback, verifier };
  }
  async function jkt(pair: GenerateKeyPairResult): Promise<string> {
    const jwk = await exportJWK(pair.publicKey);
    const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
    return createHash('sha256').update(canonical).digest('base64url');
  }
  async function redeem(callback: URL, verifier: string, pair: GenerateKeyPairResult) {
    const url = `${server.url}/oauth/token`;
    return post(
      '/oauth/token',
      { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: verifier, ...(await authenticated(dpopClient.client_id)) },
      { dpop: await noncedProof(pair, url) },
    );
  }

  /** A POST that reached us through the edge's mtls.<host> alias: the alias is the Host header. */
  async function throughAlias(path: string, form: Record<string, string>, headers: Record<string, string>): Promise<{ status: number; body: Json }> {
    const port = new URL(server.url).port;
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, path, method: 'POST', headers: { host: `mtls.localhost:${port}`, 'content-type': 'application/x-www-form-urlencoded', ...headers } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Json }));
        },
      );
      req.on('error', reject);
      req.end(new URLSearchParams(form).toString());
    });
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    const { tenant } = server.server.prepared.bootstrap!;
    managementAudience = server.server.prepared.bootstrap!.managementAudience;
    await updateTenant(server.server.prepared.store.db, tenant.id, {
      settings: { ...tenant.settings, custom_domain_api_key_sha256: createHash('sha256').update(API_KEY).digest('hex') },
    });
    await createUser(server, email, PASSWORD);
    [keys, dpopKeys, otherDpopKeys] = await Promise.all([generateKeyPair('ES256', { extractable: true }), generateKeyPair('ES256', { extractable: true }), generateKeyPair('ES256', { extractable: true })]);
    certificate = (await generate([{ name: 'commonName', value: 'fapi2-client' }], { keySize: 2048 })).cert;
    const privateKeyJwt = { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: await exportSPKI(keys.publicKey), alg: 'ES256' }] } };
    const fapiApp = (level: string, grants: string[]) =>
      createApp(server, { app_type: 'regular_web', token_endpoint_auth_method: undefined, grant_types: grants, client_authentication_methods: privateKeyJwt, compliance_level: level });
    dpopClient = await fapiApp('fapi2_sp_pkj_dpop', ['authorization_code', 'refresh_token', 'client_credentials', 'password', 'implicit']);
    mtlsClient = await fapiApp('fapi2_sp_pkj_mtls', ['client_credentials']);
    for (const client of [dpopClient, mtlsClient]) {
      const grant = await management(server, 'POST', '/client-grants', { client_id: client.client_id, audience: managementAudience, scope: ['read:users'] });
      expect(grant.status).toBe(201);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it('accepts the fapi2_sp_pkj_dpop level through the Management API', async () => {
    const read = (await (await management(server, 'GET', `/clients/${dpopClient.client_id}`)).json()) as Json;
    expect(read.compliance_level).toBe('fapi2_sp_pkj_dpop');
  });

  it('5.3.2.1-2: refuses the resource owner password credentials grant', async () => {
    const res = await post('/oauth/token', { grant_type: 'password', username: email, password: PASSWORD, ...(await authenticated(dpopClient.client_id)) });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('unauthorized_client');
    expect(res.body.error_description).toContain('password grant');
  });

  it('5.3.2.1-3 and -6: confidential clients only, authenticated by private_key_jwt or mTLS', async () => {
    const publicClient = await createApp(server, { grant_types: ['authorization_code'], compliance_level: 'fapi2_sp_pkj_dpop' });
    const { challenge } = pkce();
    const asPublic = await post('/oauth/par', { client_id: publicClient.client_id, ...pushedParams(challenge) });
    expect(asPublic.status).toBe(401);
    expect(asPublic.body.error).toBe('invalid_client');
    expect(asPublic.body.error_description).toContain('private_key_jwt');

    const secretClient = (await createApp(server, { app_type: 'regular_web', token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], compliance_level: 'fapi2_sp_pkj_dpop' })) as { client_id: string; client_secret: string };
    const withSecret = await post('/oauth/par', { client_id: secretClient.client_id, client_secret: secretClient.client_secret, ...pushedParams(challenge) });
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error).toBe('invalid_client');
    // The same client without the level: the secret is fine.
    expect((await management(server, 'PATCH', `/clients/${secretClient.client_id}`, { compliance_level: null })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the config cache's second
    expect((await post('/oauth/par', { client_id: secretClient.client_id, client_secret: secretClient.client_secret, ...pushedParams(challenge) })).status).toBe(201);
  });

  it('5.3.2.1-8: a client assertion\'s aud is the issuer as a string, nothing else', async () => {
    const { challenge } = pkce();
    for (const aud of [`${server.url}/oauth/par`, [server.issuer]]) {
      const res = await push(dpopClient.client_id, pushedParams(challenge), aud);
      expect(res.status, JSON.stringify(aud)).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    }
    expect((await push(dpopClient.client_id, pushedParams(challenge), server.issuer)).status).toBe(201);
  });

  it('5.3.2.1-4: only sender-constrained tokens, by the level\'s method (DPoP; mTLS)', async () => {
    const url = `${server.url}/oauth/token`;
    const bare = await post('/oauth/token', { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(dpopClient.client_id)) });
    expect(bare.status).toBe(400);
    expect(bare.body.error).toBe('invalid_request');
    expect(bare.body.error_description).toContain('DPoP');
    // A certificate does not stand in for the DPoP level's proof.
    const withCertificate = await post('/oauth/token', { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(dpopClient.client_id)) }, edge(certificate));
    expect(withCertificate.status).toBe(400);
    const bound = await post('/oauth/token', { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(dpopClient.client_id)) }, { dpop: await noncedProof(dpopKeys, url) });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
    expect((decodeJwt(bound.body.access_token as string).cnf as Json).jkt).toBe(await jkt(dpopKeys));

    const noCertificate = await post('/oauth/token', { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(mtlsClient.client_id)) });
    expect(noCertificate.status).toBe(400);
    expect(noCertificate.body.error).toBe('invalid_request');
    const mtls = await post('/oauth/token', { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(mtlsClient.client_id)) }, edge(certificate));
    expect(mtls.status, JSON.stringify(mtls.body)).toBe(200);
    expect((decodeJwt(mtls.body.access_token as string).cnf as Json)['x5t#S256']).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('5.3.2.1-10: the DPoP server nonce is required', async () => {
    const res = await post(
      '/oauth/token',
      { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(dpopClient.client_id)) },
      { dpop: await dpopProof(dpopKeys, 'POST', `${server.url}/oauth/token`) },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('use_dpop_nonce');
    expect(res.headers.get('dpop-nonce')).toBeTruthy();
  });

  it('5.3.2.2-1: response_type code only (no implicit, no hybrid), at PAR', async () => {
    const { challenge } = pkce();
    for (const responseType of ['token', 'id_token', 'code id_token', 'code token']) {
      const res = await push(dpopClient.client_id, pushedParams(challenge, { response_type: responseType, nonce: 'n' }));
      expect(res.status, responseType).toBe(400);
      expect(res.body.error).toBe('unsupported_response_type');
    }
  });

  it('5.3.2.2-3: authorization requests only through PAR', async () => {
    const { challenge } = pkce();
    const plain = await authorizePage({ client_id: dpopClient.client_id, ...pushedParams(challenge) });
    expect(plain.status).toBe(400);
    expect(plain.location).toBeNull();
    expect(plain.text).toContain('Pushed Authorization Request is required');
  });

  it('5.3.2.2-4: pushed requests need client authentication', async () => {
    const { challenge } = pkce();
    const res = await post('/oauth/par', { client_id: dpopClient.client_id, ...pushedParams(challenge) });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  it('5.3.2.2-5: PKCE with S256 is required', async () => {
    const { challenge } = pkce();
    const withoutPkce = await push(dpopClient.client_id, pushedParams(challenge, { code_challenge: '', code_challenge_method: '' }));
    expect(withoutPkce.status).toBe(400);
    expect(withoutPkce.body.error).toBe('invalid_request');
    expect(withoutPkce.body.error_description).toContain('PKCE is required');
    const plain = await push(dpopClient.client_id, pushedParams(challenge, { code_challenge_method: 'plain' }));
    expect(plain.status).toBe(400);
    expect(plain.body.error).toBe('invalid_request');
  });

  it('5.3.2.2-6: redirect_uri is required in the pushed request', async () => {
    const { challenge } = pkce();
    const params = pushedParams(challenge);
    delete (params as Partial<typeof params>).redirect_uri;
    const res = await push(dpopClient.client_id, params);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toContain('redirect_uri');
  });

  it('5.3.2.2-12: the request_uri lives at most 60 s and works once', async () => {
    const { challenge } = pkce();
    const pushed = await push(dpopClient.client_id, pushedParams(challenge));
    expect(pushed.status).toBe(201);
    expect(pushed.body.expires_in).toBeLessThanOrEqual(60);
    const first = await authorizePage({ client_id: dpopClient.client_id, request_uri: pushed.body.request_uri as string });
    expect(first.status).toBe(302);
    const again = await authorizePage({ client_id: dpopClient.client_id, request_uri: pushed.body.request_uri as string });
    expect(again.status).toBe(400);
    expect(again.text).toContain('invalid_request_uri');
  });

  it('the whole flow: 5.3.2.2-7 iss in the response, 5.3.2.1-11 code ≤ 60 s, 5.3.2.1-12 code bound to the DPoP key, 5.3.2.2-9 single use, 5.3.2.1-9 sender-bound refresh', async () => {
    const { callback, verifier } = await loginThroughPar();
    expect(callback.searchParams.get('iss')).toBe(server.issuer);
    const stored = await server.server.prepared.store.db.selectFrom('authorization_codes').select(['created_at', 'expires_at']).where('client_id', '=', dpopClient.client_id).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(Number(stored.expires_at) - Number(stored.created_at)).toBeLessThanOrEqual(60_000);

    // Bound at PAR to dpopKeys: another key cannot redeem it (and does not use it up).
    const otherKey = await redeem(callback, verifier, otherDpopKeys);
    expect(otherKey.status).toBe(400);
    expect(otherKey.body.error).toBe('invalid_grant');
    const tokens = await redeem(callback, verifier, dpopKeys);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(tokens.body.token_type).toBe('DPoP');

    const url = `${server.url}/oauth/token`;
    const refresh = async (headers: Record<string, string>) =>
      post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string, ...(await authenticated(dpopClient.client_id)) }, headers);
    const withoutProof = await refresh({});
    expect(withoutProof.status).toBe(400);
    expect(withoutProof.body.error).toBe('invalid_request');
    // RFC 9449 §5: a confidential client's refresh token is bound to its authentication, not to a DPoP key; each
    // access token is bound to the key of the proof that came with it.
    const anonymous = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string, client_id: dpopClient.client_id }, { dpop: await noncedProof(dpopKeys, url) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('invalid_client');
    const refreshed = await refresh({ dpop: await noncedProof(dpopKeys, url) });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect((decodeJwt(refreshed.body.access_token as string).cnf as Json).jkt).toBe(await jkt(dpopKeys));

    // Last: a code used twice is refused, and what it issued is revoked (RFC 6749 §4.1.2).
    const reused = await redeem(callback, verifier, dpopKeys);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
  });

  it('RFC 8705 §5: mtls_endpoint_aliases on mtls.<host> when mTLS is configured and the aliases are on; the alias serves the same tenant', async () => {
    const metadata = async () => (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Json;
    expect(await metadata()).not.toHaveProperty('mtls_endpoint_aliases');
    expect((await management(server, 'PATCH', '/tenants/settings', { mtls: { enable_endpoint_aliases: true } })).status).toBe(200);
    const port = new URL(server.url).port;
    const aliases = (await metadata()).mtls_endpoint_aliases as Record<string, string>;
    expect(aliases).toEqual({
      token_endpoint: `http://mtls.localhost:${port}/oauth/token`,
      revocation_endpoint: `http://mtls.localhost:${port}/oauth/revoke`,
      userinfo_endpoint: `http://mtls.localhost:${port}/userinfo`,
      pushed_authorization_request_endpoint: `http://mtls.localhost:${port}/oauth/par`,
    });
    // The edge forwards to us with the alias as Host: the same tenant, the same issuer, a certificate-bound token.
    const answer = await throughAlias('/oauth/token', { grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(mtlsClient.client_id)) }, edge(certificate));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const claims = decodeJwt(answer.body.access_token as string);
    expect(claims.iss).toBe(server.issuer);
    expect((claims.cnf as Json)['x5t#S256']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Off again: no aliases, and mtls.<host> is no tenant.
    expect((await management(server, 'PATCH', '/tenants/settings', { mtls: { enable_endpoint_aliases: false } })).status).toBe(200);
    expect(await metadata()).not.toHaveProperty('mtls_endpoint_aliases');
  });

  it('RFC 9449 §4.3 on the mtls.<host> alias: the proof\'s htu is the alias URL the client called; the other host\'s URL is refused, both ways', async () => {
    expect((await management(server, 'PATCH', '/tenants/settings', { mtls: { enable_endpoint_aliases: true } })).status).toBe(200);
    try {
      const port = new URL(server.url).port;
      const aliasUrl = `http://mtls.localhost:${port}/oauth/token`;
      const mainUrl = `${server.url}/oauth/token`;
      const form = async () => ({ grant_type: 'client_credentials', audience: managementAudience, ...(await authenticated(dpopClient.client_id)) });

      const onAlias = await throughAlias('/oauth/token', await form(), { dpop: await noncedProof(dpopKeys, aliasUrl) });
      expect(onAlias.status, JSON.stringify(onAlias.body)).toBe(200);
      expect(onAlias.body.token_type).toBe('DPoP');
      expect((decodeJwt(onAlias.body.access_token as string).cnf as Json).jkt).toBe(await jkt(dpopKeys));

      const mainOnAlias = await throughAlias('/oauth/token', await form(), { dpop: await noncedProof(dpopKeys, mainUrl) });
      expect(mainOnAlias.status).toBe(400);
      expect(mainOnAlias.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringContaining('htu') });

      const aliasOnMain = await post('/oauth/token', await form(), { dpop: await noncedProof(dpopKeys, aliasUrl) });
      expect(aliasOnMain.status).toBe(400);
      expect(aliasOnMain.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringContaining('htu') });
      // The main host still takes its own URL.
      expect((await post('/oauth/token', await form(), { dpop: await noncedProof(dpopKeys, mainUrl) })).status).toBe(200);
    } finally {
      expect((await management(server, 'PATCH', '/tenants/settings', { mtls: { enable_endpoint_aliases: false } })).status).toBe(200);
    }
  });
});
