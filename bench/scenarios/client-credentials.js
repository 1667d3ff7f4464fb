/**
 * POST /oauth/token, grant_type=client_credentials, client_secret_post: a machine client gets an RS256 JWT
 * access token. Measured in tokens per second on:
 *  - Gatehouse with 1 server process, then restarted on the same data dir with GATEHOUSE_WORKERS=2;
 *  - oidc-provider@9 (peers/oidc-provider.js): in-memory, one client, a default resource whose access tokens
 *    are RS256 JWTs, so it does the same work per token (authenticate, sign) in a well-known implementation;
 *  - this machine's raw RS256 signing rate (peers/raw-sign.js): the same JWT signed the way Gatehouse signs
 *    it, with the same number of signs in flight as there are connections, and no HTTP at all. That is the
 *    ceiling: each token costs one RSA 2048 signature, which is most of the work.
 *
 * Every token request asks for `scope=read:users`. The admin client (the only client a fresh Gatehouse has)
 * is granted every Management API scope, and a token carrying all of them has a scope claim of about 5 KB,
 * which is not what a machine client usually gets. The report says so, with both token sizes.
 *
 * Before each measured run, a pre-flight request must return 200 with an RS256 JWT access token (and, on
 * Gatehouse, the raised rate limit and the narrowed scope); after it, another one must still do so.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { adminCredentials } from '../lib/gatehouse.js';
import { measure } from '../lib/load.js';
import { describeOutput, freePort, startChild, stopChild, waitForHttp } from '../lib/processes.js';
import { failedRuns } from '../lib/report.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { HttpRequest, LoadSettings, Measurement } from '../lib/load.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'client_credentials';
/** The scope every measured token request asks for (see the module comment). */
const SCOPE = 'read:users';
/** Goals of the scenario (the issue that added it): Gatehouse's best row against each reference. */
const GOAL_VS_PEER = 2;
const GOAL_VS_RAW = 0.8;

const PEER_SCRIPT = fileURLToPath(new URL('../peers/oidc-provider.js', import.meta.url));
const RAW_SIGN_SCRIPT = fileURLToPath(new URL('../peers/raw-sign.js', import.meta.url));
const PEER_LABEL = `oidc-provider@${peerMajorVersion()}`;
const RAW_LABEL = 'raw RS256 signing (all cores)';

function peerMajorVersion() {
  try {
    const require = createRequire(import.meta.url);
    return /** @type {{ version: string }} */ (require('oidc-provider/package.json')).version.split('.')[0];
  } catch {
    return '?';
  }
}

/**
 * @typedef {object} IssuedToken
 * @property {Record<string, unknown>} header
 * @property {Record<string, unknown>} payload
 * @property {string} token
 * @property {number} expiresIn
 * @property {string | undefined} scope
 * @property {Headers} responseHeaders
 */

/** @param {string} part */
function decodePart(part) {
  return /** @type {Record<string, unknown>} */ (JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
}

/**
 * One token request, checked: 200, JSON, an access token that is a JWT signed with RS256.
 * @param {string} who  for messages
 * @param {string} url  the token endpoint
 * @param {HttpRequest} request
 * @returns {Promise<IssuedToken>}
 */
export async function requestToken(who, url, request) {
  const response = await fetch(url, {
    method: 'POST',
    headers: request.headers,
    body: request.body ?? null,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${NAME}: ${who} answered the token request with HTTP ${response.status}: ${text.slice(0, 500)}`);
  /** @type {{ access_token?: unknown, expires_in?: unknown, scope?: unknown }} */
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${NAME}: ${who} answered the token request with something other than JSON: ${text.slice(0, 200)}`);
  }
  const token = body.access_token;
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (typeof token !== 'string' || parts.length !== 3) {
    throw new Error(`${NAME}: ${who} did not return a JWT access token: ${text.slice(0, 300)}`);
  }
  let header;
  let payload;
  try {
    header = decodePart(parts[0] ?? '');
    payload = decodePart(parts[1] ?? '');
  } catch {
    throw new Error(`${NAME}: ${who} returned an access token that does not decode as a JWT: ${token.slice(0, 100)}…`);
  }
  if (header.alg !== 'RS256') throw new Error(`${NAME}: ${who} signs its access tokens with ${String(header.alg)}, not RS256`);
  return {
    header,
    payload,
    token,
    expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 0,
    scope: typeof body.scope === 'string' ? body.scope : undefined,
    responseHeaders: response.headers,
  };
}

/**
 * The token request as autocannon and fetch send it.
 * @param {string} host
 * @param {Record<string, string>} params
 * @returns {HttpRequest}
 */
export function tokenRequest(host, params) {
  return {
    method: 'POST',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params).toString(),
  };
}

