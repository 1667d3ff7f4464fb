/**
 * `svc.WebAuth`: browser-side sign-in against a Gatehouse server, with the options, operations, callbacks and
 * error shapes of auth0-js v10's WebAuth (the contract's client library part; reference auth0js-v10-protocol).
 */
import { Authentication, type SsoData } from '../authentication/client.js';
import { hashError, errorFromBody, type Callback, type SvcError } from '../helpers/errors.js';
import { withCallback } from '../helpers/http.js';
import { validateIdToken, type IdTokenPayload } from '../helpers/id-token.js';
import { camelKeys, defined, optionalString, normalizeDomain, requireOptions, requireString, toSnakeCase } from '../helpers/options.js';
import { randomString } from '../helpers/random.js';
import { readValue, storeTransaction, storeValue, takeTransaction, takeValue } from '../helpers/transactions.js';
import { awaitPopup, openPopup, POPUP_MESSAGE, type PopupMessage } from './popup.js';
import { runWebMessage } from './web-message.js';

export interface WebAuthOptions {
  /** The server: a host (`login.example.com` → https) or, for local use, a URL (`http://localhost:3000`). */
  domain: string;
  clientID: string;
  redirectUri?: string;
  /** Default `openid profile email`. */
  scope?: string;
  audience?: string;
  /** Default `token`, or `code` when a redirectUri is given. */
  responseType?: string;
  responseMode?: 'query' | 'fragment' | 'form_post';
  /** Seconds of clock skew allowed when checking ID tokens (default 60; 0 counts as 60; at most 300). */
  leeway?: number;
  /** Seconds: when set, ID tokens must carry an `auth_time` no older than this. */
  maxAge?: number;
  _disableDeprecationWarnings?: boolean;
}

export interface AuthorizeOptions {
  audience?: string;
  connection?: string;
  scope?: string;
  responseType?: string;
  responseMode?: string;
  clientID?: string;
  redirectUri?: string;
  state?: string;
  nonce?: string;
  prompt?: string;
  appState?: unknown;
  [parameter: string]: unknown;
}

export interface AuthResult {
  accessToken: string | null;
  idToken: string | null;
  idTokenPayload: IdTokenPayload | null;
  appState: unknown;
  refreshToken: string | null;
  state: string | null;
  expiresIn: number | null;
  tokenType: string | null;
  scope: string | null;
}

const DEFAULT_SCOPE = 'openid profile email';
/** Where the last connection and user signed in from this browser are kept for getSSOData (a day). */
const SSO_DATA_KEY = 'svc.ssodata';
const SSO_DATA_MINUTES = 24 * 60;
const CONSENT_FOR_SSO_DATA = 'Consent required. When using `getSSOData`, the user has to be authenticated with the following scope: `openid profile email`.';

/** A page served from the developer's own machine (rule 9), where consent cannot be assumed. */
function onLocalhost(): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(window.location.hostname);
}
const CREDENTIAL_PASSWORD_REALM = 'http://auth0.com/oauth/grant-type/password-realm';
const CREDENTIAL_PASSWORDLESS_OTP = 'http://auth0.com/oauth/grant-type/passwordless/otp';

export class WebAuth {
  readonly baseOptions: Readonly<WebAuthOptions>;
  /** The server's base URL, e.g. `https://login.example.com` (never a trailing slash). */
  readonly baseUrl: string;
  /** What ID tokens must carry as `iss`: the base URL plus `/`. */
  readonly issuer: string;
  readonly client: Authentication;
  readonly popup: { authorize: (options: AuthorizeOptions, callback: Callback<AuthResult>) => void; callback: (options?: { hash?: string }) => void };

  constructor(options: WebAuthOptions) {
    const opts = requireOptions(options);
    this.baseUrl = normalizeDomain(opts.domain);
    requireString(opts.clientID, 'clientID');
    for (const name of ['redirectUri', 'scope', 'audience', 'responseType', 'responseMode'] as const) optionalString(opts[name], name);
    if (opts.leeway !== undefined && (typeof opts.leeway !== 'number' || opts.leeway < 0 || opts.leeway > 300)) {
      throw new Error('The leeway should be positive and lower than five minutes.');
    }
    this.issuer = `${this.baseUrl}/`;
    this.baseOptions = Object.freeze({ ...opts });
    this.client = new Authentication({ baseUrl: this.baseUrl, clientID: opts.clientID, disableWarnings: opts._disableDeprecationWarnings === true });
    this.popup = {
      authorize: (o, cb) => this.popupAuthorize(o, cb),
      callback: (o) => this.popupCallback(o),
    };
    this.client.ssoDataFromSession = (cb) => this.ssoDataFromSession(cb);
  }

