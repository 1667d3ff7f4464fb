/**
 * POST /delegation for the Firebase add-on over real HTTP: the add-on written through the Management API (a
 * real RSA service-account key generated here; checked, sealed, never shown), the custom token verified with
 * jose against that key's public half and held to firebase-admin's shape, both token forms, each refusal with
 * its error and its `fd` event, the `sd` event, and the `token` rate-limit bucket it shares with /oauth/token.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIdToken } from '../crypto/id-token.js';
import { updateTenant } from '../store/tenants.js';
import { managementCaller } from '../test-support/management-api.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { LEGACY_DELEGATION_GRANTS } from './delegation.js';
import { FIREBASE_AUDIENCE } from './firebase/custom-token.js';
import { createClient, createUser, decodeJwt, issueCode, pkcePair, post, REDIRECT_URI, type TestClient } from './user-tokens/testing.js';

type Json = Record<string, unknown>;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SERVICE_ACCOUNT = 'firebase-adminsdk-x1@gatehouse-test.iam.gserviceaccount.com';

function serviceAccountKey(): { pem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

describe('POST /delegation with the Firebase add-on', () => {
  let server: TestServer;
  const key = serviceAccountKey();
  /** A legacy SPA allowed both delegation forms; it signs users in and asks for Firebase tokens. */
  let caller: TestClient;
  /** The application whose add-on holds the service account (created through the Management API). */
  let firebaseApp: Json;
  const secrets: string[] = [key.pem];

  const api = managementCaller(() => server);
  const delegation = (body: Json) => post(server, '/delegation', body, { json: true });
  const legacyGrants = ['authorization_code', 'refresh_token', LEGACY_DELEGATION_GRANTS.id_token, LEGACY_DELEGATION_GRANTS.refresh_token];

  /** Signs `user` in to `client` as /authorize would, and returns the tokens of the code exchange. */
  async function signIn(tc: TestClient, user: Awaited<ReturnType<typeof createUser>>, scopes = ['openid', 'profile', 'email', 'offline_access']) {
    const pkce = tc.secret ? undefined : pkcePair();
    const { code } = await issueCode(server, tc.client, user, { scopes, ...(pkce && { challenge: pkce.challenge }) });
    const res = await post(server, '/oauth/token', { grant_type: 'authorization_code', ...tc.auth, code, redirect_uri: REDIRECT_URI, ...(pkce && { code_verifier: pkce.verifier }) });
    expect(res.status, res.text).toBe(200);
    secrets.push(String(res.body.id_token), String(res.body.access_token), String(res.body.refresh_token));
    return { idToken: res.body.id_token as string, refreshToken: res.body.refresh_token as string };
  }

  async function logs(query: string): Promise<Json[]> {
    await server.server.services.tenantLogs.flush();
    const res = await api('GET', `/logs?q=${encodeURIComponent(query)}&per_page=100`);
    expect(res.status).toBe(200);
    return res.body as unknown as Json[];
  }

  beforeAll(async () => {
    server = await startTestServer();
    caller = await createClient(server, { grant_types: legacyGrants, oidc_conformant: false });
    const created = await api('POST', '/clients', {
      name: 'Firebase project',
      app_type: 'non_interactive',
      addons: { firebase: { client_email: SERVICE_ACCOUNT, private_key_id: 'key-1', private_key: key.pem, lifetime_in_seconds: 600 } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    firebaseApp = created.body;
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('the add-on in the Management API', () => {
    it('is shown without its private key, which is sealed at rest', async () => {
      expect(firebaseApp.addons).toEqual({ firebase: { client_email: SERVICE_ACCOUNT, private_key_id: 'key-1', lifetime_in_seconds: 600 } });
      const read = await api('GET', `/clients/${String(firebaseApp.client_id)}`);
      expect(read.status).toBe(200);
      expect(read.body.addons).toEqual({ firebase: { client_email: SERVICE_ACCOUNT, private_key_id: 'key-1', lifetime_in_seconds: 600 } });
      const row = await server.server.prepared.store.db.selectFrom('clients').select('properties').where('client_id', '=', String(firebaseApp.client_id)).executeTakeFirstOrThrow();
      expect(row.properties).not.toContain('PRIVATE KEY');
      expect(row.properties).not.toContain(key.pem.split('\n')[1]);
      expect(JSON.parse(row.properties)).toMatchObject({ addons: { firebase: { private_key_sealed: expect.stringMatching(/^v1\./) } } });
    });

    it('refuses a bad add-on with a 400 that names the field', async () => {
      const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const cases: [Json, string][] = [
        [{ client_email: SERVICE_ACCOUNT, private_key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n' }, 'addons.firebase.private_key is not a readable PEM private key'],
        [{ client_email: SERVICE_ACCOUNT, private_key: 'just text' }, 'addons.firebase.private_key must be the PEM private key'],
        [{ client_email: SERVICE_ACCOUNT, private_key: ec }, 'must be an RSA key'],
        [{ client_email: SERVICE_ACCOUNT, private_key: small }, 'has 1024 bits'],
        [{ client_email: 'not an email', private_key: key.pem }, 'addons.firebase.client_email'],
        [{ client_email: SERVICE_ACCOUNT }, 'addons.firebase.private_key is required'],
        [{ client_email: SERVICE_ACCOUNT, private_key: key.pem, lifetime_in_seconds: 7200 }, 'lifetime_in_seconds must be a whole number from 1 to 3600'],
        [{ secret: 'legacy-database-secret' }, 'addons.firebase.secret'],
        [{ client_email: SERVICE_ACCOUNT, private_key: key.pem, extra: true }, 'unknown properties extra'],
      ];
      for (const [firebase, message] of cases) {
        const res = await api('POST', '/clients', { name: 'Bad add-on', addons: { firebase } });
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: expect.objectContaining({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining(message) }) });
        // Whatever was wrong, the key is never quoted back.
        for (const pem of [key.pem, ec, small]) expect(JSON.stringify(res.body)).not.toContain(pem.split('\n')[1]);
      }
    });

    it('keeps the sealed key when the client is written back without it, and takes the legacy grant types', async () => {
      const made = await api('POST', '/clients', { name: 'Round trip', addons: { firebase: { client_email: SERVICE_ACCOUNT, private_key: key.pem } } });
      expect(made.status).toBe(201);
      const id = String(made.body.client_id);
      const back = await api('PATCH', `/clients/${id}`, { addons: made.body.addons, grant_types: legacyGrants, oidc_conformant: false });
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect(back.body).toMatchObject({ addons: { firebase: { client_email: SERVICE_ACCOUNT } }, grant_types: legacyGrants });
      // The kept key still signs: the round-tripped client is a working delegation target.
      const user = await createUser(server);
      const { idToken } = await signIn(caller, user);
      const res = await delegation({ client_id: caller.client.client_id, grant_type: JWT_BEARER, id_token: idToken, target: id, api_type: 'firebase' });
      expect(res.status, res.text).toBe(200);
      await jwtVerify(String(res.body.id_token), key.publicKey, { audience: FIREBASE_AUDIENCE, issuer: SERVICE_ACCOUNT });
      // A client that never had the add-on has no key to keep.
      const plain = await api('PATCH', `/clients/${caller.client.client_id}`, { addons: { firebase: { client_email: SERVICE_ACCOUNT } } });
      expect(plain.status).toBe(400);
      expect(plain.body.message).toContain('addons.firebase.private_key is required');
      const typo = await api('PATCH', `/clients/${id}`, { grant_types: ['http://auth0.com/oauth/legacy/grant-type/delegation/typo'] });
      expect(typo.status).toBe(400);
    });
  });

  describe('exchanges', () => {
    it('an id_token for a Firebase custom token signed by the service account, in firebase-admin\u2019s shape', async () => {
      const user = await createUser(server);
      const { idToken } = await signIn(caller, user);
      const res = await delegation({ client_id: caller.client.client_id, grant_type: JWT_BEARER, id_token: idToken, target: firebaseApp.client_id, api_type: 'firebase', scope: 'openid profile email' });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toEqual({ id_token: expect.any(String), token_type: 'Bearer', expires_in: 600 });
      const customToken = String(res.body.id_token);
      secrets.push(customToken);
      const { payload, protectedHeader } = await jwtVerify(customToken, key.publicKey, { algorithms: ['RS256'], audience: FIREBASE_AUDIENCE, issuer: SERVICE_ACCOUNT, subject: SERVICE_ACCOUNT });
      // firebase-admin's createCustomToken: header {alg, typ}, body {aud, iat, exp, iss, sub, uid, claims?}; kid is the reference's addition.
      expect(protectedHeader).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' });
      expect(Object.keys(payload).sort()).toEqual(['aud', 'claims', 'exp', 'iat', 'iss', 'sub', 'uid']);
      expect(payload.uid).toBe(user.user_id);
      expect(payload.exp! - payload.iat!).toBe(600);
      expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(30);
      expect(payload.claims).toEqual({
        name: 'Ada Lovelace',
        given_name: 'Ada',
        family_name: 'Lovelace',
        nickname: user.email!.split('@')[0],
        picture: expect.stringContaining('https://'),
        updated_at: new Date(user.updated_at).toISOString(),
        email: user.email,
        email_verified: true,
      });
    });

    it('single claims as legacy scopes, and no claims at all for openid alone (as firebase-admin leaves them out)', async () => {
      const user = await createUser(server);
      const { idToken } = await signIn(caller, user);
      const base = { client_id: caller.client.client_id, grant_type: JWT_BEARER, id_token: idToken, target: firebaseApp.client_id, api_type: 'firebase' };
      const single = await delegation({ ...base, scope: 'openid email' });
      expect(single.status).toBe(200);
      expect(decodeJwt(String(single.body.id_token)).payload.claims).toEqual({ email: user.email, email_verified: true });
      const bare = await delegation(base);
      expect(bare.status).toBe(200);
      expect(decodeJwt(String(bare.body.id_token)).payload).not.toHaveProperty('claims');
    });

    it('a refresh token, with the confidential client authenticated as at /oauth/token', async () => {
      const confidential = await createClient(server, { token_endpoint_auth_method: 'client_secret_post', grant_types: legacyGrants });
      const user = await createUser(server);
      const { refreshToken } = await signIn(confidential, user);
      const form = { client_id: confidential.client.client_id, grant_type: JWT_BEARER, refresh_token: refreshToken, target: firebaseApp.client_id, api_type: 'firebase' };
      const ok = await delegation({ ...form, client_secret: confidential.secret });
      expect(ok.status, ok.text).toBe(200);
      const { payload } = await jwtVerify(String(ok.body.id_token), key.publicKey, { audience: FIREBASE_AUDIENCE });
      expect(payload.uid).toBe(user.user_id);
      // Reading it did not spend it: the refresh token still works at /oauth/token.
      const refreshed = await post(server, '/oauth/token', { grant_type: 'refresh_token', ...confidential.auth, refresh_token: refreshToken });
      expect(refreshed.status).toBe(200);
      // Without the secret a copied refresh token is not enough.
      const stolen = await delegation(form);
      expect({ status: stolen.status, error: stolen.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    });

    it('and a rotated refresh token no more: it has been replaced', async () => {
      const rotating = await createClient(server, { grant_types: legacyGrants, refresh_token: { rotation_type: 'rotating', expiration_type: 'expiring', leeway: 0 } });
      const user = await createUser(server);
      const { refreshToken } = await signIn(rotating, user);
      const rotated = await post(server, '/oauth/token', { grant_type: 'refresh_token', ...rotating.auth, refresh_token: refreshToken });
      expect(rotated.status).toBe(200);
      const res = await delegation({ client_id: rotating.client.client_id, grant_type: JWT_BEARER, refresh_token: refreshToken, target: firebaseApp.client_id, api_type: 'firebase' });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'Unknown or invalid refresh token.' } });
    });
  });

  describe('refuses', () => {
    let user: Awaited<ReturnType<typeof createUser>>;
    let idToken: string;
    let good: Json;
    beforeAll(async () => {
      user = await createUser(server);
      ({ idToken } = await signIn(caller, user));
      good = { client_id: caller.client.client_id, grant_type: JWT_BEARER, id_token: idToken, target: firebaseApp.client_id, api_type: 'firebase' };
    });

    it('each bad request with its error, and logs each as fd naming the client', async () => {
      const conformant = await createClient(server, { grant_types: legacyGrants, oidc_conformant: true });
      const { idToken: conformantToken } = await signIn(conformant, user);
      const noGrant = await createClient(server, { grant_types: ['authorization_code', 'refresh_token'] });
      const { idToken: noGrantToken } = await signIn(noGrant, user);
      const other = await createClient(server, { grant_types: legacyGrants });
      const { idToken: othersToken } = await signIn(other, user);
      const tenant = server.server.prepared.bootstrap!.tenant;
      const expired = await signIdToken(server.server.prepared.keyRing, tenant.id, { iss: tenant.issuer, sub: user.user_id, aud: caller.client.client_id }, -60);
      // Signed by another key under the tenant key's kid, with every claim right.
      const foreignKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      const forged = await new SignJWT({ sub: user.user_id })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: String(decodeJwt(idToken).header.kid) })
        .setIssuer(tenant.issuer)
        .setAudience(caller.client.client_id)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(foreignKey);
      const [header, payload] = idToken.split('.');
      const tampered = `${header}.${payload}.${Buffer.from('not the tenant signature').toString('base64url')}`;
      const guarded = await api('POST', '/clients', { name: 'Guarded Firebase project', allowed_clients: [other.client.client_id], addons: { firebase: { client_email: SERVICE_ACCOUNT, private_key: key.pem } } });
      expect(guarded.status).toBe(201);
      const blocked = await createUser(server);
      const { idToken: blockedToken } = await signIn(caller, blocked);
      await server.server.prepared.store.db.updateTable('users').set({ blocked: 1 }).where('user_id', '=', blocked.user_id).execute();
      secrets.push(conformantToken, noGrantToken, othersToken, expired, forged, tampered, blockedToken);

      const cases: { why: string; body: Json; status: number; error: string; description: RegExp }[] = [
        { why: 'an OIDC-conformant client', body: { ...good, client_id: conformant.client.client_id, id_token: conformantToken }, status: 403, error: 'unauthorized_client', description: /OIDC-conformant/ },
        { why: 'a client without the legacy grant type', body: { ...good, client_id: noGrant.client.client_id, id_token: noGrantToken }, status: 403, error: 'unauthorized_client', description: /delegation\/id_token' not allowed/ },
        { why: 'an unknown target', body: { ...good, target: 'NoSuchClient0000000000000000000' }, status: 400, error: 'invalid_request', description: /target is not an application/ },
        { why: 'a target whose allowed_clients leave the caller out', body: { ...good, target: guarded.body.client_id }, status: 403, error: 'unauthorized_client', description: /allowed_clients/ },
        { why: 'a target without the add-on', body: { ...good, target: other.client.client_id }, status: 400, error: 'invalid_request', description: /no Firebase add-on/ },
        { why: 'a default target (the caller) without the add-on', body: { ...good, target: undefined }, status: 400, error: 'invalid_request', description: /no Firebase add-on/ },
        { why: 'a token that is no JWT', body: { ...good, id_token: 'an.id.token-that-is-secret' }, status: 400, error: 'invalid_grant', description: /not a valid ID token/ },
        { why: 'a token signed by another key', body: { ...good, id_token: forged }, status: 400, error: 'invalid_grant', description: /not a valid ID token/ },
        { why: 'a tampered signature', body: { ...good, id_token: tampered }, status: 400, error: 'invalid_grant', description: /not a valid ID token/ },
        { why: 'an id_token of another client (wrong audience)', body: { ...good, id_token: othersToken }, status: 400, error: 'invalid_grant', description: /not issued to client_id/ },
        { why: 'an expired id_token', body: { ...good, id_token: expired }, status: 400, error: 'invalid_grant', description: /expired/ },
        { why: 'a blocked user', body: { ...good, id_token: blockedToken }, status: 400, error: 'invalid_grant', description: /unknown or blocked/ },
        { why: 'api_type app', body: { ...good, api_type: 'app' }, status: 501, error: 'not_offered', description: /api_type app .*not offered/ },
        { why: 'no api_type (app)', body: { ...good, api_type: undefined }, status: 501, error: 'not_offered', description: /api_type app/ },
        { why: 'another add-on', body: { ...good, api_type: 'aws' }, status: 501, error: 'not_offered', description: /"aws" is not offered/ },
        { why: 'another grant_type', body: { ...good, grant_type: 'password' }, status: 400, error: 'unsupported_grant_type', description: /password/ },
        { why: 'no token', body: { ...good, id_token: undefined }, status: 400, error: 'invalid_request', description: /exactly one of id_token and refresh_token/ },
        { why: 'both tokens', body: { ...good, refresh_token: 'x' }, status: 400, error: 'invalid_request', description: /exactly one/ },
        { why: 'no client_id', body: { ...good, client_id: undefined }, status: 400, error: 'invalid_request', description: /client_id is required/ },
        { why: 'an unknown client', body: { ...good, client_id: 'NoSuchClient0000000000000000000' }, status: 401, error: 'invalid_client', description: /Client authentication failed/ },
        { why: 'a scope without openid', body: { ...good, scope: 'email' }, status: 400, error: 'invalid_scope', description: /include openid/ },
        { why: 'a scope it does not know', body: { ...good, scope: 'openid read:orders' }, status: 400, error: 'invalid_scope', description: /read:orders not supported/ },
      ];
      for (const c of cases) {
        const res = await delegation(Object.fromEntries(Object.entries(c.body).filter(([, v]) => v !== undefined)));
        expect({ why: c.why, status: res.status, body: res.body }).toEqual({ why: c.why, status: c.status, body: { error: c.error, error_description: expect.stringMatching(c.description) } });
      }
      // The client the guarded target does list is let through.
      const listed = await delegation({ ...good, client_id: other.client.client_id, id_token: othersToken, target: guarded.body.client_id });
      expect(listed.status, listed.text).toBe(200);
      const failures = await logs(`type:fd AND client_id:"${caller.client.client_id}"`);
      // Every refusal of a request that named the caller: all the cases but the four for other or no clients.
      expect(failures).toHaveLength(cases.length - 4);
      expect(failures).toContainEqual(expect.objectContaining({ type: 'fd', client_id: caller.client.client_id, user_id: blocked.user_id, details: expect.objectContaining({ error: 'invalid_grant' }) }));
      expect(failures).toContainEqual(expect.objectContaining({ details: { error: 'not_offered', target: firebaseApp.client_id, api_type: 'aws' } }));
      const conformantLog = await logs(`type:fd AND client_id:"${conformant.client.client_id}"`);
      expect(conformantLog).toEqual([expect.objectContaining({ description: expect.stringContaining('OIDC-conformant'), details: expect.objectContaining({ error: 'unauthorized_client' }) })]);
    });

    it('logs the success as sd with client, user, target and api_type, and no token in any event', async () => {
      const res = await delegation({ ...good, scope: 'openid profile' });
      expect(res.status).toBe(200);
      secrets.push(String(res.body.id_token));
      const events = await logs(`type:sd AND user_id:"${user.user_id}" AND client_id:"${caller.client.client_id}"`);
      expect(events).toEqual([
        expect.objectContaining({
          type: 'sd',
          client_id: caller.client.client_id,
          client_name: caller.client.name,
          user_id: user.user_id,
          user_name: user.email,
          scope: 'openid profile',
          details: { target: firebaseApp.client_id, api_type: 'firebase' },
        }),
      ]);
      const everything = JSON.stringify(await logs('type:(sd OR fd)'));
      for (const secret of secrets) {
        for (const part of secret.split(/\n|\./).filter((p) => p.length > 20)) expect(everything).not.toContain(part);
      }
    });
  });

  it('counts against the token bucket, the one /oauth/token spends', async () => {
    const tenant = server.server.prepared.bootstrap!.tenant;
    await updateTenant(server.server.prepared.store.db, tenant.id, { settings: { ...tenant.settings, rate_limits: { token: { capacity: 3, per_second: 0.01 } } } });
    server.server.services.tenants.invalidate();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await delegation({ client_id: caller.client.client_id })).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
    const refused = await post(server, '/oauth/token', { grant_type: 'client_credentials', client_id: caller.client.client_id });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBeTruthy();
  });
});
