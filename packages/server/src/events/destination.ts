/**
 * The webhook destination: where a stream may point (checked when it is configured) and one POST of a
 * CloudEvent (checked again when connecting, against the addresses the name resolves to then, so a name that
 * starts resolving to a private address is still refused). Redirects are never followed.
 *
 * Without the tenant setting `allow_insecure_webhooks`, only https endpoints on public addresses are allowed.
 * With it (development), https may also reach loopback and private addresses, and plain http is allowed only to
 * loopback and private (RFC 1918, unique-local) addresses: never to a public address, where the events and the
 * stream's credential would cross the internet in clear, and never to link-local ones (cloud metadata services
 * answer plain http there). Both are checked when the stream is configured (names resolved then) and again on
 * every connection, against the addresses the name resolves to at that moment.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { BlockList } from 'node:net';

/** Addresses a webhook must not reach unless the tenant allows insecure webhooks (SSRF). */
const RESTRICTED = new BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  RESTRICTED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  RESTRICTED.addSubnet(prefix, bits, 'ipv6');
}

export function isRestrictedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return RESTRICTED.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return RESTRICTED.check(mapped, 'ipv4');
  return RESTRICTED.check(address, 'ipv6');
}

/** Where plain http may go when the tenant allows insecure webhooks: loopback and private networks only. */
const PLAIN_HTTP_ALLOWED = new BlockList();
for (const [prefix, bits] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  PLAIN_HTTP_ALLOWED.addSubnet(prefix, bits, 'ipv4');
}
PLAIN_HTTP_ALLOWED.addSubnet('::1', 128, 'ipv6');
PLAIN_HTTP_ALLOWED.addSubnet('fc00::', 7, 'ipv6');

/** True for a loopback or private address, the only ones plain http may reach. */
export function isPlainHttpAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return PLAIN_HTTP_ALLOWED.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PLAIN_HTTP_ALLOWED.check(mapped, 'ipv4');
  return PLAIN_HTTP_ALLOWED.check(address, 'ipv6');
}

const PLAIN_HTTP_PUBLIC =
  'webhook_endpoint: plain http is allowed (with allow_insecure_webhooks) only to loopback or private addresses; use https for any other address';

/** Resolves a name to all its addresses (dns.lookup, as connections do); replaceable where DNS is not real. */
export type Resolve = (hostname: string) => Promise<dns.LookupAddress[]>;
const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true });

function isLocalName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/** Why `endpoint` may not be a webhook endpoint of a tenant with this setting, or undefined when it may. */
export function endpointProblem(endpoint: string, allowInsecure: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'webhook_endpoint must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'webhook_endpoint must be an https URL';
  if (url.protocol === 'http:' && !allowInsecure) {
    return 'webhook_endpoint must be an https URL (http is allowed only when the tenant setting allow_insecure_webhooks is on)';
  }
  // Credentials in the URL would end up in logs and listings; the authorization settings hold them instead.
  if (url.username || url.password) return 'webhook_endpoint must not contain credentials; use webhook_authorization';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowInsecure && (isLocalName(host) || isRestrictedAddress(host))) {
    return 'webhook_endpoint points to a loopback, private or link-local address (allowed only when the tenant setting allow_insecure_webhooks is on)';
  }
  if (url.protocol === 'http:' && net.isIP(host) !== 0 && !isPlainHttpAddress(host)) return PLAIN_HTTP_PUBLIC;
  return undefined;
}

/**
 * endpointProblem, plus (for plain http to a name) where the name resolves now: every address must be loopback
 * or private. A name that does not resolve is refused too, since nothing shows it stays off the internet.
 */
export async function resolvedEndpointProblem(endpoint: string, allowInsecure: boolean, resolve: Resolve = systemResolve): Promise<string | undefined> {
  const problem = endpointProblem(endpoint, allowInsecure);
  if (problem) return problem;
  const url = new URL(endpoint);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'http:' || net.isIP(host) !== 0) return undefined;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return `${PLAIN_HTTP_PUBLIC} (${host} does not resolve here)`;
  }
  return addresses.length > 0 && addresses.every((a) => isPlainHttpAddress(a.address)) ? undefined : PLAIN_HTTP_PUBLIC;
}

