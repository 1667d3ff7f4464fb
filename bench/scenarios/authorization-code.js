/**
 * The authorization-code flow end to end, as a browser and a single-page application run it, in flows per
 * second. One flow, from a fresh browser (no cookies, so no SSO session to skip the login):
 *  1. GET /authorize (response_type=code, PKCE S256, state, nonce, scope=openid profile email) → 302 to the
 *     hosted login page /u/login?state=…, with the browser cookie;
 *  2. GET /u/login?state=… → 200, the login form: its POST action and hidden inputs (_csrf, transaction);
 *  3. POST the form with username and password (form-encoded) → 303 to /authorize/resume?state=…, with the
 *     session cookie;
 *  4. GET /authorize/resume?state=… → 302 to the redirect URI with ?code=…&state=… (state checked);
 *  5. POST /oauth/token grant_type=authorization_code, code, redirect_uri, client_id, code_verifier (public
 *     client, Origin of the SPA) → 200 with an access token and an ID token whose nonce is the flow's.
 * Each flow is one login, so one argon2id verification, which dominates its cost. Measured on:
 *  - Gatehouse with 1 server process, then restarted on the same data dir with GATEHOUSE_WORKERS=2;
 *  - this machine's raw argon2id verification rate (peers/raw-argon2.js, see lib/argon2.js), in the same run.
 *
 * Five dependent requests with cookies do not fit autocannon's fixed request list: the load is
 * lib/flow-load.js, one virtual user per connection, each logging in its own user (created through the
 * Management API before the runs) over keep-alive connections.
 *
 * Before each measured run, a pre-flight flow is checked in more detail (the raised limits of the `authorize`,
 * `login` and `token` buckets, the cookies, `iss` in the authorization response, the ID token's sub, aud and
 * nonce); after it, another flow must still succeed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { argon2CpuLine, argon2Ratio, rawArgon2Row, storedPasswordHash } from '../lib/argon2.js';
import { FlowFailure, measureFlows } from '../lib/flow-load.js';
import { CookieJar, httpRequest, keepAliveAgent } from '../lib/http-client.js';
import { createSpaClient, createUsers, management } from '../lib/management.js';
import { checkRaisedLimit, userTokens } from '../lib/user-tokens.js';

/** @import { Agent } from 'node:http' */
/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { HttpAnswer, HttpCall } from '../lib/http-client.js' */
/** @import { BenchUser } from '../lib/management.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { UserTokens } from '../lib/user-tokens.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'authorization_code';
/** Goal of the scenario (issue #4): Gatehouse's best row at this fraction of the raw argon2id rate. */
const GOAL_VS_RAW = 0.85;
/** At most this many users (one per virtual user, shared round-robin beyond). Each costs a hash to create. */
const MAX_USERS = 100;
const CALLBACK = 'https://spa.bench.example/callback';
const SPA_ORIGIN = new URL(CALLBACK).origin;
const SCOPE = 'openid profile email';

/**
 * @typedef {object} FlowTarget
 * @property {Gatehouse} gatehouse
 * @property {Agent} agent
 * @property {string} clientId
 */

/**
 * @typedef {object} FlowTrace  what a pre-flight looks at beyond what every flow checks
 * @property {HttpAnswer[]} answers  of the five steps, in order
 * @property {URL} callback          the redirect to the client, with code, state, iss
 * @property {UserTokens} tokens
 * @property {string} nonce
 * @property {string[]} cookiesAtResume  the cookies the browser held when it came back to /authorize/resume
 */

/** @param {string} text */
function unescapeHtml(text) {
  return text.replace(/&(amp|lt|gt|quot|#39|#96|#x([0-9a-f]+)|#(\d+));/gi, (entity, name, hex, dec) => {
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    if (dec) return String.fromCodePoint(Number(dec));
    return { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' }[/** @type {string} */ (name).toLowerCase()] ?? entity;
  });
}

/**
 * The attributes of one tag, unescaped (double-quoted values only: the hosted pages quote every attribute).
 * @param {string} tag
 */
function attributes(tag) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const match of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)="([^"]*)"/g)) out[(match[1] ?? '').toLowerCase()] = unescapeHtml(match[2] ?? '');
  return out;
}

/**
 * The first `<form method="post">` of a page: its action and its hidden inputs.
 * @param {string} html
 */
