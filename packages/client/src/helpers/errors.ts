/**
 * The library's errors, in the shapes auth0-js v10 hands to callbacks (reference §1.4), so code written for
 * it reads ours the same way:
 *  - HTTP errors: `{original, statusCode, statusText, code, description, name?, policy?}` where `code` is the
 *    body's `code`/`error`/`error_code` and `description` its `error_description`/`description`;
 *  - with `forceLegacyError` (checkSession, login): also `error` and `error_description`;
 *  - redirect results (parseHash): `{error, errorDescription, state?}`.
 */
export interface SvcError {
  original?: unknown;
  statusCode?: number;
  statusText?: string;
  code: string | number | null;
  description: unknown;
  name?: string;
  policy?: string;
  error?: string | number | null;
  error_description?: unknown;
  errorDescription?: string;
  state?: string;
}

export type Callback<T> = (error: SvcError | null, result?: T) => void;

function pick(body: Record<string, unknown>, keys: string[]): unknown {
  for (const key of keys) if (body[key] !== undefined && body[key] !== null) return body[key];
  return null;
}

/** Masks a password wherever the original request is kept on the error. */
function masked(body: unknown): unknown {
  if (body && typeof body === 'object' && 'password' in body) return { ...(body as Record<string, unknown>), password: '*****' };
  return body;
}

export function errorFromBody(body: unknown, extra: { statusCode?: number; statusText?: string; forceLegacyError?: boolean } = {}): SvcError {
  const object = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const source = object.err && typeof object.err === 'object' ? (object.err as Record<string, unknown>) : object;
  const code = (pick(source, ['code', 'error', 'error_code', 'status']) as string | number | null) ?? extra.statusCode ?? null;
  const description = pick(source, ['errorDescription', 'error_description', 'description', 'error', 'details', 'err']);
  const error: SvcError = { original: masked(body), code, description };
  if (extra.statusCode !== undefined) error.statusCode = extra.statusCode;
  if (extra.statusText !== undefined) error.statusText = extra.statusText;
  if (typeof source.name === 'string') error.name = source.name;
  else if (typeof body !== 'object' || body === null) error.name = 'Error';
  if (typeof source.policy === 'string') error.policy = source.policy;
  if (extra.forceLegacyError) {
    error.error = code;
    error.error_description = description;
  }
  return error;
}

/** A redirect-result or token-validation error: `{error, errorDescription}`. */
export function hashError(error: string, errorDescription: string, state?: string): SvcError {
  return { error, errorDescription, code: error, description: errorDescription, ...(state !== undefined ? { state } : {}) };
}