export interface WebhookRequest {
  endpoint: string;
  headers: Record<string, string>;
  body: string;
  allowInsecure: boolean;
  timeoutMs: number;
  /** Name resolution for the connection (dns.lookup unless given). */
  resolve?: Resolve;
}

export interface AttemptOutcome {
  ok: boolean;
  /** The receiver's status, when it answered. */
  statusCode?: number;
  /** Why it failed; never contains a credential. */
  errorMessage?: string;
  /** False when trying again cannot help (a 4xx other than 408/429, a refused endpoint). */
  retryable: boolean;
  /** From the receiver's Retry-After. */
  retryAfterMs?: number;
  durationMs: number;
}

// Separate pools by setting, so a connection opened while a tenant allowed insecure webhooks is never reused
// for a tenant (or a moment) that does not.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
  httpsInsecure: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

class RefusedAddress extends Error {}

/**
 * Resolves like dns.lookup, keeping only the addresses this connection may reach: public ones without
 * allow_insecure_webhooks; with it, any over https, and only loopback or private ones over plain http.
 */
function guardedLookup(allowInsecure: boolean, plainHttp: boolean, resolve: Resolve): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const candidates = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        const usable = candidates.filter((a) => (plainHttp ? isPlainHttpAddress(a.address) : allowInsecure || !isRestrictedAddress(a.address)));
        const first = usable[0];
        if (!first) {
          const why = plainHttp
            ? `${hostname} resolves to a public address, which plain http may not reach; use https`
            : `${hostname} resolves to a loopback, private or link-local address`;
          return callback(new RefusedAddress(why) as NodeJS.ErrnoException, '', 0);
        }
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof RefusedAddress) return `Refused: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return `Timed out after ${timeoutMs} ms`;
  return e.code ? `Connection failed (${e.code})` : `Connection failed (${e.message})`;
}

/** POSTs once; resolves with the outcome, never rejects. */
export function postWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const problem = endpointProblem(request.endpoint, request.allowInsecure);
  if (problem) return Promise.resolve({ ok: false, errorMessage: `Refused: ${problem}`, retryable: false, durationMs: 0 });
  const url = new URL(request.endpoint);
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = (secure ? https : http).request(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        agent: secure ? (request.allowInsecure ? agents.httpsInsecure : agents.https) : agents.http,
        lookup: guardedLookup(request.allowInsecure, !secure, request.resolve ?? systemResolve),
      },
      (res) => {
        const statusCode = res.statusCode ?? 0;
        // Drain (without keeping) the body so the connection can be reused.
        res.resume();
        res.once('end', () => {
          if (statusCode >= 200 && statusCode < 300) return finish({ ok: true, statusCode, retryable: false, durationMs: elapsed() });
          const retryable = !(statusCode >= 400 && statusCode < 500) || statusCode === 408 || statusCode === 429;
          const retryAfter = parseRetryAfter(res.headers['retry-after']);
          finish({
            ok: false,
            statusCode,
            errorMessage: `Received HTTP ${statusCode}${res.statusMessage ? ` ${res.statusMessage}` : ''}${statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : ''}`,
            retryable,
            ...(retryAfter !== undefined && { retryAfterMs: retryAfter }),
            durationMs: elapsed(),
          });
        });
        res.once('error', (err) => finish({ ok: false, errorMessage: describe(err, request.timeoutMs), retryable: true, durationMs: elapsed() }));
      },
    );
    const timer = setTimeout(() => {
      const err = new Error('timeout');
      err.name = 'TimeoutError';
      req.destroy(err);
      finish({ ok: false, errorMessage: describe(err, request.timeoutMs), retryable: true, durationMs: elapsed() });
    }, request.timeoutMs);
    req.once('error', (err) =>
      finish({ ok: false, errorMessage: describe(err, request.timeoutMs), retryable: !(err instanceof RefusedAddress), durationMs: elapsed() }),
    );
    req.end(request.body);
  });
}