function loginForm(html) {
  const start = html.search(/<form\b[^>]*\bmethod="post"/i);
  if (start < 0) return undefined;
  const end = html.indexOf('</form>', start);
  const form = html.slice(start, end < 0 ? undefined : end);
  const action = attributes(form.slice(0, form.indexOf('>') + 1)).action;
  /** @type {Record<string, string>} */
  const hidden = {};
  for (const match of form.matchAll(/<input\b[^>]*>/gi)) {
    const input = attributes(match[0]);
    if (input.type === 'hidden' && input.name) hidden[input.name] = input.value ?? '';
  }
  return { action, hidden };
}

/**
 * Where a redirect answer points, which must be `expected` (a path on Gatehouse, or the client's callback URL).
 * @param {string} step
 * @param {HttpAnswer} answer
 * @param {number} status
 * @param {string} base  the tenant's base URL, against which relative locations resolve
 * @param {string} expected  the location's origin and path must start with this
 */
function redirectTo(step, answer, status, base, expected) {
  if (answer.status !== status) throw new FlowFailure(`${step}: expected HTTP ${status}, got ${answer.status}: ${answer.body.slice(0, 300)}`);
  const location = answer.headers.location;
  if (!location) throw new FlowFailure(`${step}: HTTP ${status} without a Location`);
  const url = new URL(location, base);
  if (!`${url.origin}${url.pathname}`.startsWith(expected)) throw new FlowFailure(`${step}: redirected to ${location.slice(0, 200)}, expected ${expected}`);
  return url;
}

/**
 * One whole flow from a fresh browser, for `user`. Throws FlowFailure at the first unexpected answer.
 * @param {FlowTarget} target
 * @param {BenchUser} user
 * @returns {Promise<FlowTrace>}
 */