/**
 * Pre-flight, warm-up + measured run, post-flight (also used by logs-cost.js).
 * @param {string} label
 * @param {string} url
 * @param {HttpRequest} request
 * @param {LoadSettings} settings
 * @param {(message: string) => void} progress
 * @param {number | undefined} pid  the server's process, for CPU per token
 * @returns {Promise<Measurement>}
 */
export async function measureTokens(label, url, request, settings, progress, pid) {
  await requestToken(label, url, request);
  progress(`${NAME}: ${label} (${settings.warmup} s warm-up + ${settings.duration} s)`);
  const measurement = await measure(url, request, settings, pid);
  if (measurement.problems.length === 0) await requestToken(`${label}, after the run,`, url, request);
  return measurement;
}

/** Gatehouse's token request for the admin client, narrowed to SCOPE; checks the limit and the scope. */
export async function gatehouseTokenRequest(/** @type {Gatehouse} */ gatehouse) {
  const credentials = adminCredentials(gatehouse);
  const audience = `http://${gatehouse.tenantHost}/api/v2/`;
  if (credentials.audience !== audience) {
    throw new Error(`${NAME}: the admin client's audience is ${credentials.audience}, expected ${audience}`);
  }
  const params = {
    grant_type: 'client_credentials',
    client_id: credentials.client_id,
    client_secret: credentials.client_secret,
    audience,
  };
  const url = `${gatehouse.url}/oauth/token`;
  const full = await requestToken('Gatehouse', url, tokenRequest(gatehouse.tenantHost, params));
  const request = tokenRequest(gatehouse.tenantHost, { ...params, scope: SCOPE });
  const narrow = await requestToken('Gatehouse', url, request);
  const limit = narrow.responseHeaders.get('x-ratelimit-limit');
  if (limit === null || Number(limit) < 1_000_000) {
    throw new Error(`${NAME}: Gatehouse reports X-RateLimit-Limit ${limit} on the token endpoint; raising the 'token' limit did not take`);
  }
  if (narrow.scope !== SCOPE || narrow.payload.scope !== SCOPE) {
    throw new Error(`${NAME}: Gatehouse did not narrow the token to scope=${SCOPE} (got ${String(narrow.payload.scope).slice(0, 100)})`);
  }
  return { url, request, full, narrow };
}

/**
 * One run of peers/raw-sign.js in its own process.
 * @param {{ threads: number, inFlight: number, template: object }} options
 * @param {LoadSettings} settings
 */
async function rawSign({ threads, inFlight, template }, settings) {
  const child = startChild('raw RS256 signing', RAW_SIGN_SCRIPT, [], {
    ...process.env,
    BENCH_SIGN_TEMPLATE: JSON.stringify(template),
    BENCH_SIGN_IN_FLIGHT: String(inFlight),
    BENCH_SIGN_THREADS: String(threads),
    BENCH_SIGN_DURATION: String(settings.duration),
    BENCH_SIGN_WARMUP: String(settings.warmup),
  });
  const code = await child.exited;
  const line = child
    .output()
    .split('\n')
    .find((l) => l.startsWith('RESULT '));
  if (code !== 0 || !line) throw new Error(`${NAME}: raw signing failed (exit ${code}).\n${describeOutput(child)}`);
  return /** @type {{ signsPerSecond: number, total: number, p50: number, p99: number, tokenBytes: number, cpuPerSign: number }} */ (
    JSON.parse(line.slice('RESULT '.length))
  );
}

