/**
 * GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0) and
 * GET /.well-known/oauth-authorization-server (RFC 8414): the same document, listing only what this server
 * implements today. Each capability contributes its own fields below; an endpoint appears here in the same
 * change that implements it.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { DPOP_ALGS } from '../crypto/dpop.js';
import { SIGNING_ALG } from '../crypto/key-ring.js';
import type { Tenant } from '../store/tenants.js';
import { ASSERTION_ALGS } from './client-auth/private-key-jwt.js';
import { TOKEN_ENDPOINT_AUTH_METHODS } from './client-auth/index.js';
import { REQUEST_OBJECT_ALGS } from './authorize/request-object.js';
import { mtlsAliasBaseUrl, mtlsAliasesEnabled } from './mtls-alias.js';
import { PAR_PATH } from './par/index.js';
import { GRANTS } from './token/index.js';
import { ID_TOKEN_CLAIMS } from './user-tokens/claims.js';
import type { App } from '../services.js';
import { MULTI_FACTOR_ACR } from '../mfa/policy.js';

const DiscoveryDocument = Type.Object(
  {
    issuer: Type.String({ format: 'uri' }),
    jwks_uri: Type.String({ format: 'uri' }),
    id_token_signing_alg_values_supported: Type.Array(Type.String()),
    subject_types_supported: Type.Array(Type.String()),
    authorization_endpoint: Type.String({ format: 'uri' }),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    prompt_values_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
    request_parameter_supported: Type.Boolean(),
    request_uri_parameter_supported: Type.Boolean(),
    request_object_signing_alg_values_supported: Type.Array(Type.String()),
    pushed_authorization_request_endpoint: Type.String({ format: 'uri' }),
    require_pushed_authorization_requests: Type.Boolean(),
    end_session_endpoint: Type.String({ format: 'uri' }),
    backchannel_logout_supported: Type.Boolean(),
    backchannel_logout_session_supported: Type.Boolean(),
    token_endpoint: Type.String({ format: 'uri' }),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    token_endpoint_auth_signing_alg_values_supported: Type.Array(Type.String()),
    userinfo_endpoint: Type.String({ format: 'uri' }),
    mfa_challenge_endpoint: Type.String({ format: 'uri', description: 'The MFA API (the reference advertises it): after mfa_required from a password grant' }),
    revocation_endpoint: Type.String({ format: 'uri' }),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    claims_supported: Type.Array(Type.String()),
    acr_values_supported: Type.Array(Type.String()),
    dpop_signing_alg_values_supported: Type.Array(Type.String()),
    tls_client_certificate_bound_access_tokens: Type.Boolean(),
    mtls_endpoint_aliases: Type.Optional(Type.Record(Type.String(), Type.String({ format: 'uri' }))),
  },
  { additionalProperties: true, description: 'Authorization server metadata' },
);

export function discoveryDocument(tenant: Tenant): Static<typeof DiscoveryDocument> {
  // mTLS (client authentication and certificate-bound tokens) needs an edge whose certificate headers count: the
  // custom domain API key (client-auth/tls-client-auth.ts). Without one, neither is offered, so neither is listed.
  const mtls = Boolean(tenant.settings.custom_domain_api_key_sha256);
  const authMethods = TOKEN_ENDPOINT_AUTH_METHODS.filter((method) => mtls || !method.endsWith('tls_client_auth'));
  return {
    issuer: tenant.issuer,
    // Keys: the tenant's published signing keys and how ID tokens are signed.
    jwks_uri: `${tenant.baseUrl}/.well-known/jwks.json`,
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    subject_types_supported: ['public'],
    // Authorization endpoint (auth-api/authorize): response types and modes, PKCE S256 only, iss in responses.
    authorization_endpoint: `${tenant.baseUrl}/authorize`,
    response_types_supported: ['code', 'token', 'id_token', 'id_token token', 'code id_token', 'code token', 'code id_token token'],
    response_modes_supported: ['query', 'fragment', 'form_post', 'web_message'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true,
    // RFC 9101 (authorize/request-object.ts): signed request objects at /authorize and /oauth/par.
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: [...REQUEST_OBJECT_ALGS],
    // RFC 9126 (auth-api/par): request_uri carries only pushed requests, never a URL to fetch.
    request_uri_parameter_supported: false,
    pushed_authorization_request_endpoint: `${tenant.baseUrl}${PAR_PATH}`,
    require_pushed_authorization_requests: tenant.settings.require_pushed_authorization_requests === true,
    // RP-initiated logout (auth-api/logout.ts).
    end_session_endpoint: `${tenant.baseUrl}/oidc/logout`,
    // Back-Channel Logout 1.0 (auth-api/backchannel-logout): logout tokens carry `sid`, as ID tokens do.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // Token endpoint: the grants and client authentication methods implemented.
    token_endpoint: `${tenant.baseUrl}/oauth/token`,
    grant_types_supported: Object.keys(GRANTS),
    token_endpoint_auth_methods_supported: authMethods,
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    // User tokens: userinfo, revocation of refresh tokens, and the claims ID tokens and userinfo carry.
    userinfo_endpoint: `${tenant.baseUrl}/userinfo`,
    // The MFA API (auth-api/mfa/), as the reference advertises it.
    mfa_challenge_endpoint: `${tenant.baseUrl}/mfa/challenge`,
    revocation_endpoint: `${tenant.baseUrl}/oauth/revoke`,
    revocation_endpoint_auth_methods_supported: authMethods,
    claims_supported: [...ID_TOKEN_CLAIMS],
    // Step-up (mfa/policy.ts): the one authentication context class asked for and met here.
    acr_values_supported: [MULTI_FACTOR_ACR],
    // RFC 9449 (crypto/dpop.ts): DPoP proofs at the token, PAR and userinfo endpoints.
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    // RFC 8705 §3.3 (auth-api/sender-constraint.ts): certificate-bound tokens behind a trusted mTLS edge.
    tls_client_certificate_bound_access_tokens: mtls,
    ...mtlsEndpointAliases(tenant),
  };
}

/** RFC 8705 §5: where a client calls the endpoints that take a client certificate (auth-api/mtls-alias.ts). */
function mtlsEndpointAliases(tenant: Tenant): { mtls_endpoint_aliases?: Record<string, string> } {
  if (!mtlsAliasesEnabled(tenant)) return {};
  const base = mtlsAliasBaseUrl(tenant.baseUrl);
  return {
    mtls_endpoint_aliases: {
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      userinfo_endpoint: `${base}/userinfo`,
      pushed_authorization_request_endpoint: `${base}${PAR_PATH}`,
    },
  };
}

export function registerDiscovery(app: App): void {
  for (const url of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    app.get(url, {
      schema: { tags: ['discovery'], summary: 'Authorization server metadata', response: { 200: DiscoveryDocument } },
      config: { cors: { kind: 'public' }, rateLimit: { bucket: 'discovery' } },
      handler: async (request, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return discoveryDocument(request.tenant);
      },
    });
  }
}
