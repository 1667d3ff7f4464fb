/**
 * `apple`: Sign in with Apple (its REST API), an OpenID Connect preset with three differences Apple imposes:
 * - asking for `name` or `email` requires `response_mode=form_post`, so the code arrives by POST;
 * - the client secret is not a shared secret but an ES256 JWT the service signs with the team's private key
 *   (`app_secret`, the .p8 PEM): header `kid`, `iss` the team, `sub` the Services ID, `aud` Apple;
 * - the name is only sent once, at the first sign-in, as a `user` form field (JSON, unsigned) next to the code;
 *   it is kept on later sign-ins that lack it. The email comes from the ID token (`email_verified` may be the
 *   string "true").
 * No userinfo endpoint. Endpoints from Apple's discovery document (https://appleid.apple.com/.well-known/
 * openid-configuration), written in, each can be overridden. Users are `apple|<sub>`. Options as the reference's:
 * `client_id` (Services ID), `team_id`, `kid`, `app_secret`, `scope` and the `name`/`email` flags.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import { Type, type Static } from '@fastify/type-provider-typebox';
import { importPKCS8, SignJWT } from 'jose';
import { completeCodeCallback, oidcCheckOptions, oidcStrategy } from './oidc.js';
import type { CallbackParameters, FederatedProfile, FederationStrategy, UpstreamConnection, UpstreamTrip } from './strategy.js';
import { UpstreamError } from './upstream-error.js';

export const APPLE = {
  issuer: 'https://appleid.apple.com',
  authorization_endpoint: 'https://appleid.apple.com/auth/authorize',
  token_endpoint: 'https://appleid.apple.com/auth/token',
  jwks_uri: 'https://appleid.apple.com/auth/keys',
  /** The client secret's audience, whatever endpoints are used. */
  audience: 'https://appleid.apple.com',
};

/** A client secret lives this long (Apple allows up to six months); a new one is signed when less than an hour is left. */
const SECRET_LIFETIME_SECONDS = 24 * 3600;
const SECRET_RENEW_SECONDS = 3600;
/** The `user` field is a small JSON object; anything larger is not Apple's (the callback refuses over 4000 anyway). */
const MAX_USER_FIELD = 4000;
const MAX_NAME = 200;

const Url = Type.String({ minLength: 1, maxLength: 2000 });

export const AppleOptions = Type.Object(
  {
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 384 })),
    team_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    kid: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    app_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 5120 })),
    scope: Type.Optional(Type.String({ maxLength: 1000 })),
    name: Type.Optional(Type.Boolean()),
    email: Type.Optional(Type.Boolean()),
    issuer: Type.Optional(Url),
    authorization_endpoint: Type.Optional(Url),
    token_endpoint: Type.Optional(Url),
    jwks_uri: Type.Optional(Url),
    upstream_params: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Object({ value: Type.String({ maxLength: 1000 }) }, { additionalProperties: true }), { maxProperties: 20 }),
    ),
  },
  { additionalProperties: true },
);
type AppleOptionsValue = Static<typeof AppleOptions>;

/** The keys Apple knows the service by: the connection's own, or the server's development keys for Apple. */
interface AppleKeys {
  client_id: string;
  team_id: string;
  kid: string;
  app_secret: string;
}

const KEY_OPTIONS = ['client_id', 'team_id', 'kid', 'app_secret'] as const;

/** The scopes asked of Apple: `scope` (name and email by default), with the `name` and `email` flags adding or removing theirs. */
function scopesOf(options: AppleOptionsValue): string[] {
  const scopes = new Set(['openid', ...(options.scope ?? 'name email').split(' ').filter(Boolean)]);
  for (const flag of ['name', 'email'] as const) {
    if (options[flag] === true) scopes.add(flag);
    if (options[flag] === false) scopes.delete(flag);
  }
  return [...scopes];
}

/** Apple refuses a name or email scope unless the code comes back by form_post. */
const formPost = (options: AppleOptionsValue) => scopesOf(options).some((s) => s === 'name' || s === 'email');

function asOidc(options: AppleOptionsValue, clientId: string): Record<string, unknown> {
  return {
    ...options,
    issuer: options.issuer ?? APPLE.issuer,
    authorization_endpoint: options.authorization_endpoint ?? APPLE.authorization_endpoint,
    token_endpoint: options.token_endpoint ?? APPLE.token_endpoint,
    userinfo_endpoint: undefined,
    jwks_uri: options.jwks_uri ?? APPLE.jwks_uri,
    scope: scopesOf(options).join(' '),
    type: 'back_channel',
    token_endpoint_auth_method: 'client_secret_post',
    client_id: clientId,
  };
}

function keysOf(upstream: UpstreamConnection): AppleKeys {
  const options = upstream.options as AppleOptionsValue;
  if (typeof options.client_id === 'string' && upstream.secrets.app_secret && options.team_id && options.kid) {
    return { client_id: options.client_id, team_id: options.team_id, kid: options.kid, app_secret: upstream.secrets.app_secret };
  }
  const shared = upstream.developmentKeys;
  if (!shared?.team_id || !shared.kid || !shared.app_secret) {
    throw new UpstreamError(
      'access_denied',
      `The connection ${upstream.connection.name} has no client_id, team_id, kid and app_secret of its own (development-keys mode), and this server has no development keys for Apple. Its administrator must set the connection's keys.`,
    );
  }
  return { client_id: shared.client_id, team_id: shared.team_id, kid: shared.kid, app_secret: shared.app_secret };
}

