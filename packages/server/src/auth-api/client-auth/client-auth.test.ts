/**
 * Each client authentication method at POST /oauth/token, with its failure cases. Clients are registered
 * straight through the repository so these tests depend on nothing but the token endpoint.
 */
import { createHash, randomUUID } from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../crypto/ids.js';
import { insertClientGrant } from '../../store/client-grants.js';
import { insertClient, type ClientAuthenticationMethods, type NewClient } from '../../store/clients.js';
import { updateTenant } from '../../store/tenants.js';
import { clientSecretContext } from '../../tenancy/bootstrap.js';
import { startTestServer, type TestServer } from '../../test-support/server.js';
import { JWT_BEARER } from './private-key-jwt.js';

const API_KEY = 'edge-api-key-0123456789abcdef';

describe('client authentication at the token endpoint', () => {
  let server: TestServer;
  let audience: string;
  let tokenUrl: string;

  /** Registers a machine client with the given method and a grant for the Management API. */
  async function registerClient(
    method: Pick<NewClient, 'token_endpoint_auth_method'> & { client_authentication_methods?: ClientAuthenticationMethods },
    secret?: string,
  ): Promise<string> {
    const { tenant } = server.server.prepared.bootstrap!;
    const { db } = server.server.prepared.store;
    const clientId = newId.client();
    await insertClient(db, {
      tenant_id: tenant.id,
      client_id: clientId,
      name: `client ${method.token_endpoint_auth_method}`,
      app_type: 'non_interactive',
      is_first_party: true,
      client_secret_sealed: secret ? server.server.prepared.sealer.seal(secret, clientSecretContext(clientId)) : null,
      callbacks: [],
      allowed_logout_urls: [],
      web_origins: [],
      allowed_origins: [],
      grant_types: ['client_credentials'],
      ...method,
    });
    await insertClientGrant(db, { id: newId.clientGrant(), tenant_id: tenant.id, client_id: clientId, audience, scope: ['read:users'] });
    return clientId;
  }

  const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ grant_type: 'client_credentials', audience, ...body }),
    });

  async function expectInvalidClient(res: Response): Promise<void> {
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
  }

  beforeAll(async () => {
    server = await startTestServer();
    audience = server.server.prepared.bootstrap!.managementAudience;
    tokenUrl = `${server.url}/oauth/token`;
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('client_secret_post and client_secret_basic', () => {
    const secret = 'a-high-entropy-secret-'.padEnd(64, 'x');

    it('accepts the secret in the body or in HTTP Basic, whichever method the client registered (RFC 6749 §2.3.1)', async () => {
      const basicHeader = (id: string, value: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${value}`).toString('base64')}` });
      for (const method of ['client_secret_post', 'client_secret_basic'] as const) {
        const id = await registerClient({ token_endpoint_auth_method: method }, secret);
        expect((await token({ client_id: id, client_secret: secret })).status).toBe(200);
        expect((await token({}, basicHeader(id, secret))).status).toBe(200);
        // Either way, the secret must still be the right one.
        await expectInvalidClient(await token({ client_id: id, client_secret: `${secret}y` }));
        const wrongBasic = await token({}, basicHeader(id, 'nope'));
        expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic/);
        await expectInvalidClient(wrongBasic);
      }
    });

    it('keeps private_key_jwt, mTLS and public clients strict: a secret sent either way is refused', async () => {
      const pem = (await generate([{ name: 'commonName', value: 'strict' }], { keySize: 2048 })).cert;
      const { publicKey } = await generateKeyPair('RS256', { extractable: true });
      const strict = [
        await registerClient({ token_endpoint_auth_method: 'none' }),
        await registerClient({
          token_endpoint_auth_method: 'client_secret_post',
          client_authentication_methods: {
            private_key_jwt: { credentials: [{ id: 'cred_k', credential_type: 'public_key', pem: await exportSPKI(publicKey) }] },
          },
        }, secret),
        await registerClient({
          token_endpoint_auth_method: 'client_secret_basic',
          client_authentication_methods: { self_signed_tls_client_auth: { credentials: [{ id: 'cred_c', credential_type: 'x509_cert', pem }] } },
        }, secret),
      ];
      for (const id of strict) {
        await expectInvalidClient(await token({ client_id: id, client_secret: secret }));
        await expectInvalidClient(await token({}, { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` }));
      }
    });

    it('refuses a wrong, missing or near-miss secret, and an unknown client, identically', async () => {
      const id = await registerClient({ token_endpoint_auth_method: 'client_secret_post' }, secret);
      await expectInvalidClient(await token({ client_id: id, client_secret: `${secret}y` }));
      await expectInvalidClient(await token({ client_id: id, client_secret: secret.slice(0, -1) }));
      await expectInvalidClient(await token({ client_id: id }));
      await expectInvalidClient(await token({ client_id: 'no-such-client', client_secret: secret }));
      const basic = await registerClient({ token_endpoint_auth_method: 'client_secret_basic' }, secret);
      const wrong = await token({}, { authorization: `Basic ${Buffer.from(`${basic}:nope`).toString('base64')}` });
      expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
      await expectInvalidClient(wrong);
      await expectInvalidClient(await token({}, { authorization: 'Basic !!!not-base64' }));
    });

    it('refuses two authentication methods in one request', async () => {
      const id = await registerClient({ token_endpoint_auth_method: 'client_secret_basic' }, secret);
      const res = await token({ client_secret: secret }, { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    });
  });

  describe('private_key_jwt', () => {
    let clientId: string;
    let privateKey: CryptoKey;
    let otherKey: CryptoKey;

    beforeAll(async () => {
      const pair = await generateKeyPair('RS256', { extractable: true });
      privateKey = pair.privateKey;
      otherKey = (await generateKeyPair('RS256')).privateKey;
      const pem = await exportSPKI(pair.publicKey);
      clientId = await registerClient({
        token_endpoint_auth_method: 'client_secret_post',
        client_authentication_methods: {
          private_key_jwt: { credentials: [{ id: 'cred_1', credential_type: 'public_key', pem, alg: 'RS256' }] },
        },
      });
    });

    const assertion = (claims: Record<string, unknown> = {}, options: { key?: CryptoKey; alg?: string; lifetime?: number } = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ jti: randomUUID(), ...claims })
        .setProtectedHeader({ alg: options.alg ?? 'RS256' })
        .setIssuer((claims.iss as string) ?? clientId)
        .setSubject((claims.sub as string) ?? clientId)
        .setAudience((claims.aud as string) ?? server.issuer)
        .setIssuedAt(now)
        .setExpirationTime(now + (options.lifetime ?? 120))
        .sign(options.key ?? privateKey);
    };
    const withAssertion = async (jwt: string, extra: Record<string, string> = {}) =>
      token({ client_assertion: jwt, client_assertion_type: JWT_BEARER, ...extra });

    it('accepts a signed assertion with the issuer or the token endpoint as audience', async () => {
      expect((await withAssertion(await assertion())).status).toBe(200);
      expect((await withAssertion(await assertion({ aud: tokenUrl }))).status).toBe(200);
      expect((await withAssertion(await assertion(), { client_id: clientId })).status).toBe(200);
    });

    it('refuses a replayed jti, also after a restart', async () => {
      const jwt = await assertion();
      expect((await withAssertion(jwt)).status).toBe(200);
      await expectInvalidClient(await withAssertion(jwt));
      server = await server.restart();
      tokenUrl = `${server.url}/oauth/token`;
      await expectInvalidClient(await withAssertion(jwt));
      expect((await withAssertion(await assertion())).status).toBe(200);
    });

    it('refuses expired, too long-lived, wrong-audience, wrong-issuer, wrong-key and wrong-alg assertions', async () => {
      await expectInvalidClient(await withAssertion(await assertion({}, { lifetime: -120 })));
      await expectInvalidClient(await withAssertion(await assertion({}, { lifetime: 600 })));
      await expectInvalidClient(await withAssertion(await assertion({ aud: 'https://elsewhere.example/' })));
      await expectInvalidClient(await withAssertion(await assertion({ iss: 'someone-else' })));
      await expectInvalidClient(await withAssertion(await assertion({}, { key: otherKey })));
      const ps256 = (await generateKeyPair('PS256')).privateKey;
      await expectInvalidClient(await withAssertion(await assertion({}, { alg: 'PS256', key: ps256 }))); // registered for RS256 only
      const hs = await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(server.issuer)
        .setExpirationTime('1m')
        .sign(new TextEncoder().encode('x'.repeat(32)));
      await expectInvalidClient(await withAssertion(hs));
      await expectInvalidClient(await token({ client_assertion: await assertion(), client_assertion_type: 'urn:other' }));
      await expectInvalidClient(await withAssertion('not.a.jwt'));
    });

    it('refuses an assertion signed with a credential past its expires_at', async () => {
      const pair = await generateKeyPair('RS256', { extractable: true });
      const expired = await registerClient({
        token_endpoint_auth_method: 'client_secret_post',
        client_authentication_methods: {
          private_key_jwt: {
            credentials: [{ id: 'cred_x', credential_type: 'public_key', pem: await exportSPKI(pair.publicKey), expires_at: '2020-01-01T00:00:00Z' }],
          },
        },
      });
      const now = Math.floor(Date.now() / 1000);
      const jwt = await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(expired)
        .setSubject(expired)
        .setAudience(server.issuer)
        .setExpirationTime(now + 60)
        .sign(pair.privateKey);
      await expectInvalidClient(await withAssertion(jwt));
    });

    it('refuses a secret from a client registered for private_key_jwt', async () => {
      await expectInvalidClient(await token({ client_id: clientId, client_secret: 'anything' }));
    });
  });

  describe('mTLS behind an edge', () => {
    let selfSignedPem: string;
    let caIssuedPem: string;
    let selfSignedClient: string;
    let tlsClient: string;

    beforeAll(async () => {
      const { tenant } = server.server.prepared.bootstrap!;
      await updateTenant(server.server.prepared.store.db, tenant.id, {
        settings: { ...tenant.settings, custom_domain_api_key_sha256: createHash('sha256').update(API_KEY).digest('hex') },
      });
      server.server.services.tenants.invalidate();
      selfSignedPem = (await generate([{ name: 'commonName', value: 'self-signed-client' }], { keySize: 2048 })).cert;
      caIssuedPem = (
        await generate(
          [
            { name: 'commonName', value: 'machine.example.com' },
            { name: 'organizationName', value: 'Example Corp' },
          ],
          { keySize: 2048 },
        )
      ).cert;
      selfSignedClient = await registerClient({
        token_endpoint_auth_method: 'client_secret_post',
        client_authentication_methods: {
          self_signed_tls_client_auth: { credentials: [{ id: 'cred_s', credential_type: 'x509_cert', pem: selfSignedPem }] },
        },
      });
      tlsClient = await registerClient({
        token_endpoint_auth_method: 'client_secret_post',
        client_authentication_methods: {
          tls_client_auth: { credentials: [{ id: 'cred_t', credential_type: 'cert_subject_dn', subject_dn: 'O=Example Corp, CN=machine.example.com' }] },
        },
      });
    });

    const edge = (pem: string, verified: boolean, apiKey = API_KEY) => ({
      'cname-api-key': apiKey,
      'client-certificate': encodeURIComponent(pem),
      'client-certificate-ca-verified': verified ? 'SUCCESS' : 'FAILED',
    });

    it('self_signed_tls_client_auth: accepts the registered certificate only', async () => {
      expect((await token({ client_id: selfSignedClient }, edge(selfSignedPem, false))).status).toBe(200);
      await expectInvalidClient(await token({ client_id: selfSignedClient }, edge(caIssuedPem, true)));
    });

    it('tls_client_auth: needs the CA check and a matching subject DN', async () => {
      expect((await token({ client_id: tlsClient }, edge(caIssuedPem, true))).status).toBe(200);
      await expectInvalidClient(await token({ client_id: tlsClient }, edge(caIssuedPem, false)));
      await expectInvalidClient(await token({ client_id: tlsClient }, edge(selfSignedPem, true)));
    });

    it('ignores spoofed certificate headers without the right API key', async () => {
      await expectInvalidClient(await token({ client_id: selfSignedClient }, edge(selfSignedPem, true, 'wrong-key')));
      const { 'cname-api-key': _omit, ...withoutKey } = edge(caIssuedPem, true);
      await expectInvalidClient(await token({ client_id: tlsClient }, withoutKey));
    });
  });

  describe('none', () => {
    it('never authenticates a public client for client_credentials', async () => {
      const id = await registerClient({ token_endpoint_auth_method: 'none' });
      await expectInvalidClient(await token({ client_id: id }));
    });
  });
});