  /** After a validated sign-in that named a connection: remember it and the user, for getSSOData. */
  private rememberSignIn(connection: string | undefined, result: AuthResult): void {
    const sub = result.idTokenPayload?.sub;
    if (connection && typeof sub === 'string') storeValue(SSO_DATA_KEY, JSON.stringify({ lastUsedConnection: connection, lastUsedSub: sub }), SSO_DATA_MINUTES);
  }

  /**
   * getSSOData off the hosted pages: checkSession for `openid profile email` with the last connection (5 s).
   * Rule 9: on localhost/127.0.0.1 an application whose scope lacks `openid profile email` gets consent_required,
   * and so does any page the server answers consent_required; either is also reported in the console there.
   */
  private ssoDataFromSession(callback: (error: SvcError | null, data?: SsoData) => void): void {
    let stored: { lastUsedConnection?: string; lastUsedSub?: string } = {};
    try {
      stored = JSON.parse(readValue(SSO_DATA_KEY) ?? '{}') as typeof stored;
    } catch {
      stored = {};
    }
    const consentRequired = (error: SvcError) => {
      const described = { ...error, error: 'consent_required', code: 'consent_required', error_description: CONSENT_FOR_SSO_DATA, description: CONSENT_FOR_SSO_DATA };
      if (onLocalhost()) console.error(`consent_required: ${CONSENT_FOR_SSO_DATA}`);
      callback(described, { sso: false });
    };
    const granted = (this.baseOptions.scope ?? DEFAULT_SCOPE).split(' ');
    if (onLocalhost() && !['openid', 'profile', 'email'].every((s) => granted.includes(s))) {
      return consentRequired({ original: { error: 'consent_required' }, code: 'consent_required', description: CONSENT_FOR_SSO_DATA });
    }
    this.checkSession({ responseType: 'token id_token', scope: DEFAULT_SCOPE, ...(stored.lastUsedConnection ? { connection: stored.lastUsedConnection } : {}), timeout: 5000 }, (error, result) => {
      if (error) {
        if (error.error === 'login_required') return callback(null, { sso: false });
        if (error.error === 'consent_required') return consentRequired(error);
        return callback(error, { sso: false });
      }
      const payload = result!.idTokenPayload;
      if (!payload || (stored.lastUsedSub && stored.lastUsedSub !== payload.sub)) return callback(null, { sso: false });
      const clientId = this.baseOptions.clientID;
      const username = (payload.email ?? payload.name) as string | undefined;
      callback(null, {
        lastUsedConnection: { ...(stored.lastUsedConnection ? { name: stored.lastUsedConnection } : {}) },
        lastUsedUserID: payload.sub,
        ...(username !== undefined ? { lastUsedUsername: username } : {}),
        lastUsedClientID: clientId,
        sessionClients: [clientId],
        sso: true,
      });
    });
  }

  private get defaultResponseType(): string {
    return this.baseOptions.responseType ?? (this.baseOptions.redirectUri ? 'code' : 'token');
  }

  /** The request parameters of a redirect flow: constructor defaults, then the call's options. */
  private authorizeParams(options: AuthorizeOptions, extra: { defaultScope: boolean }): AuthorizeOptions {
    const base = this.baseOptions;
    const params: AuthorizeOptions = {
      ...defined({ clientID: base.clientID, responseType: this.defaultResponseType, responseMode: base.responseMode, redirectUri: base.redirectUri, scope: base.scope, audience: base.audience }),
      ...defined(options),
    };
    if (extra.defaultScope && !params.scope) params.scope = DEFAULT_SCOPE;
    requireString(params.responseType, 'responseType');
    requireString(params.redirectUri, 'redirectUri');
    return params;
  }

  /** Library rule 2: state always, nonce when an ID token is asked for; kept for parseHash to read back. */
  private startTransaction(params: AuthorizeOptions): AuthorizeOptions {
    const state = params.state ?? randomString();
    const wantsIdToken = String(params.responseType).split(' ').includes('id_token');
    const nonce = params.nonce ?? (wantsIdToken ? randomString() : undefined);
    const connection = (params.realm as string | undefined) ?? params.connection;
    storeTransaction(defined({ state, nonce, appState: params.appState, lastUsedConnection: connection }) as { state: string });
    return { ...params, state, ...(nonce !== undefined ? { nonce } : {}) };
  }

