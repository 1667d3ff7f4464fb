/**
 * The OpenID Connect / OAuth 2.0 client toward upstream providers is `openid-client` (panva; certified RP,
 * built on `oauth4webapi` and `jose`): it validates the authorization response (state, `iss`), the ID token
 * (issuer, audience, signature against the upstream's JWKS, expiry with clock tolerance, nonce) and PKCE. This
 * file makes its configurations, cached per connection so discovery and JWKS are not fetched on every login,
 * and turns its failures into the OAuth errors the application will get.
 */
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { UpstreamError, isUnreachable } from './upstream-error.js';
import { isLoopbackHttp, UPSTREAM_TIMEOUT_SECONDS } from './upstream-urls.js';

/** Seconds of clock difference tolerated on `exp`, `iat`, `nbf` of the upstream's tokens. */
export const CLOCK_TOLERANCE_SECONDS = 60;
/** Discovery documents and keys are re-read after this long (a rotated key is fetched at once anyway). */
const CACHE_MS = 10 * 60_000;
const MAX_CACHED = 500;

export interface UpstreamEndpoints {
  discoveryUrl?: string | undefined;
  issuer?: string | undefined;
  authorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  userinfoEndpoint?: string | undefined;
  jwksUri?: string | undefined;
}

export interface UpstreamClient {
  clientId: string;
  authentication: client.ClientAuth;
  /** id_token (front channel) instead of code. */
  idTokenResponse?: boolean;
  /** What identifies this configuration in the cache (options and secrets, hashed). */
  cacheKey: string;
}

const cache = new Map<string, { at: number; config: Promise<client.Configuration> }>();

function anyLoopbackHttp(urls: (string | undefined)[]): boolean {
  return urls.some((u) => u !== undefined && isLoopbackHttp(new URL(u)));
}

async function build(endpoints: UpstreamEndpoints, upstream: UpstreamClient): Promise<client.Configuration> {
  const metadata: Partial<client.ClientMetadata> = { [client.clockTolerance]: CLOCK_TOLERANCE_SECONDS };
  const insecure = anyLoopbackHttp(Object.values(endpoints));
  let config: client.Configuration;
  if (endpoints.discoveryUrl) {
    config = await client.discovery(new URL(endpoints.discoveryUrl), upstream.clientId, metadata, upstream.authentication, {
      timeout: UPSTREAM_TIMEOUT_SECONDS,
      ...(insecure && { execute: [client.allowInsecureRequests] }),
    });
  } else {
    config = new client.Configuration(
      {
        issuer: endpoints.issuer!,
        authorization_endpoint: endpoints.authorizationEndpoint!,
        ...(endpoints.tokenEndpoint && { token_endpoint: endpoints.tokenEndpoint }),
        ...(endpoints.userinfoEndpoint && { userinfo_endpoint: endpoints.userinfoEndpoint }),
        ...(endpoints.jwksUri && { jwks_uri: endpoints.jwksUri }),
      },
      upstream.clientId,
      metadata,
      upstream.authentication,
    );
    config.timeout = UPSTREAM_TIMEOUT_SECONDS;
    if (insecure) client.allowInsecureRequests(config);
  }
  if (upstream.idTokenResponse) client.useIdTokenResponseType(config);
  return config;
}

/** The configuration for these endpoints and this client, from the cache while it is fresh. */
export function upstreamConfiguration(endpoints: UpstreamEndpoints, upstream: UpstreamClient, now = Date.now()): Promise<client.Configuration> {
  const key = createHash('sha256').update(JSON.stringify([endpoints, upstream.cacheKey, upstream.idTokenResponse ?? false])).digest('hex');
  const cached = cache.get(key);
  if (cached && now - cached.at < CACHE_MS) return cached.config;
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  const config = build(endpoints, upstream);
  cache.set(key, { at: now, config });
  // A failed discovery is not remembered: the next sign-in tries again.
  config.catch(() => cache.delete(key));
  return config;
}

/** openid-client's failures as the OAuth error the application gets. Never includes tokens or secrets. */
export function asUpstreamError(error: unknown, stage: 'discovery' | 'callback' | 'userinfo'): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (isUnreachable(error)) {
    return new UpstreamError('temporarily_unavailable', `The identity provider could not be reached in time (${stage})`);
  }
  if (error instanceof client.AuthorizationResponseError) {
    const description = error.error_description ? `: ${error.error_description.slice(0, 300)}` : '';
    return new UpstreamError('access_denied', `The identity provider refused the sign-in (${error.error.slice(0, 64)})${description}`);
  }
  if (error instanceof client.ResponseBodyError) {
    return new UpstreamError('access_denied', `The identity provider refused the authorization code (${error.error.slice(0, 64)})`);
  }
  if (error instanceof client.ClientError) {
    // oauth4webapi's messages (the cause's) name the check that failed (issuer, audience, signature, expiry,
    // nonce, state) without the values.
    const cause = error.cause instanceof Error && !(error.cause instanceof client.ClientError) ? error.cause.message : '';
    const said = cause && cause !== error.message ? `${error.message}: ${cause}` : error.message;
    return new UpstreamError('access_denied', `The identity provider's response was refused (${said.slice(0, 200)})`);
  }
  if (stage === 'discovery') return new UpstreamError('temporarily_unavailable', 'The identity provider could not be used: its discovery document was refused');
  return new UpstreamError('access_denied', `The identity provider's response was refused`);
}
