/**
 * `oidc`: an upstream OpenID Provider (Okta, Entra ID, Keycloak, another Gatehouse…). By `discovery_url` or
 * explicit endpoints; `type` `back_channel` (authorization code with PKCE, the default) or `front_channel` (an
 * ID token by form_post). Toward the token endpoint it authenticates with `client_secret_basic` unless the
 * options name `client_secret_post` or `private_key_jwt` (OIDC Core §9's default). The ID token is checked by
 * openid-client (issuer, audience, expiry with clock tolerance, nonce) and its signature against the upstream's
 * JWKS by id-token-signature.ts (the front channel's by openid-client).
 * Users are `oidc|<connection>|<sub>`, enterprise (isSocial false).
 */
import { createPrivateKey } from 'node:crypto';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { calculateJwkThumbprint, exportJWK, importPKCS8 } from 'jose';
import * as client from 'openid-client';
import { verifyIdTokenSignature } from './id-token-signature.js';
import { profileFromClaims } from './profile-claims.js';
import type { CallbackParameters, FederatedProfile, FederationStrategy, UpstreamConnection, UpstreamTrip } from './strategy.js';
import { asUpstreamError, upstreamConfiguration, type UpstreamEndpoints } from './upstream-client.js';
import { upstreamRefusal, UpstreamError } from './upstream-error.js';
import { checkUpstreamUrl } from './upstream-urls.js';

const Url = Type.String({ minLength: 1, maxLength: 2000 });

export const OidcOptions = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    discovery_url: Type.Optional(Url),
    issuer: Type.Optional(Url),
    authorization_endpoint: Type.Optional(Url),
    token_endpoint: Type.Optional(Url),
    userinfo_endpoint: Type.Optional(Url),
    jwks_uri: Type.Optional(Url),
    /** RP-initiated logout (OIDC RP-Initiated Logout 1.0), when not in the discovery document. */
    end_session_endpoint: Type.Optional(Url),
    scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    type: Type.Optional(Type.Union([Type.Literal('back_channel'), Type.Literal('front_channel')])),
    token_endpoint_auth_method: Type.Optional(
      Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post'), Type.Literal('private_key_jwt')]),
    ),
    token_endpoint_auth_signing_alg: Type.Optional(Type.Union([Type.Literal('RS256'), Type.Literal('PS256'), Type.Literal('ES256')])),
    /** Gatehouse's: the PKCS#8 PEM private key for private_key_jwt (write-only, sealed). */
    token_endpoint_auth_private_key: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
    /** Extra parameters for the upstream's authorization request, as the reference's `upstream_params` (`{ name: { value } }`). */
    upstream_params: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Object({ value: Type.String({ maxLength: 1000 }) }, { additionalProperties: true }), { maxProperties: 20 }),
    ),
    domain_aliases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
    icon_url: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);
type OidcOptionsValue = Static<typeof OidcOptions>;

/** Parameters the service sets itself: `upstream_params` cannot replace them. */
const RESERVED_PARAMS = new Set(['client_id', 'redirect_uri', 'response_type', 'response_mode', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'scope']);

function endpointsOf(options: OidcOptionsValue): UpstreamEndpoints {
  return {
    discoveryUrl: options.discovery_url,
    issuer: options.issuer,
    authorizationEndpoint: options.authorization_endpoint,
    tokenEndpoint: options.token_endpoint,
    userinfoEndpoint: options.userinfo_endpoint,
    jwksUri: options.jwks_uri,
  };
}

function authMethod(options: OidcOptionsValue): 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none' {
  if (options.type === 'front_channel') return 'none';
  return options.token_endpoint_auth_method ?? 'client_secret_basic';
}

