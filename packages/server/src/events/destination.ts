/**
 * The webhook destination: where a stream may point (checked when it is configured) and one POST of a
 * CloudEvent (checked again when connecting, against the addresses the name resolves to then, so a name that
 * starts resolving to a private address is still refused). Redirects are never followed.
 *
 * Without the tenant setting `allow_insecure_webhooks`, only https endpoints on public addresses are allowed;
 * with it, http and loopback or private addresses are allowed too (development).
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
  return undefined;
}

export interface WebhookRequest {
  endpoint: string;
  headers: Record<string, string>;
  body: string;
  allowInsecure: boolean;
  timeoutMs: number;
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

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

class RefusedAddress extends Error {}

/** Resolves like dns.lookup, but refuses restricted addresses unless allowed. */
function guardedLookup(allowInsecure: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const usable = allowInsecure ? addresses : addresses.filter((a) => !isRestrictedAddress(a.address));
      const first = usable[0];
      if (!first) {
        return callback(new RefusedAddress(`${hostname} resolves to a loopback, private or link-local address`) as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
      callback(null, first.address, first.family);
    });
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
        agent: secure ? agents.https : agents.http,
        lookup: guardedLookup(request.allowInsecure),
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
