/**
 * `webAuth.client`: the Authentication API calls that are plain URLs or XHRs (no window handling):
 * buildAuthorizeUrl, buildLogoutUrl, userInfo, and the database and passwordless calls WebAuth builds on.
 */
import { request, telemetry } from '../helpers/http.js';
import type { SvcError } from '../helpers/errors.js';
import { defined, requireString, toSnakeCase } from '../helpers/options.js';

/** Parameters /authorize knows; others are still sent (the server ignores them) but warned about. */
const AUTHORIZE_PARAMETERS = new Set([
  'connection', 'connection_scope', 'auth0Client', 'owp', 'device', 'realm', 'organization', 'invitation', 'protocol', '_csrf', '_intstate',
  'login_ticket', 'client_id', 'response_type', 'response_mode', 'redirect_uri', 'audience', 'scope', 'state', 'nonce', 'display', 'prompt',
  'screen_hint', 'max_age', 'ui_locales', 'claims_locales', 'id_token_hint', 'login_hint', 'acr_values', 'claims', 'registration', 'request',
  'request_uri', 'code_challenge', 'code_challenge_method', 'access_type',
]);
/** Options that configure the library and never go on the wire. */
const LOCAL_OPTIONS = new Set(['username', 'popupOptions', 'domain', 'tenant', 'timeout', 'appState', 'leeway', 'maxAge', 'popupOrigin', 'onRedirecting', '_disableDeprecationWarnings', 'hash', 'password', 'email', 'phoneNumber', 'verificationCode', 'credentialType', 'otp']);

export interface AuthenticationOptions {
  baseUrl: string;
  clientID: string;
  disableWarnings: boolean;
}

function query(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v === null ? '' : String(v))}`)
    .join('&');
}

/** What getSSOData answers (auth0-js's shape). */
export interface SsoData {
  sso: boolean;
  sessionClients?: string[];
  lastUsedClientID?: string;
  lastUsedUserID?: string;
  lastUsedUsername?: string;
  lastUsedConnection?: { name?: string; strategy?: string };
}

export class Authentication {
  /** Set by WebAuth: off the hosted pages getSSOData is a checkSession (auth0-js v10 does the same). */
  ssoDataFromSession?: (callback: (error: SvcError | null, data?: SsoData) => void) => void;

  constructor(private readonly options: AuthenticationOptions) {}

  /**
   * The browser's SSO state. On the server's own pages (the hosted login page): GET /user/ssodata with the
   * session cookie. Elsewhere: a silent checkSession for `openid profile email` (library rule 9 there).
   * `withActiveDirectories` is accepted for compatibility and ignored, as in auth0-js.
   */
  getSSOData(withActiveDirectories: boolean | ((error: SvcError | null, data?: SsoData) => void), callback?: (error: SvcError | null, data?: SsoData) => void): void {
    const cb = (typeof withActiveDirectories === 'function' ? withActiveDirectories : callback)!;
    if (typeof cb !== 'function') throw new Error('cb parameter is not valid');
    if (window.location.host === new URL(this.options.baseUrl).host || !this.ssoDataFromSession) {
      const url = `${this.options.baseUrl}/user/ssodata?${query({ client_id: this.options.clientID })}`;
      request<SsoData>(url, { method: 'GET', credentials: true, noHeaders: true, camelCase: true }).then(
        (data) => cb(null, data),
        (error: SvcError) => cb(error),
      );
      return;
    }
    this.ssoDataFromSession(cb);
  }

  /** The /authorize URL for `options` (camelCase keys are sent snake_case; `state` is never generated here). */
  buildAuthorizeUrl(options: Record<string, unknown>): string {
    const params: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(defined({ clientID: this.options.clientID, ...options }))) {
      if (LOCAL_OPTIONS.has(key)) continue;
      params[key === 'auth0Client' ? key : toSnakeCase(key)] = Array.isArray(value) ? value.join(',') : value;
    }
    requireString(params.client_id, 'clientID');
    requireString(params.response_type, 'responseType');
    const types = String(params.response_type).split(' ');
    if (types.includes('id_token') && !types.includes('code') && !params.nonce) throw new Error('nonce option is required');
    params.auth0Client = telemetry();
    const unknown = Object.keys(params).filter((k) => !AUTHORIZE_PARAMETERS.has(k));
    if (unknown.length > 0 && !this.options.disableWarnings) console.warn(`Following parameters are not allowed on the /authorize endpoint: [${unknown.join(',')}]`);
    return `${this.options.baseUrl}/authorize?${query(params)}`;
  }

  /** The /v2/logout URL: `returnTo` keeps its camelCase name, `federated` is a bare flag. */
  buildLogoutUrl(options: { returnTo?: string; clientID?: string; federated?: boolean | string } = {}): string {
    const params = query(defined({ client_id: options.clientID ?? this.options.clientID, returnTo: options.returnTo, auth0Client: telemetry() }));
    const federated = options.federated !== undefined && options.federated !== false && options.federated !== 'false';
    return `${this.options.baseUrl}/v2/logout?${params}${federated ? '&federated' : ''}`;
  }

  /** GET /userinfo with the access token; the profile as the server sent it. */
  userInfo(accessToken: string, callback: (error: SvcError | null, user?: Record<string, unknown>) => void): void {
    requireString(accessToken, 'accessToken');
    request<Record<string, unknown>>(`${this.options.baseUrl}/userinfo`, { method: 'GET', token: accessToken }).then(
      (user) => callback(null, user),
      (error: SvcError) => callback(error),
    );
  }

  /** POST to an Authentication API path with the client id added. */
  post<T>(path: string, body: Record<string, unknown>, extra: { camelCase?: boolean; credentials?: boolean; forceLegacyError?: boolean; headers?: Record<string, string> } = {}): Promise<T> {
    return request<T>(`${this.options.baseUrl}${path}`, { method: 'POST', body: defined({ client_id: this.options.clientID, ...body }), ...extra });
  }
}