  /** Redirects the browser to /authorize (hosted login, or straight to `connection`). */
  authorize(options: AuthorizeOptions = {}): void {
    const params = this.startTransaction(this.authorizeParams(options, { defaultScope: true }));
    window.location.assign(this.client.buildAuthorizeUrl(params));
  }

  /** Parses the fragment the server redirected to; validates the ID token, state and nonce. */
  parseHash(options: { hash?: string; state?: string; nonce?: string } | Callback<AuthResult | null>, callback?: Callback<AuthResult | null>): void {
    const cb = (typeof options === 'function' ? options : callback)!;
    const opts = typeof options === 'function' ? {} : (options ?? {});
    const hash = (opts.hash ?? window.location.hash).replace(/^#\/?/, '');
    const values = new URLSearchParams(hash);
    const get = (name: string) => values.get(name) ?? undefined;
    const state = get('state');
    if (get('error')) {
      takeTransaction(state);
      return cb(hashError(get('error')!, get('error_description') ?? '', state));
    }
    if (!get('access_token') && !get('id_token') && !get('refresh_token')) return cb(null, null);
    const responseType = this.baseOptions.responseType ?? '';
    for (const [type, field] of [['token', 'access_token'], ['id_token', 'id_token']] as const) {
      if (responseType.split(' ').includes(type) && !get(field)) {
        return cb(hashError('invalid_hash', `response_type contains \`${type}\`, but the parsed hash does not contain an \`${field}\` property`));
      }
    }
    const transaction = takeTransaction(state);
    const expectedState = opts.state ?? transaction?.state;
    if (state !== expectedState || state === undefined) return cb(hashError('invalid_token', '`state` does not match.'));
    this.validateResult(values, { nonce: opts.nonce ?? transaction?.nonce, appState: opts.state ?? transaction?.appState }).then(
      (result) => {
        this.rememberSignIn(transaction?.lastUsedConnection, result);
        cb(null, result);
      },
      (error: SvcError) => cb(error),
    );
  }

  private async validateResult(values: URLSearchParams | Map<string, string>, context: { nonce: string | undefined; appState: unknown }): Promise<AuthResult> {
    const get = (name: string) => values.get(name) ?? null;
    const idToken = get('id_token');
    const accessToken = get('access_token');
    let idTokenPayload: IdTokenPayload | null = null;
    if (idToken) {
      idTokenPayload = await validateIdToken(idToken, {
        issuer: this.issuer,
        audience: this.baseOptions.clientID,
        jwksUri: `${this.baseUrl}/.well-known/jwks.json`,
        leeway: this.baseOptions.leeway ?? 60,
        ...(context.nonce !== undefined ? { nonce: context.nonce } : {}),
        ...(this.baseOptions.maxAge !== undefined ? { maxAge: this.baseOptions.maxAge } : {}),
        ...(accessToken ? { accessToken } : {}),
      });
    }
    const expiresIn = get('expires_in');
    return {
      accessToken,
      idToken,
      idTokenPayload,
      appState: context.appState ?? null,
      refreshToken: get('refresh_token'),
      state: get('state'),
      expiresIn: expiresIn === null ? null : Number.parseInt(expiresIn, 10),
      tokenType: get('token_type'),
      scope: get('scope'),
    };
  }

  /** Silent authentication: prompt=none in a hidden iframe answered by web_message (library rule 3). */
  checkSession(options: AuthorizeOptions & { timeout?: number }, callback: Callback<AuthResult>): void {
    const fail = (error: string, description: string) => callback({ original: { error, error_description: description }, code: error, description, error, error_description: description });
    const merged: AuthorizeOptions = {
      ...defined({ clientID: this.baseOptions.clientID, responseType: this.defaultResponseType, redirectUri: this.baseOptions.redirectUri, scope: this.baseOptions.scope ?? DEFAULT_SCOPE, audience: this.baseOptions.audience }),
      ...defined(options ?? {}),
    };
    if (merged.responseType === 'code') return callback({ error: 'error', error_description: "responseType can't be `code`", code: 'error', description: "responseType can't be `code`" });
    if (!merged.redirectUri) return callback({ error: 'error', error_description: 'redirectUri can\'t be empty', code: 'error', description: "redirectUri can't be empty" });
    const redirectOrigin = new URL(String(merged.redirectUri), window.location.href).origin;
    if (redirectOrigin !== window.location.origin) {
      return fail('origin_mismatch', `The redirectUri's origin (${redirectOrigin}) should match the window's origin (${window.location.origin}).`);
    }
    // A caller-supplied nonce is checked against the token directly (rule 2); otherwise one is generated and stored.
    const callerNonce = options?.nonce;
    const params = callerNonce ? { ...merged, state: merged.state ?? randomString() } : this.startTransaction(merged);
    const { timeout = 60_000, ...authorize } = { ...params, responseMode: 'web_message', prompt: 'none' };
    const url = this.client.buildAuthorizeUrl(authorize);
    runWebMessage(url, new URL(this.baseUrl).origin, String(params.state), timeout).then(
      async (response) => {
        if (response === 'timeout') {
          takeTransaction(String(params.state));
          return fail('timeout', 'Timeout during executing web_message communication');
        }
        if (response.error) {
          takeTransaction(response.state);
          return callback(errorFromBody(response, { forceLegacyError: true }));
        }
        const transaction = callerNonce ? undefined : takeTransaction(response.state);
        const values = new Map(Object.entries(response).filter((e): e is [string, string] => typeof e[1] === 'string'));
        let result: AuthResult;
        try {
          result = await this.validateResult(values, { nonce: callerNonce ?? transaction?.nonce, appState: response.state });
        } catch (error) {
          const e = error as SvcError;
          return callback({ ...e, error: 'invalid_token', error_description: e.errorDescription, code: 'invalid_token', description: e.errorDescription });
        }
        this.rememberSignIn(transaction?.lastUsedConnection, result);
        callback(null, result);
      },
      (error: unknown) => fail('error', String(error)),
    );
  }

  private popupAuthorize(options: AuthorizeOptions, callback: Callback<AuthResult>): void {
    // The server's own hosted pages (/u/…, /authorize…) must not open login popups; an app served from the
    // same origin (the demo at /demo) may.
    if (window.location.origin === new URL(this.baseUrl).origin && /^\/(u|authorize|login)(\/|$)/.test(window.location.pathname)) {
      throw new Error('popup.authorize cannot be used within hosted login pages');
    }
    // Opened first, synchronously inside the click that called us, so that popup blockers allow it.
    const popup = openPopup(options.popupOptions as { width?: number; height?: number } | undefined);
    let params: AuthorizeOptions;
    try {
      params = this.startTransaction(this.authorizeParams(options, { defaultScope: true }));
    } catch (error) {
      popup?.close();
      throw error;
    }
    if (!popup) return callback({ original: 'Unable to open the popup window', code: null, description: 'Unable to open the popup window' });
    popup.location.href = this.client.buildAuthorizeUrl(params);
    const expectedOrigin = new URL(String(params.redirectUri), window.location.href).origin;
    awaitPopup(popup, expectedOrigin).then((message) => {
      if (message.error) return callback(message.error);
      const result = message.result as AuthResult;
      callback(null, { ...(camelKeys(result) as AuthResult), ...result });
    });
  }

  /** On the redirect URI's page inside the popup: validate the result and hand it to the opener. */
  private popupCallback(options: { hash?: string } = {}): void {
    const opener = window.opener as Window | null;
    if (!opener) throw new Error('popup.callback must run in the popup opened by popup.authorize');
    const post = (message: Omit<PopupMessage, 'type'>) => opener.postMessage({ type: POPUP_MESSAGE, ...message }, window.location.origin);
    this.parseHash(options, (error, result) => (error ? post({ error }) : post({ result })));
  }

  /** Embedded login for database connections: /co/authenticate, then /authorize with the ticket. */
  login(options: { username?: string; email?: string; password: string; realm: string } & AuthorizeOptions, callback: Callback<never>): void {
    const identifier = options.username ?? options.email;
    if ((options.username === undefined) === (options.email === undefined)) throw new Error('exactly one of username or email is required');
    requireString(options.password, 'password');
    requireString(options.realm, 'realm');
    this.crossOriginLogin(options, { username: identifier, password: options.password, realm: options.realm, credential_type: CREDENTIAL_PASSWORD_REALM }, callback);
  }

  private crossOriginLogin(options: AuthorizeOptions, body: Record<string, unknown>, callback: Callback<never>): void {
    const params = this.startTransaction(this.authorizeParams(options, { defaultScope: true }));
    this.client
      .post<{ login_ticket: string; co_verifier: string; co_id: string }>('/co/authenticate', body, { credentials: true, forceLegacyError: true })
      .then(
        (ticket) => {
          storeValue(`co/verifier/${encodeURIComponent(this.baseUrl)}/${encodeURIComponent(ticket.co_id)}`, ticket.co_verifier, 15);
          const { username: _u, email: _e, password: _p, otp: _o, verificationCode: _v, phoneNumber: _n, ...rest } = params;
          window.location.assign(this.client.buildAuthorizeUrl({ ...rest, realm: body.realm, loginTicket: ticket.login_ticket }));
        },
        (error: SvcError) => callback(error),
      );
  }

  /** On the client's cross-origin verification page: answers the server's request for the verifier (§5.4). */
  crossOriginVerification(): void {
    const origin = new URLSearchParams(window.location.hash.replace(/^#/, '')).get('origin');
    if (!origin) return;
    const parent = window.parent;
    window.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { type?: string; request?: { id?: string } } | null;
      if (event.origin !== origin || !data || data.type !== 'co_verifier_request') return;
      const verifier = takeValue(`co/verifier/${encodeURIComponent(event.origin)}/${encodeURIComponent(String(data.request?.id ?? ''))}`) ?? '';
      (event.source as Window).postMessage({ type: 'co_verifier_response', response: { verifier } }, event.origin);
    });
    parent.postMessage({ type: 'ready' }, origin);
  }

  /** Sends a passwordless code or link (`send` defaults to a link). */
  passwordlessStart(options: { connection: string; send?: 'code' | 'link' | null; email?: string; phoneNumber?: string; authParams?: Record<string, unknown>; xRequestLanguage?: string }, callback: Callback<Record<string, unknown>>): Promise<Record<string, unknown>> {
    requireString(options.connection, 'connection');
    if ((options.email === undefined) === (options.phoneNumber === undefined)) throw new Error('exactly one of email or phoneNumber is required');
    const params = this.startTransaction(this.authorizeParams((options.authParams as AuthorizeOptions) ?? {}, { defaultScope: false }));
    const authParams: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(defined({ responseType: params.responseType, redirectUri: params.redirectUri, scope: params.scope, state: params.state, nonce: params.nonce, responseMode: params.responseMode, audience: params.audience }))) {
      authParams[toSnakeCase(key)] = value;
    }
    const body = defined({ connection: options.connection, send: options.send ?? 'link', email: options.email?.trim(), phone_number: options.phoneNumber?.trim(), authParams });
    const headers = options.xRequestLanguage ? { 'X-Request-Language': options.xRequestLanguage } : undefined;
    return withCallback(this.client.post<Record<string, unknown>>('/passwordless/start', body, { camelCase: true, ...(headers ? { headers } : {}) }), callback);
  }

