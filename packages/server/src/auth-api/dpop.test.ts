/**
 * DPoP (RFC 9449) over real HTTP, with openid-client@6 as the relying party and jose building the proofs of
 * the negative cases:
 *  - PAR + private_key_jwt + PKCE + DPoP through the hosted login: the code bound to the key at PAR (§10), the
 *    tokens typed DPoP with `cnf.jkt`, refresh and /userinfo with proofs; the nonce flow (§8) is openid-client's;
 *  - a public client's refresh token bound to its key (§5); client_credentials bound;
 *  - refusals: no nonce, replayed jti, wrong htm/htu, stale iat, alg none/HS256, a private jwk, another key for a
 *    bound code or refresh token, a bound token sent as Bearer, a missing or wrong `ath`, and
 *    `require_proof_of_possession` without a proof;
 *  - the Management API taking a DPoP-bound client_credentials token with the DPoP scheme only.
 */
import { constants, createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK, exportSPKI, generateKeyPair, SignJWT, type GenerateKeyPairResult, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dpopNonce, dpopProof, jwkThumbprint } from '../test-support/dpop.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, createUser, logIn, management, TestBrowser } from '../test-support/sign-in.js';

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'Correct-horse-battery-9';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(dialects)('DPoP (RFC 9449) (%s)', (dialect) => {
  let server: TestServer;
  const email = 'dpop@example.com';
  let clientKeys: GenerateKeyPairResult;
  let fapiApp: { client_id: string };
  let config: oidc.Configuration;

  const proof = dpopProof;
  const nonce = () => dpopNonce(server);
  const thumbprint = jwkThumbprint;

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    await createUser(server, email, PASSWORD);
    clientKeys = await generateKeyPair('ES256', { extractable: true });
    fapiApp = await createApp(server, {
      app_type: 'regular_web',
      token_endpoint_auth_method: undefined,
      grant_types: ['authorization_code', 'refresh_token'],
      client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: 'public_key', pem: await exportSPKI(clientKeys.publicKey), alg: 'ES256' }] } },
      require_pushed_authorization_requests: true,
      require_proof_of_possession: true,
    });
    config = await oidc.discovery(new URL(server.url), fapiApp.client_id, { token_endpoint_auth_signing_alg: 'ES256' }, oidc.PrivateKeyJwt(clientKeys.privateKey), {
      execute: [oidc.allowInsecureRequests],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** PAR (with the DPoP key) → hosted login → code, as a FAPI 2.0 client does it. */
  async function codeFlow(dpop: oidc.DPoPHandle): Promise<{ callback: URL; verifier: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(
      config,
      { redirect_uri: CALLBACK, scope: 'openid email offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' },
      { DPoP: dpop },
    );
    const callback = await logIn(server, new TestBrowser(), Object.fromEntries(url.searchParams), { username: email, password: PASSWORD });
    return { callback, verifier };
  }

  it('is announced in discovery', async () => {
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256']);
  });

  it('openid-client: PAR + private_key_jwt + PKCE + DPoP, then refresh and /userinfo with DPoP', async () => {
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const dpop = oidc.getDPoPHandle(config, keyPair);
    const { callback, verifier } = await codeFlow(dpop);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, idTokenExpected: true }, undefined, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP: dpop });
    expect(info.email).toBe(email);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(refreshed.token_type).toBe('dpop');
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt });
    // The same access token as Bearer is refused (§7.2).
    const asBearer = await fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  it('a code bound at PAR is redeemed only with a proof of that key (§10)', async () => {
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const { callback, verifier } = await codeFlow(dpop);
    const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    await expect(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, undefined, { DPoP: other })).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: 'The authorization code is bound to another DPoP key',
    });
  });

  it('require_proof_of_possession: no proof, no token', async () => {
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const { callback, verifier } = await codeFlow(dpop);
    await expect(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier })).rejects.toMatchObject({ error: 'invalid_request' });
  });

  it("binds a public client's refresh token to its key", async () => {
    const spa = await createApp(server, { grant_types: ['authorization_code', 'refresh_token'] });
    const spaConfig = await oidc.discovery(new URL(server.url), spa.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const dpop = oidc.getDPoPHandle(spaConfig, await oidc.randomDPoPKeyPair('ES256'));
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(spaConfig, {
      redirect_uri: CALLBACK,
      scope: 'openid offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await logIn(server, new TestBrowser(), Object.fromEntries(url.searchParams), { username: email, password: PASSWORD });
    const tokens = await oidc.authorizationCodeGrant(spaConfig, callback, { pkceCodeVerifier: verifier }, undefined, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
    await expect(oidc.refreshTokenGrant(spaConfig, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const thief = oidc.getDPoPHandle(spaConfig, await oidc.randomDPoPKeyPair('ES256'));
    await expect(oidc.refreshTokenGrant(spaConfig, tokens.refresh_token!, undefined, { DPoP: thief })).rejects.toMatchObject({ error: 'invalid_grant' });
    const next = await oidc.refreshTokenGrant(spaConfig, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(next.token_type).toBe('dpop');
  });

  describe('at the token endpoint (client_credentials)', () => {
    let machine: { client_id: string; client_secret: string };
    let keys: GenerateKeyPairResult;
    const tokenUrl = () => `${server.url}/oauth/token`;
    const request = (dpop: string | undefined) =>
      fetch(tokenUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop !== undefined && { dpop }) },
        body: new URLSearchParams({ grant_type: 'client_credentials', audience: server.server.prepared.bootstrap!.managementAudience, ...machine }),
      });
    async function refused(dpop: string, error: string, description: RegExp): Promise<void> {
      const res = await request(dpop);
      const body = (await res.json()) as { error: string; error_description: string };
      expect({ status: res.status, error: body.error }).toEqual({ status: 400, error });
      expect(body.error_description).toMatch(description);
    }

    beforeAll(async () => {
      keys = await generateKeyPair('ES256', { extractable: true });
      machine = (await createApp(server, { app_type: 'non_interactive', token_endpoint_auth_method: 'client_secret_post', grant_types: ['client_credentials'] })) as typeof machine;
      const grant = await management(server, 'POST', '/client-grants', { client_id: machine.client_id, audience: server.server.prepared.bootstrap!.managementAudience, scope: ['read:users'] });
      expect(grant.status).toBe(201);
    });

    it('binds the token: token_type DPoP, cnf.jkt, and a fresh DPoP-Nonce', async () => {
      const res = await request(await proof(keys, 'POST', tokenUrl(), { nonce: await nonce() }));
      expect(res.status).toBe(200);
      expect(res.headers.get('dpop-nonce')).toEqual(expect.any(String));
      const body = (await res.json()) as { token_type: string; access_token: string };
      expect(body.token_type).toBe('DPoP');
      expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: await thumbprint(keys) });
      // Without a proof: a Bearer token, as before.
      const bearer = (await (await request(undefined)).json()) as { token_type: string; access_token: string };
      expect(bearer.token_type).toBe('Bearer');
      expect(decodeJwt(bearer.access_token).cnf).toBeUndefined();
    });

    it('the Management API takes the bound token with the DPoP scheme and a proof, never as Bearer', async () => {
      const res = await request(await proof(keys, 'POST', tokenUrl(), { nonce: await nonce() }));
      const { access_token: token } = (await res.json()) as { access_token: string };
      const usersUrl = `${server.url}/api/v2/users`;
      const ath = createHash('sha256').update(token).digest('base64url');
      const ok = await fetch(`${usersUrl}?per_page=1`, { headers: { authorization: `DPoP ${token}`, dpop: await proof(keys, 'GET', usersUrl, { nonce: await nonce(), ath }) } });
      expect(ok.status, await ok.clone().text()).toBe(200);
      const asBearer = await fetch(usersUrl, { headers: { authorization: `Bearer ${token}` } });
      expect(asBearer.status).toBe(401);
      const stranger = await generateKeyPair('ES256', { extractable: true });
      const stolen = await fetch(usersUrl, { headers: { authorization: `DPoP ${token}`, dpop: await proof(stranger, 'GET', usersUrl, { nonce: await nonce(), ath }) } });
      expect(stolen.status).toBe(401);
      expect(stolen.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
    });

    it('an API with proof_of_possession.required gets DPoP-bound tokens only', async () => {
      const identifier = 'https://pop-api.example/';
      expect((await management(server, 'POST', '/resource-servers', { identifier, name: 'PoP API', proof_of_possession: { mechanism: 'dpop', required: true } })).status).toBe(201);
      expect((await management(server, 'POST', '/client-grants', { client_id: machine.client_id, audience: identifier, scope: [] })).status).toBe(201);
      const ask = (dpop: string | undefined) =>
        fetch(tokenUrl(), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop !== undefined && { dpop }) },
          body: new URLSearchParams({ grant_type: 'client_credentials', audience: identifier, ...machine }),
        });
      const bare = await ask(undefined);
      expect(bare.status).toBe(400);
      expect(await bare.json()).toEqual({ error: 'invalid_request', error_description: 'The API requires DPoP-bound access tokens: send a DPoP proof (RFC 9449)' });
      const bound = await ask(await proof(keys, 'POST', tokenUrl(), { nonce: await nonce() }));
      expect(bound.status).toBe(200);
      expect(((await bound.json()) as { token_type: string }).token_type).toBe('DPoP');
    });

    it('asks for a nonce (use_dpop_nonce with DPoP-Nonce), and refuses a stale or forged one', async () => {
      const res = await request(await proof(keys, 'POST', tokenUrl()));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('use_dpop_nonce');
      const given = res.headers.get('dpop-nonce');
      expect(given).toEqual(expect.any(String));
      expect((await request(await proof(keys, 'POST', tokenUrl(), { nonce: given }))).status).toBe(200);
      await refused(await proof(keys, 'POST', tokenUrl(), { nonce: 'made-up' }), 'use_dpop_nonce', /nonce/);
    });

    it('refuses a replayed proof', async () => {
      const once = await proof(keys, 'POST', tokenUrl(), { nonce: await nonce() });
      expect((await request(once)).status).toBe(200);
      await refused(once, 'invalid_dpop_proof', /used before/);
    });

    it('refuses a wrong htm or htu, a stale iat, and a missing jti', async () => {
      const n = await nonce();
      await refused(await proof(keys, 'GET', tokenUrl(), { nonce: n }), 'invalid_dpop_proof', /htm/);
      await refused(await proof(keys, 'POST', `${server.url}/userinfo`, { nonce: n }), 'invalid_dpop_proof', /htu/);
      await refused(await proof(keys, 'POST', tokenUrl().replace('http:', 'https:'), { nonce: n }), 'invalid_dpop_proof', /htu/);
      await refused(await proof(keys, 'POST', tokenUrl(), { nonce: n, iat: Math.floor(Date.now() / 1000) - 600 }), 'invalid_dpop_proof', /iat/);
      await refused(await proof(keys, 'POST', tokenUrl(), { nonce: n, jti: undefined }), 'invalid_dpop_proof', /jti/);
      // Query and fragment do not count (§4.3).
      expect((await request(await proof(keys, 'POST', `${tokenUrl()}?x=1#y`, { nonce: n }))).status).toBe(200);
    });

    it('accepts RS256 and PS256 proofs; refuses a crit header, a past exp, a key that does not fit the alg', async () => {
      const n = await nonce();
      const claims = () => ({ htm: 'POST', htu: tokenUrl(), jti: randomUUID(), iat: Math.floor(Date.now() / 1000), nonce: n });
      /** A compact JWS signed with node:crypto, so that keys jose would refuse to sign with can be tried. */
      const signed = (alg: string, pair: { publicKey: KeyObject; privateKey: KeyObject }, body: Record<string, unknown>, header: Record<string, unknown> = {}) => {
        const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const input = `${b64({ alg, typ: 'dpop+jwt', jwk: pair.publicKey.export({ format: 'jwk' }), ...header })}.${b64(body)}`;
        const options =
          alg === 'PS256'
            ? { key: pair.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
            : alg === 'ES256'
              ? { key: pair.privateKey, dsaEncoding: 'ieee-p1363' as const }
              : pair.privateKey;
        return `${input}.${sign('sha256', Buffer.from(input), options).toString('base64url')}`;
      };
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
      for (const alg of ['RS256', 'PS256']) {
        const res = await request(signed(alg, rsa, claims()));
        expect(res.status, alg).toBe(200);
        expect(decodeJwt(((await res.json()) as { access_token: string }).access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(rsa.publicKey.export({ format: 'jwk' }) as JWK, 'sha256') });
      }
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      await refused(signed('ES256', ec, claims(), { crit: ['exp'] }), 'invalid_dpop_proof', /crit/);
      await refused(signed('ES256', ec, { ...claims(), exp: Math.floor(Date.now() / 1000) - 10 }), 'invalid_dpop_proof', /expired/);
      await refused(signed('ES256', generateKeyPairSync('ec', { namedCurve: 'P-384' }), claims()), 'invalid_dpop_proof', /not a key for ES256/);
      await refused(signed('RS256', generateKeyPairSync('rsa', { modulusLength: 1024 }), claims()), 'invalid_dpop_proof', /not a key for RS256/);
      // A PS256 signature presented as RS256 (same key): the padding is part of the alg.
      const ps = signed('PS256', rsa, claims());
      const [, body, signature] = ps.split('.');
      const relabelled = `${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'dpop+jwt', jwk: rsa.publicKey.export({ format: 'jwk' }) })).toString('base64url')}.${body}.${signature}`;
      await refused(relabelled, 'invalid_dpop_proof', /signature/);
    });

    it('refuses alg none, a MAC, a wrong typ, a private jwk, a bad signature, and two proofs', async () => {
      const n = await nonce();
      const now = Math.floor(Date.now() / 1000);
      const jwk = await exportJWK(keys.publicKey);
      const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const claims = { htm: 'POST', htu: tokenUrl(), jti: randomUUID(), iat: now, nonce: n };
      await refused(`${b64({ alg: 'none', typ: 'dpop+jwt', jwk })}.${b64(claims)}.`, 'invalid_dpop_proof', /invalid/);
      const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk }).sign(new TextEncoder().encode('k'.repeat(32)));
      await refused(hs, 'invalid_dpop_proof', /invalid/);
      await refused(await proof(keys, 'POST', tokenUrl(), { nonce: n }, { typ: 'JWT' }), 'invalid_dpop_proof', /typ/);
      const privateJwk = await exportJWK(keys.privateKey);
      await refused(await proof(keys, 'POST', tokenUrl(), { nonce: n }, { jwk: privateJwk }), 'invalid_dpop_proof', /public jwk/);
      const stranger = await generateKeyPair('ES256', { extractable: true });
      await refused(await proof(keys, 'POST', tokenUrl(), { nonce: n }, { jwk: await exportJWK(stranger.publicKey) }), 'invalid_dpop_proof', /signature/);
      const twice = await fetch(tokenUrl(), {
        method: 'POST',
        headers: [
          ['content-type', 'application/x-www-form-urlencoded'],
          ['dpop', await proof(keys, 'POST', tokenUrl(), { nonce: n })],
          ['dpop', await proof(keys, 'POST', tokenUrl(), { nonce: n })],
        ],
        body: new URLSearchParams({ grant_type: 'client_credentials', audience: server.server.prepared.bootstrap!.managementAudience, ...machine }),
      });
      // fetch joins the two into one comma-separated value, which is no proof (§4.3: one per request); two raw
      // header lines are refused before the endpoint by http/repeated-headers.ts.
      expect(twice.status).toBe(400);
      expect(((await twice.json()) as { error: string }).error).toBe('invalid_dpop_proof');
    });
  });

  describe('at /userinfo', () => {
    let keys: GenerateKeyPairResult;
    let accessToken: string;
    const userinfoUrl = () => `${server.url}/userinfo`;
    const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

    beforeAll(async () => {
      keys = await generateKeyPair('ES256', { extractable: true });
      const dpop = oidc.getDPoPHandle(config, keys);
      const { callback, verifier } = await codeFlow(dpop);
      accessToken = (await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, undefined, { DPoP: dpop })).access_token;
    });
    const call = (proofJwt: string | undefined, scheme = 'DPoP') =>
      fetch(userinfoUrl(), { headers: { authorization: `${scheme} ${accessToken}`, ...(proofJwt !== undefined && { dpop: proofJwt }) } });

    it('accepts the DPoP scheme with a proof of the bound key carrying ath', async () => {
      const res = await call(await proof(keys, 'GET', userinfoUrl(), { nonce: await nonce(), ath: ath(accessToken) }));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { email: string }).email).toBe(email);
    });

    it('answers 401 DPoP challenges: no ath, wrong ath, no nonce, another key, no proof', async () => {
      const n = await nonce();
      const expectChallenge = async (res: Response, error: string) => {
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(new RegExp(`^DPoP error="${error}"`));
        expect(((await res.json()) as { error: string }).error).toBe(error);
      };
      await expectChallenge(await call(await proof(keys, 'GET', userinfoUrl(), { nonce: n })), 'invalid_dpop_proof');
      await expectChallenge(await call(await proof(keys, 'GET', userinfoUrl(), { nonce: n, ath: ath('another-token') })), 'invalid_dpop_proof');
      const noNonce = await call(await proof(keys, 'GET', userinfoUrl(), { ath: ath(accessToken) }));
      expect(noNonce.headers.get('dpop-nonce')).toEqual(expect.any(String));
      await expectChallenge(noNonce, 'use_dpop_nonce');
      const stranger = await generateKeyPair('ES256', { extractable: true });
      await expectChallenge(await call(await proof(stranger, 'GET', userinfoUrl(), { nonce: n, ath: ath(accessToken) })), 'invalid_dpop_proof');
      await expectChallenge(await call(undefined), 'invalid_dpop_proof');
      await expectChallenge(await call(await proof(keys, 'POST', userinfoUrl(), { nonce: n, ath: ath(accessToken) })), 'invalid_dpop_proof');
    });
  });
});
