/** Validation of constructor and method options: a clear thrown error, as auth0-js does for its assertions. */

export function requireOptions<T extends object>(options: T | undefined | null, what = 'options'): T {
  if (options === null || options === undefined || typeof options !== 'object') throw new Error(`${what} object is required`);
  return options;
}

export function requireString(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') throw new Error(`${name} option is required`);
  if (typeof value !== 'string') throw new Error(`${name} option must be a string`);
  if (value.trim() === '') throw new Error(`${name} option is required`);
  return value;
}

export function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`${name} option must be a string`);
  return value;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * `'example.com'` → `'https://example.com'`; `'http://localhost:3000/'` → `'http://localhost:3000'`.
 * Host names are lower-cased and default ports dropped (by `URL`); a path prefix is kept without its trailing
 * slash. Only http and https are accepted, and no credentials, query or fragment.
 */
export function normalizeDomain(value: unknown): string {
  const domain = requireString(value, 'domain').trim();
  const withScheme = SCHEME.test(domain) ? domain : `https://${domain}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`domain option is not a valid host name or URL: ${domain}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`domain option must use http or https, not ${url.protocol.slice(0, -1)}`);
  if (url.hostname === '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new Error(`domain option must be a host name or a plain http(s) URL: ${domain}`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** `{a: 1, b: undefined}` → `{a: 1}`. */
export function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] !== undefined && value[key] !== null) out[key] = value[key];
  return out;
}

export function toSnakeCase(key: string): string {
  if (key === 'clientID') return 'client_id';
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/ID$/, '_id').toLowerCase();
}

export function toCamelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Keys of an object (recursively) to camelCase: how auth0-js hands JSON bodies to callbacks. */
export function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) out[toCamelCase(key)] = camelKeys(inner);
  return out;
}