  /** Completes passwordless with the code: /co/authenticate with the OTP, then /authorize with the ticket. */
  passwordlessLogin(options: { connection: string; verificationCode: string; email?: string; phoneNumber?: string } & AuthorizeOptions, callback: Callback<never>): void {
    requireString(options.connection, 'connection');
    requireString(options.verificationCode, 'verificationCode');
    if ((options.email === undefined) === (options.phoneNumber === undefined)) throw new Error('exactly one of email or phoneNumber is required');
    const username = (options.email ?? options.phoneNumber)!.trim();
    this.crossOriginLogin(options, { username, otp: options.verificationCode, realm: options.connection, credential_type: CREDENTIAL_PASSWORDLESS_OTP }, callback);
  }

  /** Ends the session at the server and returns to `returnTo` (rule 1: an allowed logout URL). */
  logout(options: { returnTo?: string; clientID?: string; federated?: boolean } = {}): void {
    window.location.assign(this.client.buildLogoutUrl(options));
  }

  /** Creates a database-connection user (no login). */
  signup(options: { email: string; password: string; connection: string; username?: string; user_metadata?: Record<string, unknown>; userMetadata?: Record<string, unknown>; [field: string]: unknown }, callback: Callback<Record<string, unknown>>): Promise<Record<string, unknown>> {
    requireString(options.connection, 'connection');
    requireString(options.email, 'email');
    requireString(options.password, 'password');
    const { scope: _scope, user_metadata, userMetadata, ...rest } = options;
    const body: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(rest)) body[toSnakeCase(key)] = typeof value === 'string' && (key === 'email' || key === 'username') ? value.trim() : value;
    const metadata = userMetadata ?? user_metadata;
    if (metadata !== undefined) body.user_metadata = metadata;
    return withCallback(this.client.post<Record<string, unknown>>('/dbconnections/signup', body, { camelCase: true }), callback);
  }

  /** Asks the server to email a password-reset link. */
  changePassword(options: { connection: string; email: string }, callback: Callback<string>): Promise<string> {
    requireString(options.connection, 'connection');
    requireString(options.email, 'email');
    return withCallback(this.client.post<string>('/dbconnections/change_password', { email: options.email.trim(), connection: options.connection }), callback);
  }
}
