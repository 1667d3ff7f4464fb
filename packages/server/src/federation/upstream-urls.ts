/**
 * Upstream endpoints must be HTTPS. Plain HTTP is accepted only on the loopback interface (a provider on this
 * machine, as in development and the tests), where nobody on the network can read or alter the traffic.
 */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/** The problem with the URL in `field`, if any. */
export function checkUpstreamUrl(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return `options.${field} must be a URL`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `options.${field} must be an absolute URL`;
  }
  if (url.protocol !== 'https:' && !isLoopbackHttp(url)) return `options.${field} must be an https URL (http only on localhost)`;
  if (url.username || url.password) return `options.${field} must not carry credentials`;
  return undefined;
}

/** Seconds an upstream may take to answer before the sign-in ends with `temporarily_unavailable` (issue #11). */
export const UPSTREAM_TIMEOUT_SECONDS = 10;
