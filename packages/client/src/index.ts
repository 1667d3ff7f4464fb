/**
 * svc: the Gatehouse browser library (v10, modelled on auth0-js v10).
 *
 * This is the skeleton release: the two entry points exist and validate their options, but they do
 * not talk to the server yet. The OAuth 2.0 / OpenID Connect flows and the Management API calls
 * arrive in a later release.
 *
 * Zero runtime dependencies; the only platform API used is the standard `URL` class.
 *
 * @packageDocumentation
 */

/** The library version. Kept equal to `version` in packages/client/package.json (a test checks it). */
export const VERSION = '10.0.0';

/** Options for {@link WebAuth}. */
export interface WebAuthOptions {
  /**
   * The Gatehouse server: either a host (`login.example.com`, meaning `https://login.example.com`)
   * or a full http(s) URL (`http://localhost:3000`).
   */
  domain: string;
  /** The client ID of the application registered with Gatehouse. */
  clientID: string;
}

/** Options for {@link Management}. */
export interface ManagementOptions {
  /** The Gatehouse server, in the same forms as {@link WebAuthOptions.domain}. */
  domain: string;
  /** An access token for the Management API v2. */
  token: string;
}

/**
 * Browser-side authentication against a Gatehouse server.
 *
 * Will provide the OAuth 2.0 / OpenID Connect flows of auth0-js' `WebAuth`: redirecting to the
 * hosted login page (`authorize`), parsing the redirect result (`parseHash`), silent
 * authentication (`checkSession`), database sign-up and `logout`. For now only the constructor
 * exists.
 *
 * @example
 * ```ts
 * const webAuth = new svc.WebAuth({ domain: 'login.example.com', clientID: 'my-client-id' });
 * webAuth.baseUrl; // 'https://login.example.com'
 * ```
 */
export class WebAuth {
  /** The options given to the constructor (a frozen shallow copy). */
  readonly baseOptions: Readonly<WebAuthOptions>;
  /** The server's base URL, e.g. `https://login.example.com` (never a trailing slash). */
  readonly baseUrl: string;

  /** @throws Error if `options`, `options.domain` or `options.clientID` is missing or invalid. */
  constructor(options: WebAuthOptions) {
    const opts = requireOptions(options);
    this.baseUrl = normalizeDomain(opts.domain);
    requireString(opts.clientID, 'clientID');
    this.baseOptions = Object.freeze({ ...opts });
  }
}

/**
 * Client for the Gatehouse Management API v2 (`/api/v2`), authorised by a bearer token.
 *
 * Will provide the user-facing subset of auth0-js' `Management`: reading and updating the
 * current user's profile and metadata and linking accounts. For now only the constructor exists.
 *
 * @example
 * ```ts
 * const management = new svc.Management({ domain: 'login.example.com', token: accessToken });
 * ```
 */
export class Management {
  /** The options given to the constructor (a frozen shallow copy). */
  readonly baseOptions: Readonly<ManagementOptions>;
  /** The server's base URL, e.g. `https://login.example.com` (never a trailing slash). */
  readonly baseUrl: string;

  /** @throws Error if `options`, `options.domain` or `options.token` is missing or invalid. */
  constructor(options: ManagementOptions) {
    const opts = requireOptions(options);
    this.baseUrl = normalizeDomain(opts.domain);
    requireString(opts.token, 'token');
    this.baseOptions = Object.freeze({ ...opts });
  }
}

function requireOptions<T extends object>(options: T): T {
  if (options === null || typeof options !== 'object') {
    throw new Error('options object is required');
  }
  return options;
}

function requireString(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') {
    throw new Error(`${name} option is required`);
  }
  if (typeof value !== 'string') {
    throw new Error(`${name} option must be a string`);
  }
  if (value.trim() === '') {
    throw new Error(`${name} option is required`);
  }
  return value;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * `'example.com'` → `'https://example.com'`; `'http://localhost:3000/'` → `'http://localhost:3000'`.
 * Host names are lower-cased and default ports dropped (by `URL`); a path prefix is kept without
 * its trailing slash. Only http and https are accepted, and no credentials, query or fragment.
 */
function normalizeDomain(value: unknown): string {
  const domain = requireString(value, 'domain').trim();
  const withScheme = SCHEME.test(domain) ? domain : `https://${domain}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`domain option is not a valid host name or URL: ${domain}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`domain option must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.hostname === '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new Error(`domain option must be a host name or a plain http(s) URL: ${domain}`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
