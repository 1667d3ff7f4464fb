/**
 * Sender-constrained tokens (RFC 9449 DPoP, RFC 8705 mTLS) at the user grants that are not the code flow, over
 * real HTTP on both dialects: password, password-realm, passwordless/otp, and the MFA API's mfa-otp, mfa-oob and
 * mfa-recovery-code. For each: a DPoP proof gets token_type DPoP and `cnf.jkt`; /userinfo refuses the token as
 * Bearer and takes it with DPoP and `ath`; a public client's refresh token is refused without the proof and with
 * another key; a client with `require_proof_of_possession` calling without a proof gets invalid_request before
 * anything is spent (the same request with a proof then succeeds). Also: an mTLS-bound client at password-realm
 * gets `cnf["x5t#S256"]`; an MFA step binds to its own proof, not the password step's; and /authorize gives a
 * client that requires bound tokens no access token in the front channel (the implicit grant cannot bind).
 * (The code flow, refresh and client credentials: dpop.test.ts and mtls-binding.test.ts.)
 */
import { createHash, X509Certificate } from 'node:crypto';
import { generateKeyPair, type GenerateKeyPairResult } from 'jose';
import { generateSync } from 'otplib';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devSmsMessages } from '../../messaging/sms.js';
import { enableConnectionForClient, findConnectionByName } from '../../store/connections.js';
import { findTenantById, updateTenant } from '../../store/tenants.js';
import { DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import { accessTokenHash, dpopNonce, dpopProof, jwkThumbprint } from '../../test-support/dpop.js';
import { mailTo } from '../../test-support/operation-examples.js';
import { managementToken, startTestServer, type TestServer } from '../../test-support/server.js';
import { postgresAvailable } from '../../test-support/services.js';
import { codeIn, createPasswordlessConnection, postJson } from '../passwordless/testing.js';
import { MFA_OOB_GRANT, MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT } from '../mfa/grant-types.js';
import { createApi, createClient, createUser, decodeJwt, PASSWORD, REDIRECT_URI, type TestClient } from '../user-tokens/testing.js';
import { PASSWORD_REALM_GRANT } from './password-realm.js';
import { PASSWORDLESS_OTP_GRANT } from './passwordless-otp.js';

const dialects: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
const EDGE_KEY = 'edge-api-key-sender-constrained-0123456789';
const SCOPE = 'openid email offline_access';
type Json = Record<string, unknown>;

/** One grant: `prepare` does what comes before the issuing request (a user, a code, an mfa_token) and returns its body. */
interface Grant {
  name: string;
  prepare: (client: TestClient) => Promise<Json>;
}

describe.each(dialects)('sender-constrained tokens at the user grants (%s)', (dialect) => {
  let server: TestServer;
  let management: string;
  /** A public client with every grant here: its refresh tokens are bound to its DPoP key (RFC 9449 §5). */
  let app: TestClient;
  /** The same, with require_proof_of_possession. */
  let strict: TestClient;
  let audience: string;
  let sms: { name: string };
  /** Sent on the steps before the issuing request, so that `strict` may take them. */
  let setupKeys: GenerateKeyPairResult;
  let n = 0;

  const tokenUrl = () => `${server.url}/oauth/token`;
  const userinfoUrl = () => `${server.url}/userinfo`;
  const token = (body: Json, headers: Record<string, string> = {}) => postJson(server, '/oauth/token', body, headers);
  const proofFor = async (keys: GenerateKeyPairResult) => ({ dpop: await dpopProof(keys, 'POST', tokenUrl(), { nonce: await dpopNonce(server) }) });
  const newKeys = () => generateKeyPair('ES256', { extractable: true });
  const codeAt = (secret: string) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) });
  const call = async (method: string, path: string, options: { bearer?: string; body?: unknown } = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(options.bearer !== undefined && { authorization: `Bearer ${options.bearer}` }), ...(options.body !== undefined && { 'content-type': 'application/json' }) },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    return { status: res.status, body: (await res.json()) as Json & Json[] };
  };
  const setMfaPolicy = async (policies: string[]) => expect((await call('PUT', '/api/v2/guardian/policies', { bearer: management, body: policies })).status).toBe(200);

  /** The password step where the tenant requires MFA: its mfa_token (with a proof, as `strict` needs one). */
  async function mfaToken(client: TestClient, email: string, keys = setupKeys): Promise<string> {
    const res = await token({ grant_type: 'password', ...client.auth, username: email, password: PASSWORD, scope: SCOPE, audience }, await proofFor(keys));
    expect(res.body).toMatchObject({ error: 'mfa_required', mfa_token: expect.any(String) });
    return res.body.mfa_token as string;
  }
  /** A user with TOTP enrolled (through `app`), and its recovery code. */
  async function enrolledUser(): Promise<{ email: string; recovery: string }> {
    const user = await createUser(server);
    const mfa = await mfaToken(app, user.email!);
    const associated = await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['otp'] } });
    expect(associated.status).toBe(200);
    const confirmed = await token({ grant_type: MFA_OTP_GRANT, ...app.auth, mfa_token: mfa, otp: codeAt(associated.body.secret as string) }, await proofFor(setupKeys));
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    return { email: user.email!, recovery: (associated.body.recovery_codes as string[])[0]! };
  }

  const firstFactorGrants: Grant[] = [
    { name: 'password', prepare: async (client) => ({ grant_type: 'password', ...client.auth, username: (await createUser(server)).email, password: PASSWORD, scope: SCOPE, audience }) },
    {
      name: 'password-realm',
      prepare: async (client) => ({ grant_type: PASSWORD_REALM_GRANT, ...client.auth, realm: DATABASE_CONNECTION_NAME, username: (await createUser(server)).email, password: PASSWORD, scope: SCOPE, audience }),
    },
    {
      name: 'passwordless/otp',
      prepare: async (client) => {
        const phone = `+1555${String(Date.now() % 1000).padStart(3, '0')}${String(++n).padStart(4, '0')}`;
        expect((await postJson(server, '/passwordless/start', { ...client.auth, connection: sms.name, phone_number: phone, send: 'code' })).status).toBe(200);
        const message = devSmsMessages(server.server.prepared.bootstrap!.tenant.id).filter((m) => m.to === phone).at(-1);
        return { grant_type: PASSWORDLESS_OTP_GRANT, ...client.auth, realm: sms.name, username: phone, otp: codeIn(message!.body), scope: SCOPE, audience };
      },
    },
  ];
  const mfaGrants: Grant[] = [
    {
      name: 'mfa-otp',
      // The first code after /mfa/associate confirms the enrollment and issues the tokens.
      prepare: async (client) => {
        const mfa = await mfaToken(client, (await createUser(server)).email!);
        const associated = await call('POST', '/mfa/associate', { bearer: mfa, body: { authenticator_types: ['otp'] } });
        expect(associated.status).toBe(200);
        return { grant_type: MFA_OTP_GRANT, ...client.auth, mfa_token: mfa, otp: codeAt(associated.body.secret as string) };
      },
    },
    {
      name: 'mfa-oob',
      prepare: async (client) => {
        const { email } = await enrolledUser();
        const mfa = await mfaToken(client, email);
        const emailId = (await call('GET', '/mfa/authenticators', { bearer: mfa })).body.find((a) => a.oob_channel === 'email')!.id as string;
        const challenged = await call('POST', '/mfa/challenge', { body: { ...client.auth, mfa_token: mfa, challenge_type: 'oob', authenticator_id: emailId } });
        expect(challenged.status).toBe(200);
        const mail = await mailTo(server, email, (text) => text.includes('verification code'));
        return { grant_type: MFA_OOB_GRANT, ...client.auth, mfa_token: mfa, oob_code: challenged.body.oob_code, binding_code: /\b(\d{6})\b/.exec(mail)![1] };
      },
    },
    {
      name: 'mfa-recovery-code',
      prepare: async (client) => {
        const { email, recovery } = await enrolledUser();
        return { grant_type: MFA_RECOVERY_CODE_GRANT, ...client.auth, mfa_token: await mfaToken(client, email), recovery_code: recovery };
      },
    },
  ];

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    management = await managementToken(server);
    setupKeys = await newKeys();
    const grantTypes = ['password', PASSWORD_REALM_GRANT, PASSWORDLESS_OTP_GRANT, 'refresh_token', MFA_OTP_GRANT, MFA_OOB_GRANT, MFA_RECOVERY_CODE_GRANT];
    app = await createClient(server, { grant_types: grantTypes });
    strict = await createClient(server, { grant_types: grantTypes, require_proof_of_possession: true });
    audience = (await createApi(server)).identifier;
    sms = await createPasswordlessConnection(server, 'sms', [app.client.client_id, strict.client.client_id]);
    for (const factor of ['otp', 'email', 'recovery-code']) expect((await call('PUT', `/api/v2/guardian/factors/${factor}`, { bearer: management, body: { enabled: true } })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** What every grant must do with a proof, and without one for a client that requires it. */
  function bindsAtEveryGrant(grants: Grant[]): void {
    describe.each(grants)('$name', (grant) => {
      it('binds the tokens to the proof key: token_type DPoP, cnf.jkt; /userinfo takes them with DPoP and ath only', async () => {
        const keys = await newKeys();
        const issued = await token(await grant.prepare(app), await proofFor(keys));
        expect(issued.status, JSON.stringify(issued.body)).toBe(200);
        expect(issued.body.token_type).toBe('DPoP');
        const accessToken = issued.body.access_token as string;
        expect(decodeJwt(accessToken).payload.cnf).toEqual({ jkt: await jwkThumbprint(keys) });

        const asBearer = await fetch(userinfoUrl(), { headers: { authorization: `Bearer ${accessToken}` } });
        expect(asBearer.status).toBe(401);
        expect(asBearer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
        const proofAt = async (withKeys: GenerateKeyPairResult, ath: string | undefined) =>
          dpopProof(withKeys, 'GET', userinfoUrl(), { nonce: await dpopNonce(server), ...(ath !== undefined && { ath }) });
        const userinfo = async (proof: string) => fetch(userinfoUrl(), { headers: { authorization: `DPoP ${accessToken}`, dpop: proof } });
        const noAth = await userinfo(await proofAt(keys, undefined));
        expect(noAth.status).toBe(401);
        expect(noAth.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
        expect((await userinfo(await proofAt(await newKeys(), accessTokenHash(accessToken)))).status).toBe(401);
        const ok = await userinfo(await proofAt(keys, accessTokenHash(accessToken)));
        expect(ok.status, await ok.clone().text()).toBe(200);
        expect(((await ok.json()) as Json).sub).toBe(decodeJwt(accessToken).payload.sub);
      });

      it("binds the public client's refresh token: refused without the proof and with another key, renewed with the same one", async () => {
        const keys = await newKeys();
        const issued = await token(await grant.prepare(app), await proofFor(keys));
        expect(issued.status, JSON.stringify(issued.body)).toBe(200);
        const refresh = { grant_type: 'refresh_token', ...app.auth, refresh_token: issued.body.refresh_token };
        expect(refresh.refresh_token).toEqual(expect.any(String));
        expect(await token(refresh)).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'The refresh token is bound to another DPoP key' } });
        expect(await token(refresh, await proofFor(await newKeys()))).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'The refresh token is bound to another DPoP key' } });
        const renewed = await token(refresh, await proofFor(keys));
        expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
        expect(renewed.body.token_type).toBe('DPoP');
        expect(decodeJwt(renewed.body.access_token as string).payload.cnf).toEqual({ jkt: await jwkThumbprint(keys) });
      });

      it('require_proof_of_possession: no proof is invalid_request, and spends nothing (the same request with a proof succeeds)', async () => {
        const body = await grant.prepare(strict);
        const refused = await token(body);
        expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: expect.stringContaining('requires proof of possession') } });
        const keys = await newKeys();
        const issued = await token(body, await proofFor(keys));
        expect(issued.status, JSON.stringify(issued.body)).toBe(200);
        expect(decodeJwt(issued.body.access_token as string).payload.cnf).toEqual({ jkt: await jwkThumbprint(keys) });
      });
    });
  }

  describe('first-factor grants', () => {
    bindsAtEveryGrant(firstFactorGrants);

    it('password-realm: an mTLS-bound client gets cnf["x5t#S256"] (Bearer); /userinfo takes it with that certificate only', async () => {
      const db = server.server.prepared.store.db;
      const { tenant } = server.server.prepared.bootstrap!;
      const settings = (await findTenantById(db, tenant.id))!.settings;
      await updateTenant(db, tenant.id, { settings: { ...settings, custom_domain_api_key_sha256: createHash('sha256').update(EDGE_KEY).digest('hex') } });
      server.server.services.tenants.invalidate();
      try {
        const certificate = (await generate([{ name: 'commonName', value: 'realm-client' }], { keySize: 2048 })).cert;
        const edge = { 'cname-api-key': EDGE_KEY, 'client-certificate': encodeURIComponent(certificate), 'client-certificate-ca-verified': 'SUCCESS' };
        const created = await call('POST', '/api/v2/clients', {
          bearer: management,
          body: {
            name: 'mtls realm app',
            app_type: 'regular_web',
            grant_types: [PASSWORD_REALM_GRANT],
            client_authentication_methods: { self_signed_tls_client_auth: { credentials: [{ credential_type: 'x509_cert', pem: certificate }] } },
            tls_client_certificate_bound_access_tokens: true,
          },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const clientId = created.body.client_id as string;
        await enableConnectionForClient(db, (await findConnectionByName(db, tenant.id, DATABASE_CONNECTION_NAME))!, clientId);
        const user = await createUser(server);
        const body = { grant_type: PASSWORD_REALM_GRANT, client_id: clientId, realm: DATABASE_CONNECTION_NAME, username: user.email, password: PASSWORD, scope: 'openid' };

        const issued = await token(body, edge);
        expect(issued.status, JSON.stringify(issued.body)).toBe(200);
        // RFC 8705 §3: a certificate-bound token keeps the Bearer scheme.
        expect(issued.body.token_type).toBe('Bearer');
        const accessToken = issued.body.access_token as string;
        expect(decodeJwt(accessToken).payload.cnf).toEqual({ 'x5t#S256': createHash('sha256').update(new X509Certificate(certificate).raw).digest('base64url') });
        const userinfo = (headers: Record<string, string>) => fetch(userinfoUrl(), { headers: { authorization: `Bearer ${accessToken}`, ...headers } });
        expect((await userinfo(edge)).status).toBe(200);
        expect((await userinfo({})).status).toBe(401);

        // Certificate headers without the edge's key count for nothing: the client cannot even authenticate.
        expect(await token(body, { ...edge, 'cname-api-key': 'not-the-edge-key' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      } finally {
        await updateTenant(db, tenant.id, { settings });
        server.server.services.tenants.invalidate();
      }
    });
  });

  it('the implicit grant: a client that requires bound tokens gets no access token in the authorization response', async () => {
    const authorize = async (client: TestClient, responseType: string) => {
      const query = new URLSearchParams({ ...client.auth, redirect_uri: REDIRECT_URI, response_type: responseType, scope: 'openid', nonce: 'n', state: 's' });
      return new URL((await fetch(`${server.url}/authorize?${query}`, { redirect: 'manual' })).headers.get('location')!, server.url);
    };
    const refusal = (landed: URL) => new URLSearchParams(landed.hash.slice(1)).get('error');
    for (const requirement of [{ require_proof_of_possession: true }, { tls_client_certificate_bound_access_tokens: true }]) {
      const bound = await createClient(server, { grant_types: ['implicit'], ...requirement });
      for (const responseType of ['token', 'id_token token']) {
        const landed = await authorize(bound, responseType);
        expect(`${landed.origin}${landed.pathname}`).toBe(REDIRECT_URI);
        expect(refusal(landed), `${Object.keys(requirement)[0]} ${responseType}`).toBe('unauthorized_client');
        expect(new URLSearchParams(landed.hash.slice(1)).get('error_description')).toMatch(/sender-constrained/);
      }
      // An ID token alone binds nothing: the request goes on to the login page.
      expect((await authorize(bound, 'id_token')).pathname).not.toBe(new URL(REDIRECT_URI).pathname);
    }
    const unbound = await createClient(server, { grant_types: ['implicit'] });
    expect(refusal(await authorize(unbound, 'token'))).toBeNull();
  });

  describe('MFA grants', () => {
    beforeAll(() => setMfaPolicy(['all-applications']));
    afterAll(() => setMfaPolicy([]));

    bindsAtEveryGrant(mfaGrants);

    it("binds to the MFA step's own proof, not to the password step's key", async () => {
      const { email, recovery } = await enrolledUser();
      const passwordKeys = await newKeys();
      const mfa = await mfaToken(app, email, passwordKeys);
      const mfaKeys = await newKeys();
      const issued = await token({ grant_type: MFA_RECOVERY_CODE_GRANT, ...app.auth, mfa_token: mfa, recovery_code: recovery }, await proofFor(mfaKeys));
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      expect(decodeJwt(issued.body.access_token as string).payload.cnf).toEqual({ jkt: await jwkThumbprint(mfaKeys) });
    });
  });
});
