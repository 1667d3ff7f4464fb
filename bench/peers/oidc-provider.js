/**
 * The peer of the client_credentials scenario: oidc-provider@9 (a certified OpenID Provider for Node), with
 * its default in-memory adapter, one confidential client (client_secret_post, client_credentials only) and one
 * RS256 key. `resourceIndicators` gives every token a default resource whose tokens are RS256 JWTs, so it
 * issues the same kind of access token Gatehouse does (without a resource it would issue opaque tokens,
 * which cost a random string instead of an RSA signature).
 *
 * oidc-provider is a dev dependency of bench/ only. On Node 20 it prints "Unsupported runtime" at start;
 * that is a warning, not an error. Its logging goes through `debug`, which is silent unless DEBUG is set.
 *
 * Environment: PORT (required), HOST (default 127.0.0.1), BENCH_CLIENT_ID, BENCH_CLIENT_SECRET (required),
 * BENCH_RESOURCE (default https://api.example/), BENCH_SCOPE (default read:users), BENCH_TOKEN_TTL (seconds,
 * default 86400: the lifetime Gatehouse gives its tokens, so both sign the same `exp` arithmetic).
 *
 * The userinfo scenario also sets BENCH_USERINFO_CLAIMS: the JSON claims Gatehouse's /userinfo returned for a
 * bench user (`sub` included). Then the provider also has one account with exactly those claims (`findAccount`;
 * the standard `profile` and `email` scope-to-claims mapping), a public client for it (authorization_code), and,
 * before it listens, a grant of `openid profile email` to that client and an access token from it, minted
 * through the provider's own Grant and AccessToken models (opaque, in the in-memory adapter, which is what
 * oidc-provider's /me accepts: a token with a resource audience is refused there). The token is printed as one
 * line `USERINFO_ACCESS_TOKEN <token>` on stdout. There is no login UI (devInteractions off): the bench needs
 * the userinfo endpoint, not how the user got there.
 */
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** @param {string} name */
function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`oidc-provider peer: ${name} is required`);
    process.exit(2);
  }
  return value;
}

const port = Number(required('PORT'));
const host = process.env.HOST || '127.0.0.1';
const clientId = required('BENCH_CLIENT_ID');
const clientSecret = required('BENCH_CLIENT_SECRET');
const resource = process.env.BENCH_RESOURCE || 'https://api.example/';
const scope = process.env.BENCH_SCOPE || 'read:users';
const tokenTtl = Number(process.env.BENCH_TOKEN_TTL || 86_400);

// RSA 2048, like Gatehouse's signing keys.
const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
const signingJwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'bench' };

/** The userinfo scenario's account (see above), or undefined for the client_credentials scenario. */
const userinfoClaims = process.env.BENCH_USERINFO_CLAIMS
  ? /** @type {Record<string, unknown> & { sub: string }} */ (JSON.parse(process.env.BENCH_USERINFO_CLAIMS))
  : undefined;
const USERINFO_CLIENT_ID = 'bench-userinfo-client';
const USERINFO_SCOPE = 'openid profile email';

/** @type {Record<string, unknown>} */
const userinfoConfiguration = userinfoClaims
  ? {
      claims: {
        acr: null,
        sid: null,
        auth_time: null,
        iss: null,
        openid: ['sub'],
        profile: ['name', 'nickname', 'given_name', 'family_name', 'picture', 'updated_at'],
        email: ['email', 'email_verified'],
      },
      findAccount: (/** @type {unknown} */ _ctx, /** @type {string} */ id) =>
        id === userinfoClaims.sub ? { accountId: id, claims: () => userinfoClaims } : undefined,
    }
  : {};
const userinfoClients = userinfoClaims
  ? [
      {
        client_id: USERINFO_CLIENT_ID,
        grant_types: ['authorization_code'],
        redirect_uris: ['https://spa.bench.example/callback'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    ]
  : [];

const provider = new Provider(`http://localhost:${port}`, {
  ...userinfoConfiguration,
  clients: [
    ...userinfoClients,
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  jwks: { keys: [signingJwk] },
  ttl: { ClientCredentials: tokenTtl, ...(userinfoClaims && { AccessToken: tokenTtl, Grant: tokenTtl }) },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      getResourceServerInfo: () => ({ scope, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      useGrantedResource: () => true,
    },
  },
});

/**
 * The models the userinfo set-up uses (oidc-provider has no types; see types/oidc-provider.d.ts).
 * @typedef {object} ProviderModels
 * @property {{ find(id: string): Promise<unknown> }} Client
 * @property {new (init: { accountId: string, clientId: string }) => { addOIDCScope(scope: string): void, save(): Promise<string> }} Grant
 * @property {new (init: { accountId: string, client: unknown, grantId: string, scope: string, gty: string }) => { save(): Promise<string> }} AccessToken
 */
if (userinfoClaims) {
  const models = /** @type {ProviderModels} */ (/** @type {unknown} */ (provider));
  const client = await models.Client.find(USERINFO_CLIENT_ID);
  const grant = new models.Grant({ accountId: userinfoClaims.sub, clientId: USERINFO_CLIENT_ID });
  grant.addOIDCScope(USERINFO_SCOPE);
  const grantId = await grant.save();
  const accessToken = await new models.AccessToken({ accountId: userinfoClaims.sub, client, grantId, scope: USERINFO_SCOPE, gty: 'authorization_code' }).save();
  process.stdout.write(`USERINFO_ACCESS_TOKEN ${accessToken}\n`);
}

const server = createServer(provider.callback());

for (const signal of /** @type {const} */ (['SIGTERM', 'SIGINT'])) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

server.listen(port, host);
