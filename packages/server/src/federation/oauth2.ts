/**
 * `oauth2`: a generic OAuth 2.0 provider (RFC 6749 authorization code, with PKCE unless `pkce_enabled` is
 * false). There is no ID token to trust, so the profile comes from `userinfoURL` read with the access token and
 * mapped declaratively: `profile_mapping` names, for each profile field, the dotted path of the userinfo value
 * (`{"user_id": "id", "nickname": "login"}`); unmapped fields take the OIDC claim of the same name. Toward the
 * token endpoint it sends the secret in the body (`client_secret_post`, what such providers expect), or by
 * HTTP Basic with `token_endpoint_auth_method: client_secret_basic`. Users are `oauth2|<connection>|<id>`,
 * social (isSocial true), as the reference's.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import * as client from 'openid-client';
import { profileFromClaims } from './profile-claims.js';
import type { FederatedProfile, FederationStrategy, UpstreamConnection, UpstreamTrip } from './strategy.js';
import { isUnreachable, upstreamRefusal, UpstreamError } from './upstream-error.js';
import { checkUpstreamUrl, UPSTREAM_TIMEOUT_SECONDS } from './upstream-urls.js';

const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Path = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_:-]+(\\.[A-Za-z0-9_:-]+)*$' });
export const PROFILE_FIELDS = ['user_id', 'email', 'email_verified', 'name', 'given_name', 'family_name', 'nickname', 'picture'] as const;

export const OAuth2Options = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.String({ minLength: 1, maxLength: 2000 }),
    authorizationURL: Url,
    tokenURL: Url,
    userinfoURL: Url,
    scope: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })])),
    profile_mapping: Type.Optional(Type.Partial(Type.Object(Object.fromEntries(PROFILE_FIELDS.map((f) => [f, Path]))), { additionalProperties: false })),
    pkce_enabled: Type.Optional(Type.Boolean()),
    token_endpoint_auth_method: Type.Optional(Type.Union([Type.Literal('client_secret_post'), Type.Literal('client_secret_basic')])),
    /** Extra headers for the token and userinfo requests (some providers want a User-Agent or an API version). */
    customHeaders: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+$' }), Type.String({ maxLength: 1000 }), { maxProperties: 20 })),
    icon_url: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);
type OAuth2OptionsValue = Static<typeof OAuth2Options>;

/** An upstream answer larger than this is refused rather than read. */
const MAX_RESPONSE_BYTES = 256 * 1024;

function scopeOf(options: OAuth2OptionsValue): string | undefined {
  const scope = Array.isArray(options.scope) ? options.scope.join(' ') : options.scope;
  return scope ? scope : undefined;
}

function valueAt(source: unknown, path: string): unknown {
  let value = source;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The userinfo document through the mapping, as OIDC claims. */
export function mapProfile(userinfo: Record<string, unknown>, mapping: Partial<Record<(typeof PROFILE_FIELDS)[number], string>> = {}): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  for (const field of PROFILE_FIELDS) {
    const path = mapping[field] ?? (field === 'user_id' ? undefined : field);
    const value = path !== undefined ? valueAt(userinfo, path) : undefined;
    if (value !== undefined) claims[field === 'user_id' ? 'sub' : field] = value;
  }
  // Without a mapping, the user id is the OIDC `sub`, or the `id` most OAuth 2.0 APIs use.
  if (claims.sub === undefined) claims.sub = userinfo.sub ?? userinfo.id;
  return claims;
}

async function readJson(response: Response, what: string): Promise<Record<string, unknown>> {
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_RESPONSE_BYTES) throw new UpstreamError('access_denied', `The identity provider's ${what} is too large`);
  const text = await response.text();
  if (text.length > MAX_RESPONSE_BYTES) throw new UpstreamError('access_denied', `The identity provider's ${what} is too large`);
  try {
    const body = JSON.parse(text) as unknown;
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // Falls through: not JSON.
  }
  throw new UpstreamError('access_denied', `The identity provider's ${what} is not a JSON object`);
}

async function call(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_SECONDS * 1000) });
  } catch (error) {
    if (isUnreachable(error)) throw new UpstreamError('temporarily_unavailable', `The identity provider could not be reached in time (${what})`);
    throw error;
  }
  const body = await readJson(response, what);
  if (!response.ok || typeof body.error === 'string') {
    const code = typeof body.error === 'string' ? body.error.slice(0, 64) : `HTTP ${response.status}`;
    throw new UpstreamError('access_denied', `The identity provider refused the ${what} (${code})`);
  }
  return body;
}

async function exchangeCode(options: OAuth2OptionsValue, secrets: Record<string, string>, trip: UpstreamTrip, code: string): Promise<{ access_token: string; refresh_token?: string }> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: trip.redirectUri, client_id: options.client_id });
  if (options.pkce_enabled !== false) form.set('code_verifier', trip.codeVerifier);
  const headers: Record<string, string> = { ...options.customHeaders, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const secret = secrets.client_secret ?? '';
  if (options.token_endpoint_auth_method === 'client_secret_basic') {
    // RFC 6749 §2.3.1: each part form-encoded before Basic.
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(options.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  } else {
    form.set('client_secret', secret);
  }
  const body = await call(options.tokenURL, { method: 'POST', headers, body: form.toString() }, 'token request');
  if (typeof body.access_token !== 'string' || body.access_token === '') throw new UpstreamError('access_denied', 'The identity provider sent no access token');
  return { access_token: body.access_token, ...(typeof body.refresh_token === 'string' && { refresh_token: body.refresh_token }) };
}

export const oauth2Strategy: FederationStrategy = {
  name: 'oauth2',
  isSocial: true,
  optionsSchema: OAuth2Options,
  secretOptions: ['client_secret'],
  defaultOptions: () => ({ pkce_enabled: true }),
  checkOptions(value) {
    const options = value as OAuth2OptionsValue;
    for (const field of ['authorizationURL', 'tokenURL', 'userinfoURL'] as const) {
      const problem = checkUpstreamUrl(field, options[field]);
      if (problem) return problem;
    }
    return undefined;
  },
  userIdOf: (connection, subject) => `oauth2|${connection.name}|${subject}`,

  async authorizationUrl(upstream: UpstreamConnection, trip: UpstreamTrip) {
    const options = upstream.options as OAuth2OptionsValue;
    const url = new URL(options.authorizationURL);
    const scope = scopeOf(options);
    const params: Record<string, string> = { response_type: 'code', client_id: options.client_id, redirect_uri: trip.redirectUri, state: trip.state, ...(scope && { scope }) };
    if (options.pkce_enabled !== false) {
      params.code_challenge = await client.calculatePKCECodeChallenge(trip.codeVerifier);
      params.code_challenge_method = 'S256';
    }
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url;
  },

  async completeCallback(upstream, trip, parameters, method): Promise<FederatedProfile> {
    if (parameters.error !== undefined) throw upstreamRefusal(parameters.error, parameters.error_description);
    if (method !== 'GET') throw new UpstreamError('invalid_request', 'The identity provider must answer by redirect');
    const code = parameters.code;
    if (!code) throw new UpstreamError('invalid_request', 'The identity provider sent no authorization code');
    const options = upstream.options as OAuth2OptionsValue;
    const tokens = await exchangeCode(options, upstream.secrets, trip, code);
    const userinfo = await call(options.userinfoURL, { headers: { ...options.customHeaders, accept: 'application/json', authorization: `Bearer ${tokens.access_token}` } }, 'profile request');
    return profileFromClaims(mapProfile(userinfo, options.profile_mapping), tokens);
  },
};
