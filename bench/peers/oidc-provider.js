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

const provider = new Provider(`http://localhost:${port}`, {
  clients: [
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
  ttl: { ClientCredentials: tokenTtl },
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

const server = createServer(provider.callback());

for (const signal of /** @type {const} */ (['SIGTERM', 'SIGINT'])) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

server.listen(port, host);