async function authenticationOf(options: OidcOptionsValue, secrets: Record<string, string>): Promise<client.ClientAuth> {
  switch (authMethod(options)) {
    case 'none':
      return client.None();
    case 'client_secret_post':
      return client.ClientSecretPost(secrets.client_secret);
    case 'client_secret_basic':
      return client.ClientSecretBasic(secrets.client_secret);
    case 'private_key_jwt': {
      const alg = options.token_endpoint_auth_signing_alg ?? 'RS256';
      const key = await importPKCS8(secrets.token_endpoint_auth_private_key!, alg, { extractable: true });
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = await exportJWK(key);
      return client.PrivateKeyJwt({ key, kid: await calculateJwkThumbprint(publicJwk) });
    }
  }
}

async function configurationOf(upstream: UpstreamConnection): Promise<client.Configuration> {
  const options = upstream.options as OidcOptionsValue;
  const authentication = await authenticationOf(options, upstream.secrets);
  return upstreamConfiguration(endpointsOf(options), {
    clientId: options.client_id,
    authentication,
    idTokenResponse: options.type === 'front_channel',
    cacheKey: JSON.stringify([upstream.connection.id, options, upstream.secrets]),
  });
}

export function oidcCheckOptions(value: Record<string, unknown>): string | undefined {
  const options = value as OidcOptionsValue;
  for (const field of ['discovery_url', 'issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'end_session_endpoint'] as const) {
    const problem = checkUpstreamUrl(field, options[field]);
    if (problem) return problem;
  }
  // The issuer is an identifier compared with the ID token's `iss`, but it must still be a URL (OIDC Discovery §2).
  if (!options.discovery_url && !(options.issuer && options.authorization_endpoint && options.jwks_uri)) {
    return 'options must have discovery_url, or issuer, authorization_endpoint and jwks_uri';
  }
  const method = authMethod(options);
  if (method !== 'none' && !options.discovery_url && !options.token_endpoint) return 'options.token_endpoint is required for type back_channel without discovery_url';
  if ((method === 'client_secret_basic' || method === 'client_secret_post') && !options.client_secret) {
    return `options.client_secret is required with token_endpoint_auth_method ${method} (or use private_key_jwt)`;
  }
  if (method === 'private_key_jwt') {
    if (!options.token_endpoint_auth_private_key) return 'options.token_endpoint_auth_private_key (a PKCS#8 PEM private key) is required with private_key_jwt';
    try {
      const key = createPrivateKey(options.token_endpoint_auth_private_key);
      const alg = options.token_endpoint_auth_signing_alg ?? 'RS256';
      const wanted = alg === 'ES256' ? 'ec' : 'rsa';
      if (key.asymmetricKeyType !== wanted) return `options.token_endpoint_auth_private_key is not a key for ${alg}`;
    } catch {
      return 'options.token_endpoint_auth_private_key is not a PEM private key';
    }
  }
  const scope = options.scope ?? 'openid';
  if (!scope.split(' ').includes('openid')) return 'options.scope must include openid';
  for (const name of Object.keys(options.upstream_params ?? {})) {
    if (RESERVED_PARAMS.has(name)) return `options.upstream_params cannot set ${name}`;
  }
  return undefined;
}

/** Claims from the ID token, completed by the userinfo endpoint when there is one (code flow only). */
async function completeCode(config: client.Configuration, trip: UpstreamTrip, parameters: CallbackParameters): Promise<FederatedProfile> {
  const current = new URL(trip.redirectUri);
  for (const [name, value] of Object.entries(parameters)) current.searchParams.set(name, value);
  const tokens = await client.authorizationCodeGrant(config, current, {
    pkceCodeVerifier: trip.codeVerifier,
    expectedState: trip.state,
    expectedNonce: trip.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (!claims || !tokens.id_token) throw new UpstreamError('access_denied', 'The identity provider sent no ID token');
  await verifyIdTokenSignature(tokens.id_token, config.serverMetadata().jwks_uri);
  let userinfo: Record<string, unknown> = {};
  if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
    try {
      userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    } catch (error) {
      throw asUpstreamError(error, 'userinfo');
    }
  }
  return profileFromClaims(
    { ...userinfo, ...claims },
    {
      ...(tokens.access_token && { access_token: tokens.access_token }),
      ...(tokens.refresh_token && { refresh_token: tokens.refresh_token }),
      id_token: tokens.id_token,
    },
  );
}

async function completeFormPost(config: client.Configuration, trip: UpstreamTrip, parameters: CallbackParameters): Promise<FederatedProfile> {
  const request = new Request(trip.redirectUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(parameters).toString(),
  });
  const claims = await client.implicitAuthentication(config, request, trip.nonce, { expectedState: trip.state });
  return profileFromClaims(claims, { ...(parameters.id_token && { id_token: parameters.id_token }) });
}

export const oidcStrategy: FederationStrategy = {
  name: 'oidc',
  isSocial: false,
  optionsSchema: OidcOptions,
  secretOptions: ['client_secret', 'token_endpoint_auth_private_key'],
  defaultOptions: () => ({ type: 'back_channel', scope: 'openid profile email' }),
  checkOptions: oidcCheckOptions,
  userIdOf: (connection, subject) => `oidc|${connection.name}|${subject}`,

  async authorizationUrl(upstream, trip) {
    const options = upstream.options as OidcOptionsValue;
    let config: client.Configuration;
    try {
      config = await configurationOf(upstream);
    } catch (error) {
      throw asUpstreamError(error, 'discovery');
    }
    const extra = Object.fromEntries(Object.entries(options.upstream_params ?? {}).map(([name, { value }]) => [name, value]));
    const frontChannel = options.type === 'front_channel';
    return client.buildAuthorizationUrl(config, {
      ...extra,
      redirect_uri: trip.redirectUri,
      scope: options.scope ?? 'openid profile email',
      state: trip.state,
      nonce: trip.nonce,
      ...(frontChannel
        ? { response_type: 'id_token', response_mode: 'form_post' }
        : { response_type: 'code', code_challenge: await client.calculatePKCECodeChallenge(trip.codeVerifier), code_challenge_method: 'S256' }),
    });
  },

  async logoutUrl(upstream, logout) {
    const options = upstream.options as OidcOptionsValue;
    const config = await configurationOf(upstream);
    const endpoint = options.end_session_endpoint ?? config.serverMetadata().end_session_endpoint;
    if (!endpoint) return undefined;
    const url = new URL(endpoint);
    if (logout.idToken) url.searchParams.set('id_token_hint', logout.idToken);
    url.searchParams.set('client_id', options.client_id);
    if (logout.returnTo) url.searchParams.set('post_logout_redirect_uri', logout.returnTo);
    return url;
  },

  async completeCallback(upstream, trip, parameters, method) {
    if (parameters.error !== undefined) throw upstreamRefusal(parameters.error, parameters.error_description);
    const options = upstream.options as OidcOptionsValue;
    const frontChannel = options.type === 'front_channel';
    if (frontChannel !== (method === 'POST')) {
      throw new UpstreamError('invalid_request', frontChannel ? 'The identity provider must answer by form_post' : 'The identity provider must answer by redirect');
    }
    if (!frontChannel) return completeCodeCallback(upstream, trip, parameters);
    try {
      return await completeFormPost(await configurationOf(upstream), trip, parameters);
    } catch (error) {
      throw asUpstreamError(error, 'callback');
    }
  },
};

/**
 * The code flow's callback, however it came (a redirect, or Apple's form_post of a code): the code redeemed with
 * PKCE, the ID token checked, the userinfo read.
 */
export async function completeCodeCallback(upstream: UpstreamConnection, trip: UpstreamTrip, parameters: CallbackParameters): Promise<FederatedProfile> {
  if (parameters.error !== undefined) throw upstreamRefusal(parameters.error, parameters.error_description);
  try {
    return await completeCode(await configurationOf(upstream), trip, parameters);
  } catch (error) {
    throw asUpstreamError(error, 'callback');
  }
}