async function authorizationCodeFlow({ gatehouse, agent, clientId }, user) {
  const origin = new URL(gatehouse.url);
  const base = `http://${gatehouse.tenantHost}`;
  const jar = new CookieJar();
  /** @type {HttpAnswer[]} */
  const answers = [];
  /** A browser request on the tenant's host: the jar's cookies go along, its Set-Cookie answers come back. */
  const browser = async (/** @type {HttpCall} */ call) => {
    const cookie = jar.header(call.path);
    const answer = await httpRequest(agent, origin, {
      ...call,
      headers: { host: gatehouse.tenantHost, accept: 'text/html', ...(cookie && { cookie }), ...call.headers },
    });
    jar.store(answer.headers);
    answers.push(answer);
    return answer;
  };

  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });

  // 1. /authorize → the hosted login page.
  const authorize = await browser({ path: `/authorize?${query}` });
  const loginPage = redirectTo('GET /authorize', authorize, 302, base, `${base}/u/login`);

  // 2. The login page and its form.
  const page = await browser({ path: `${loginPage.pathname}${loginPage.search}` });
  if (page.status !== 200) throw new FlowFailure(`GET /u/login: HTTP ${page.status}: ${page.body.slice(0, 300)}`);
  const form = loginForm(page.body);
  if (!form?.action || form.hidden._csrf === undefined || form.hidden.transaction === undefined) {
    throw new FlowFailure(`GET /u/login: no <form method="post" action> with _csrf and transaction in ${page.body.slice(0, 300)}`);
  }
  const action = new URL(form.action, loginPage);

  // 3. Submit it, as a browser does: form-encoded, from the login page's origin.
  const submitted = await browser({
    method: 'POST',
    path: `${action.pathname}${action.search}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, referer: loginPage.href },
    body: new URLSearchParams({ ...form.hidden, username: user.email, password: user.password }).toString(),
  });
  const resume = redirectTo(`POST ${action.pathname}`, submitted, 303, base, `${base}/authorize/resume`);

  // 4. Back to /authorize with the session → the client's callback with the code.
  const cookiesAtResume = ['gh_browser', 'gh_session'].filter((name) => jar.has(name));
  const resumed = await browser({ path: `${resume.pathname}${resume.search}` });
  const callback = redirectTo('GET /authorize/resume', resumed, 302, base, CALLBACK);
  const code = callback.searchParams.get('code');
  if (!code) throw new FlowFailure(`GET /authorize/resume: no code in ${callback.href.slice(0, 300)}`);
  if (callback.searchParams.get('state') !== state) throw new FlowFailure(`GET /authorize/resume: state came back as ${callback.searchParams.get('state')}, sent ${state}`);

  // 5. The SPA exchanges the code (no cookies: a cross-origin fetch from the application).
  const exchange = await httpRequest(agent, origin, {
    method: 'POST',
    path: '/oauth/token',
    headers: { host: gatehouse.tenantHost, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', origin: SPA_ORIGIN },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: clientId, code_verifier: verifier }).toString(),
  });
  answers.push(exchange);
  const tokens = userTokens('POST /oauth/token', exchange);
  if (tokens.idTokenClaims.nonce !== nonce) throw new FlowFailure(`POST /oauth/token: ID token nonce ${String(tokens.idTokenClaims.nonce)}, sent ${nonce}`);
  return { answers, callback, tokens, nonce, cookiesAtResume };
}

/**
 * A flow checked in detail: what every flow checks, plus the raised limits, the cookies, `iss`, sub and aud.
 * @param {string} label
 * @param {FlowTarget} target
 * @param {BenchUser} user
 */
async function preflight(label, target, user) {
  const who = `${NAME}: ${label}`;
  let trace;
  try {
    trace = await authorizationCodeFlow(target, user);
  } catch (err) {
    if (err instanceof FlowFailure) throw new Error(`${who}: the pre-flight flow failed at ${err.message}`, { cause: err });
    throw err;
  }
  const [authorize, page, submitted, , exchange] = trace.answers;
  for (const [answer, bucket] of /** @type {const} */ ([
    [authorize, 'authorize'],
    [page, 'authorize'],
    [submitted, 'login'],
    [exchange, 'token'],
  ])) {
    checkRaisedLimit(who, answer?.headers['x-ratelimit-limit'], bucket);
  }
  if (trace.cookiesAtResume.length !== 2) throw new Error(`${who}: the browser held only ${trace.cookiesAtResume.join(', ') || 'no cookie'} after the login (expected gh_browser and gh_session)`);
  if (trace.callback.searchParams.get('iss') === null) throw new Error(`${who}: no iss in the authorization response (RFC 9207)`);
  const { sub, aud } = trace.tokens.idTokenClaims;
  if (sub !== user.user_id || aud !== target.clientId) throw new Error(`${who}: ID token for sub ${String(sub)}, aud ${String(aud)}; expected ${user.user_id}, ${target.clientId}`);
  if (trace.tokens.idTokenHeader.alg !== 'RS256') throw new Error(`${who}: ID token signed with ${String(trace.tokens.idTokenHeader.alg)}, not RS256`);
  return trace;
}

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: ['authorize', 'login', 'token'],
  async run({ gatehouse: running, settings, progress }) {
    /** @type {Row[]} */
    const rows = [];
    /** @type {Row[]} */
    const own = [];

    let gatehouse = await running(1);
    const api = await management(gatehouse, NAME);
    const clientId = await createSpaClient(api, { name: `bench ${NAME} ${randomBytes(3).toString('hex')}`, callback: CALLBACK });
    const userCount = Math.min(settings.connections, MAX_USERS);
    progress(`${NAME}: creating ${userCount} users through the Management API`);
    const users = await createUsers(api, { count: userCount, prefix: 'code' });
    const first = /** @type {BenchUser} */ (users[0]);

    for (const workers of [1, 2]) {
      gatehouse = await running(workers);
      const label = `Gatehouse (${workers} worker${workers > 1 ? 's' : ''})`;
      const agent = keepAliveAgent(settings.connections);
      /** @type {FlowTarget} */
      const target = { gatehouse, agent, clientId };
      try {
        await preflight(label, target, first);
        progress(`${NAME}: ${label} (${settings.warmup} s warm-up + ${settings.duration} s)`);
        const measurement = await measureFlows(
          async (vu) => {
            await authorizationCodeFlow(target, /** @type {BenchUser} */ (users[vu % users.length]));
          },
          settings,
          gatehouse.child.process.pid,
        );
        if (measurement.problems.length === 0) await preflight(`${label}, after the run,`, target, first);
        const row = { scenario: NAME, target: label, unit: 'flows/s', measurement };
        rows.push(row);
        own.push(row);
      } finally {
        agent.destroy();
      }
    }

    const raw = await rawArgon2Row(NAME, { hash: storedPasswordHash(gatehouse, first.email), password: first.password }, settings, progress);
    rows.push(raw.row);
    const figures = [
      `${NAME}: one flow = GET /authorize (code, PKCE S256) → GET /u/login → POST /u/login → GET /authorize/resume → POST /oauth/token, ` +
        `from a fresh browser each time, public first-party SPA client, scope=${SCOPE}; ${settings.connections} virtual users over ${users.length} users; one argon2id verification per flow.`,
      raw.figure,
      argon2Ratio(NAME, own, raw.row, rows, GOAL_VS_RAW),
    ];
    const cpu = argon2CpuLine(NAME, 'flow', own, raw.row);
    if (cpu) figures.push(cpu);
    return { rows, figures };
  },
};
