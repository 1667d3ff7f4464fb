/**
 * Social providers that speak OpenID Connect (Google, …) are presets of `oidc`: the provider's well-known
 * endpoints, scope and client authentication (what the provider documents), the reference's user ids
 * (`google-oauth2|<sub>`), social identities. Every endpoint can be overridden in options (a test upstream, a
 * regional or enterprise deployment). A connection created without its own `client_id`/`client_secret` is in
 * development-keys mode; this server has no shared development keys yet, so such a connection is refused with a
 * clear message when it is used.
 */
import { Type } from '@fastify/type-provider-typebox';
import { oidcCheckOptions, oidcStrategy } from './oidc.js';
import type { FederationStrategy, UpstreamConnection } from './strategy.js';
import { withPresetKeys } from './preset-keys.js';

export interface OidcPreset {
  name: string;
  /** Who the provider is, in messages. */
  provider: string;
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  scope: string;
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post';
}

const Url = Type.String({ minLength: 1, maxLength: 2000 });

export const PresetOptions = Type.Object(
  {
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    scope: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })])),
    issuer: Type.Optional(Url),
    authorization_endpoint: Type.Optional(Url),
    token_endpoint: Type.Optional(Url),
    userinfo_endpoint: Type.Optional(Url),
    jwks_uri: Type.Optional(Url),
    upstream_params: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Object({ value: Type.String({ maxLength: 1000 }) }, { additionalProperties: true }), { maxProperties: 20 }),
    ),
  },
  { additionalProperties: true },
);

/** The preset's options as `oidc` options: its endpoints under whatever the connection overrides. */
function asOidc(preset: OidcPreset, options: Record<string, unknown>): Record<string, unknown> {
  const scope = Array.isArray(options.scope) ? options.scope.join(' ') : options.scope;
  const scopes = new Set(['openid', ...String(scope ?? preset.scope).split(' ').filter(Boolean)]);
  return {
    ...options,
    issuer: options.issuer ?? preset.issuer,
    authorization_endpoint: options.authorization_endpoint ?? preset.authorization_endpoint,
    token_endpoint: options.token_endpoint ?? preset.token_endpoint,
    userinfo_endpoint: options.userinfo_endpoint ?? preset.userinfo_endpoint,
    jwks_uri: options.jwks_uri ?? preset.jwks_uri,
    scope: [...scopes].join(' '),
    type: 'back_channel',
    token_endpoint_auth_method: preset.token_endpoint_auth_method,
    client_id: options.client_id ?? '',
  };
}

function withOwnKeys(preset: OidcPreset, upstream: UpstreamConnection): UpstreamConnection {
  return withPresetKeys(preset.provider, upstream, (options) => asOidc(preset, options));
}

export function oidcPreset(preset: OidcPreset): FederationStrategy {
  return {
    name: preset.name,
    isSocial: true,
    usesDevelopmentKeys: (options) => typeof options.client_id !== 'string',
    optionsSchema: PresetOptions,
    secretOptions: ['client_secret'],
    defaultOptions: () => ({}),
    checkOptions(options) {
      if ((options.client_id === undefined) !== (options.client_secret === undefined)) return 'options.client_id and options.client_secret go together (or neither, for development keys)';
      const problem = oidcCheckOptions({ ...asOidc(preset, options), client_id: options.client_id ?? 'development-keys', client_secret: options.client_secret ?? 'development-keys' });
      return problem;
    },
    userIdOf: (_connection, subject) => `${preset.name}|${subject}`,
    authorizationUrl: (upstream, trip) => oidcStrategy.authorizationUrl(withOwnKeys(preset, upstream), trip),
    completeCallback: (upstream, trip, parameters, method) => oidcStrategy.completeCallback(withOwnKeys(preset, upstream), trip, parameters, method),
  };
}