const secrets = new Map<string, { secret: string; expiresAt: number }>();

/** Apple's client secret: an ES256 JWT from the team's key, reused while it has more than an hour left. */
export async function appleClientSecret(keys: AppleKeys, now = Date.now()): Promise<string> {
  const id = createHash('sha256').update(JSON.stringify(keys)).digest('hex');
  const cached = secrets.get(id);
  if (cached && cached.expiresAt - now > SECRET_RENEW_SECONDS * 1000) return cached.secret;
  let key: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    key = await importPKCS8(keys.app_secret, 'ES256');
  } catch {
    throw new UpstreamError('access_denied', 'The Apple connection\'s app_secret is not a usable ES256 private key');
  }
  const iat = Math.floor(now / 1000);
  const secret = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: keys.kid })
    .setIssuer(keys.team_id)
    .setSubject(keys.client_id)
    .setAudience(APPLE.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + SECRET_LIFETIME_SECONDS)
    .sign(key);
  if (secrets.size >= 500) secrets.delete(secrets.keys().next().value!);
  secrets.set(id, { secret, expiresAt: (iat + SECRET_LIFETIME_SECONDS) * 1000 });
  return secret;
}

async function asOidcUpstream(upstream: UpstreamConnection): Promise<UpstreamConnection> {
  const keys = keysOf(upstream);
  return { ...upstream, options: asOidc(upstream.options as AppleOptionsValue, keys.client_id), secrets: { client_secret: await appleClientSecret(keys) } };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, MAX_NAME) : undefined;
}

/** The name from the first sign-in's `user` field (`{"name":{"firstName","lastName"},"email"}`); nothing else is taken from it (it is unsigned). */
function nameFromUserField(value: string | undefined): Pick<FederatedProfile, 'name' | 'given_name' | 'family_name'> {
  if (value === undefined || value.length > MAX_USER_FIELD) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return {};
  }
  const name = parsed && typeof parsed === 'object' ? (parsed as { name?: unknown }).name : undefined;
  if (!name || typeof name !== 'object') return {};
  const given = text((name as Record<string, unknown>).firstName);
  const family = text((name as Record<string, unknown>).lastName);
  const full = [given, family].filter(Boolean).join(' ');
  return { ...(given && { given_name: given }), ...(family && { family_name: family }), ...(full && { name: full }) };
}

export function appleCheckOptions(options: Record<string, unknown>): string | undefined {
  const given = KEY_OPTIONS.filter((name) => options[name] !== undefined);
  if (given.length > 0 && given.length < KEY_OPTIONS.length) {
    return `options.client_id, team_id, kid and app_secret go together (or none, for development keys); missing: ${KEY_OPTIONS.filter((n) => !given.includes(n)).join(', ')}`;
  }
  if (typeof options.app_secret === 'string') {
    try {
      const key = createPrivateKey(options.app_secret);
      if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return 'options.app_secret must be an ES256 (P-256) private key, the .p8 file Apple gives';
    } catch {
      return 'options.app_secret is not a PEM private key (the .p8 file Apple gives)';
    }
  }
  const scopes = scopesOf(options as AppleOptionsValue);
  const unknown = scopes.find((s) => !['openid', 'name', 'email'].includes(s));
  if (unknown) return `options.scope: Apple knows name and email, not ${unknown.slice(0, 50)}`;
  return oidcCheckOptions({ ...asOidc(options as AppleOptionsValue, String(options.client_id ?? 'development-keys')), client_secret: 'signed-per-request' });
}

export const appleStrategy: FederationStrategy = {
  name: 'apple',
  isSocial: true,
  usesDevelopmentKeys: (options) => typeof options.client_id !== 'string',
  optionsSchema: AppleOptions,
  secretOptions: ['app_secret'],
  defaultOptions: () => ({ scope: 'name email' }),
  checkOptions: appleCheckOptions,
  userIdOf: (_connection, subject) => `apple|${subject}`,

  async authorizationUrl(upstream, trip) {
    const url = await oidcStrategy.authorizationUrl(await asOidcUpstream(upstream), trip);
    if (url instanceof URL && formPost(upstream.options as AppleOptionsValue)) url.searchParams.set('response_mode', 'form_post');
    return url;
  },

  async completeCallback(upstream: UpstreamConnection, trip: UpstreamTrip, parameters: CallbackParameters, method) {
    const { user, ...rest } = parameters;
    if (formPost(upstream.options as AppleOptionsValue) && method !== 'POST' && rest.error === undefined) {
      throw new UpstreamError('invalid_request', 'Apple must answer by form_post');
    }
    const profile = await completeCodeCallback(await asOidcUpstream(upstream), trip, rest);
    return { ...profile, ...nameFromUserField(user), sentOnce: ['name', 'given_name', 'family_name'] };
  },
};
