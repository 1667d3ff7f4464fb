/**
 * JSON over fetch with the headers the server's CORS policy expects (`Content-Type`, `Auth0-Client` telemetry,
 * `Authorization` where given). A 2xx answer resolves with the parsed body (text bodies as strings); anything
 * else rejects with an SvcError in the §1.4 shape.
 */
import { camelKeys } from './options.js';
import { errorFromBody, type SvcError } from './errors.js';
import { VERSION } from '../version.js';

/** `Auth0-Client` / `auth0Client`: base64url of the library's name and version (informational for the server). */
export function telemetry(): string {
  return btoa(JSON.stringify({ name: 'svc', version: VERSION })).replace(/\+/g, '-').replace(/\//g, '_');
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PATCH';
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  /** Send cookies cross-origin: only /co/authenticate needs it. */
  credentials?: boolean;
  /** camelCase the keys of a JSON answer (auth0-js does for most calls). */
  camelCase?: boolean;
  forceLegacyError?: boolean;
  /** Neither Content-Type nor Auth0-Client (a simple request, as auth0-js sends GET /user/ssodata). */
  noHeaders?: boolean;
}

export async function request<T>(url: string, options: RequestOptions): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method,
      headers: {
        ...(options.noHeaders ? {} : { 'Content-Type': 'application/json', 'Auth0-Client': telemetry() }),
        ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      credentials: options.credentials ? 'include' : 'same-origin',
    });
  } catch (cause) {
    const error: SvcError = { original: cause, code: options.forceLegacyError ? 'request_error' : null, description: String(cause) };
    if (options.forceLegacyError) {
      error.error = 'request_error';
      error.error_description = String(cause);
    }
    throw error;
  }
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  let body: unknown = text;
  if (/[/+]json/.test(type) && text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!response.ok) {
    throw errorFromBody(typeof body === 'object' ? body : undefined, {
      statusCode: response.status,
      statusText: response.statusText,
      ...(options.forceLegacyError ? { forceLegacyError: true } : {}),
    });
  }
  return (options.camelCase && typeof body === 'object' ? camelKeys(body) : body) as T;
}

/** Runs a promise-returning call and reports to a node-style callback (and returns the promise too). */
export function withCallback<T>(promise: Promise<T>, callback?: (error: SvcError | null, result?: T) => void): Promise<T> {
  if (callback) {
    promise.then(
      (result) => callback(null, result),
      (error: SvcError) => callback(error),
    );
  }
  return promise;
}