/** @param {number} ratio @param {number} goal */
function verdict(ratio, goal) {
  return ratio >= goal ? 'met' : 'MISSED';
}

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: ['token'],
  async run({ gatehouse: running, settings, progress }) {
    /** @type {Row[]} */
    const rows = [];
    const row = (/** @type {string} */ target, /** @type {string} */ unit, /** @type {Measurement} */ measurement) => {
      const r = { scenario: NAME, target, unit, measurement };
      rows.push(r);
      return r;
    };

    // Gatehouse, 1 then 2 server processes.
    /** @type {Row[]} */
    const own = [];
    /** @type {Awaited<ReturnType<typeof gatehouseTokenRequest>> | undefined} */
    let sample;
    for (const workers of [1, 2]) {
      const gatehouse = await running(workers);
      const target = await gatehouseTokenRequest(gatehouse);
      sample ??= target;
      const label = `Gatehouse (${workers} worker${workers > 1 ? 's' : ''})`;
      own.push(row(label, 'tokens/s', await measureTokens(label, target.url, target.request, settings, progress, gatehouse.child.process.pid)));
    }
    if (!sample) throw new Error('unreachable');

    // oidc-provider@9, one client, the same scope, tokens as RS256 JWTs.
    const peerPort = await freePort();
    const clientId = 'bench-client';
    const clientSecret = randomBytes(32).toString('base64url');
    const peer = startChild(PEER_LABEL, PEER_SCRIPT, [], {
      ...process.env,
      PORT: String(peerPort),
      HOST: '127.0.0.1',
      BENCH_CLIENT_ID: clientId,
      BENCH_CLIENT_SECRET: clientSecret,
      BENCH_SCOPE: SCOPE,
      BENCH_TOKEN_TTL: String(sample.narrow.expiresIn || 86_400),
    });
    /** @type {Row} */
    let reference;
    /** @type {IssuedToken} */
    let peerToken;
    try {
      const peerUrl = `http://127.0.0.1:${peerPort}`;
      await waitForHttp(peer, `${peerUrl}/.well-known/openid-configuration`);
      const request = tokenRequest(`localhost:${peerPort}`, {
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
        scope: SCOPE,
      });
      peerToken = await requestToken(PEER_LABEL, `${peerUrl}/token`, request);
      if (peerToken.scope !== SCOPE) throw new Error(`${NAME}: ${PEER_LABEL} issued scope ${peerToken.scope}, expected ${SCOPE}`);
      reference = row(PEER_LABEL, 'tokens/s', await measureTokens(PEER_LABEL, `${peerUrl}/token`, request, settings, progress, peer.process.pid));
    } finally {
      await stopChild(peer);
    }

    // Raw signing of Gatehouse's token (fresh jti, iat, exp per sign, as the server does), in one thread and
    // across one worker_thread per CPU, with as many signs in flight as there are connections.
    const { jti: _jti, iat: _iat, exp: _exp, ...claims } = sample.narrow.payload;
    const template = { header: sample.narrow.header, claims, lifetime: sample.narrow.expiresIn || 86_400 };
    const cpus = os.cpus().length;
    progress(`${NAME}: raw RS256 signing, ${settings.connections} in flight in 1 thread (${settings.warmup} s warm-up + ${settings.duration} s)`);
    const oneThread = await rawSign({ threads: 0, inFlight: settings.connections, template }, settings);
    progress(`${NAME}: raw RS256 signing, ${settings.connections} in flight over ${cpus} worker_threads (${settings.warmup} s warm-up + ${settings.duration} s)`);
    const workers = await rawSign({ threads: cpus, inFlight: settings.connections, template }, settings);
    const best = workers.signsPerSecond > oneThread.signsPerSecond ? workers : oneThread;
    const raw = row(RAW_LABEL, 'signs/s', {
      requestsPerSecond: best.signsPerSecond,
      p50: best.p50,
      p99: best.p99,
      total: best.total,
      non2xx: null,
      problems: best.total > 0 ? [] : ['no signature completed'],
      cpuPerOp: best.cpuPerSign,
      loadCpuPerOp: null,
    });

    const narrowBytes = sample.narrow.token.length;
    const figures = [
      `${NAME}: every token request asks for scope=${SCOPE}. Gatehouse's admin client is granted ` +
        `${String(sample.full.scope ?? '').split(' ').filter(Boolean).length} scopes; its token with all of them is ` +
        `${sample.full.token.length.toLocaleString('en-US')} bytes, the measured one ${narrowBytes} bytes ` +
        `(${PEER_LABEL}: ${peerToken.token.length} bytes, RS256 JWT for resource ${String(peerToken.payload.aud)}).`,
      `${NAME}: raw RS256 signing is node:crypto sign (KeyObject, thread pool) on Gatehouse's claims (${best.tokenBytes} bytes): ` +
        `${fmt(oneThread.signsPerSecond)} signs/s with ${settings.connections} in flight in 1 thread, ` +
        `${fmt(workers.signsPerSecond)} signs/s spread over ${cpus} worker_threads; the table shows the higher.`,
    ];
    const failed = failedRuns(rows);
    if (failed) {
      figures.push(`${NAME}: no ratio, ${failed}`);
      return { rows, figures };
    }
    const top = own.reduce((a, b) => (b.measurement.requestsPerSecond > a.measurement.requestsPerSecond ? b : a));
    const vsPeer = top.measurement.requestsPerSecond / reference.measurement.requestsPerSecond;
    const vsRaw = top.measurement.requestsPerSecond / raw.measurement.requestsPerSecond;
    figures.push(
      `${NAME}: Gatehouse (best) at ${vsPeer.toFixed(2)}× ${PEER_LABEL} (goal ≥ ${GOAL_VS_PEER}×): ${verdict(vsPeer, GOAL_VS_PEER)}; best = ${top.target}`,
      `${NAME}: Gatehouse (best) at ${(vsRaw * 100).toFixed(1)}% of raw RS256 signing (goal ≥ ${GOAL_VS_RAW * 100}%): ${verdict(vsRaw, GOAL_VS_RAW)}; best = ${top.target}`,
    );
    return { rows, figures };
  },
};

/** @param {number} n */
function fmt(n) {
  return Math.round(n).toLocaleString('en-US');
}
