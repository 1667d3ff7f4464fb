/**
 * Social providers that speak plain OAuth 2.0 (GitHub, …) are presets of `oauth2`: the provider's endpoints,
 * scope, profile mapping and headers, the reference's user ids (`github|<id>`). Every endpoint and the mapping
 * can be overridden in options (GitHub Enterprise Server, a test upstream). Without its own `client_id` and
 * `client_secret` a connection is in development-keys mode, refused when used (no shared development keys yet).
 */
import { Type } from '@fastify/type-provider-typebox';
import { oauth2Strategy, PROFILE_FIELDS } from './oauth2.js';
import type { FederationStrategy, UpstreamConnection } from './strategy.js';
import { withPresetKeys } from './preset-keys.js';

export interface OAuth2Preset {
  name: string;
  provider: string;
  authorizationURL: string;
  tokenURL: string;
  userinfoURL: string;
  scope: string[];
  profile_mapping: Partial<Record<(typeof PROFILE_FIELDS)[number], string>>;
  customHeaders?: Record<string, string>;
}

const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Path = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_:-]+(\\.[A-Za-z0-9_:-]+)*$' });

export const OAuth2PresetOptions = Type.Object(
  {
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    scope: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })])),
    authorizationURL: Type.Optional(Url),
    tokenURL: Type.Optional(Url),
    userinfoURL: Type.Optional(Url),
    profile_mapping: Type.Optional(Type.Partial(Type.Object(Object.fromEntries(PROFILE_FIELDS.map((f) => [f, Path]))), { additionalProperties: false })),
  },
  { additionalProperties: true },
);

function asOAuth2(preset: OAuth2Preset, options: Record<string, unknown>): Record<string, unknown> {
  return {
    ...options,
    authorizationURL: options.authorizationURL ?? preset.authorizationURL,
    tokenURL: options.tokenURL ?? preset.tokenURL,
    userinfoURL: options.userinfoURL ?? preset.userinfoURL,
    scope: options.scope ?? preset.scope,
    profile_mapping: { ...preset.profile_mapping, ...(options.profile_mapping as Record<string, string> | undefined) },
    customHeaders: { ...preset.customHeaders },
    token_endpoint_auth_method: 'client_secret_post',
    pkce_enabled: true,
  };
}

function withOwnKeys(preset: OAuth2Preset, upstream: UpstreamConnection): UpstreamConnection {
  return withPresetKeys(preset.provider, upstream, (options) => asOAuth2(preset, options));
}

export function oauth2Preset(preset: OAuth2Preset): FederationStrategy {
  return {
    name: preset.name,
    isSocial: true,
    usesDevelopmentKeys: (options) => typeof options.client_id !== 'string',
    optionsSchema: OAuth2PresetOptions,
    secretOptions: ['client_secret'],
    defaultOptions: () => ({}),
    checkOptions(options) {
      if ((options.client_id === undefined) !== (options.client_secret === undefined)) return 'options.client_id and options.client_secret go together (or neither, for development keys)';
      return oauth2Strategy.checkOptions(asOAuth2(preset, options));
    },
    userIdOf: (_connection, subject) => `${preset.name}|${subject}`,
    authorizationUrl: (upstream, trip) => oauth2Strategy.authorizationUrl(withOwnKeys(preset, upstream), trip),
    completeCallback: (upstream, trip, parameters, method) => oauth2Strategy.completeCallback(withOwnKeys(preset, upstream), trip, parameters, method),
  };
}
