/**
 * What a DPoP-bound client_credentials token (RFC 9449) costs next to a bearer one, on the same Gatehouse, in
 * the same run, with the same client, body and load settings: POST /oauth/token as in client_credentials.js
 * (admin client, client_secret_post, scope=read:users), once plain and once with a `DPoP` header. The DPoP run's
 * tokens carry `cnf.jkt` and `token_type: DPoP` (checked before and after the run).
 *
 * Every DPoP request carries a fresh proof (its own `jti`: the server refuses a replay) with the server's current
 * nonce, as a real client sends it. The proofs are ES256 (openid-client's default), signed with node:crypto
 * BEFORE the measured runs, so that the load generator, which shares the machine's cores with the server, spends
 * nothing on signing while the server is measured; inside the run it only takes the next proof from the pool.
 * Both runs go through the same per-request hook (the bearer one adds nothing), so the load generator does the
 * same work per request. What signing the proofs cost the client is reported beside, not subtracted from anything.
 *
 * The goal (issue #13): bearer tokens/s ÷ DPoP tokens/s ≤ 1.3, i.e. a DPoP-bound token costs at most 1.3× a bearer
 * one. The server CPU per token (µs, its process tree) gives the same ratio measured another way. Bearer and DPoP
 * alternate for ROUNDS rounds and the median round's ratio is reported (the machine's other load drifts).
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { measure } from '../lib/load.js';
import { failedRuns } from '../lib/report.js';
import { gatehouseTokenRequest, requestToken } from './client-credentials.js';

/** @import { HttpRequest, LoadSettings, Measurement } from '../lib/load.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'dpop_client_credentials';
const GOAL = 1.3;
/** Proofs in the pool per bearer token/s measured, per second of run: DPoP cannot be faster than bearer. */
const POOL_MARGIN = 1.5;
/** Bearer-then-DPoP pairs per run (see the comment in run). */
const ROUNDS = 3;

/** A client's DPoP key (ES256) and the proofs it signs. */
function dpopKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } })).toString('base64url');
  const jkt = createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest('base64url');
  /**
   * @param {string} htu
   * @param {string | undefined} nonce
   */
  const proof = (htu, nonce) => {
    const payload = Buffer.from(JSON.stringify({ htm: 'POST', htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...(nonce && { nonce }) })).toString('base64url');
    const input = `${header}.${payload}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
  return { jkt, proof };
}

/** @param {number} ratio */
function verdict(ratio) {
  return ratio <= GOAL ? 'met' : 'MISSED';
}

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: ['token'],
  async run({ gatehouse: running, settings, progress }) {
    const gatehouse = await running(1);
    const pid = gatehouse.child.process.pid;
    const target = await gatehouseTokenRequest(gatehouse);
    const htu = target.url.replace(gatehouse.url, `http://${gatehouse.tenantHost}`);
    const key = dpopKey();
    /** @type {Row[]} */
    const rows = [];

    /**
     * Pre-flight, warm-up + measured run, post-flight.
     * @param {string} label
     * @param {HttpRequest} request
     * @param {(() => HttpRequest) | undefined} checkRequest  a request for the pre- and post-flight checks
     * @returns {Promise<Measurement>}
     */
    const run = async (label, request, checkRequest = () => request) => {
      const before = await requestToken(label, target.url, checkRequest());
      checkBinding(label, before);
      progress(`${NAME}: ${label} (${settings.warmup} s warm-up + ${settings.duration} s)`);
      const measurement = await measure(target.url, request, settings, pid);
      if (measurement.problems.length === 0) checkBinding(`${label}, after the run,`, await requestToken(`${label}, after the run,`, target.url, checkRequest()));
      rows.push({ scenario: NAME, target: label, unit: 'tokens/s', measurement });
      return measurement;
    };
    /** @param {string} label @param {Awaited<ReturnType<typeof requestToken>>} issued */
    const checkBinding = (label, issued) => {
      const cnf = /** @type {{ jkt?: unknown } | undefined} */ (issued.payload.cnf);
      const wantsDpop = label.startsWith('DPoP');
      if (wantsDpop && cnf?.jkt !== key.jkt) throw new Error(`${NAME}: ${label}: the token is not bound to the proof's key (cnf ${JSON.stringify(cnf)})`);
      if (!wantsDpop && cnf !== undefined) throw new Error(`${NAME}: ${label}: a bearer token carries cnf ${JSON.stringify(cnf)}`);
    };

    // Bearer then DPoP, ROUNDS times: other work on the machine drifts over minutes, and neighbouring runs see
    // about the same of it, so each round gives a ratio and the report takes their median.
    /** @type {{ bearer: Measurement, dpop: Measurement }[]} */
    const rounds = [];
    let poolTotal = 0;
    let usedTotal = 0;
    let signCpuTotal = 0;
    let signMsTotal = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      // Bearer: the same hook as the DPoP run, adding nothing.
      const bearer = await run(`bearer (round ${round})`, { ...target.request, setupRequest: (r) => r });

      // The nonce: the server hands it out on any token request with a DPoP header (RFC 9449 §8).
      const nonceAnswer = await fetch(target.url, { method: 'POST', headers: { ...target.request.headers, dpop: key.proof(htu, undefined) }, body: target.request.body ?? null });
      await nonceAnswer.text();
      const nonce = nonceAnswer.headers.get('dpop-nonce');
      if (!nonce) throw new Error(`${NAME}: no DPoP-Nonce from Gatehouse (HTTP ${nonceAnswer.status})`);

      // Enough proofs for the warm-up and the run at the bearer rate and then some; a proof used twice is a 400,
      // which fails the run rather than measuring something else.
      const poolSize = Math.ceil(bearer.requestsPerSecond * (settings.warmup + settings.duration) * POOL_MARGIN) + settings.connections * 4 + 100;
      progress(`${NAME}: signing ${poolSize.toLocaleString('en-US')} DPoP proofs (ES256) before the run`);
      const signStart = performance.now();
      const cpuStart = process.cpuUsage();
      const pool = Array.from({ length: poolSize }, () => key.proof(htu, nonce));
      const signCpu = process.cpuUsage(cpuStart);
      signCpuTotal += signCpu.user + signCpu.system;
      signMsTotal += performance.now() - signStart;
      poolTotal += poolSize;
      let next = 0;
      const dpop = await run(
        `DPoP, ES256 proof (round ${round})`,
        {
          ...target.request,
          setupRequest: (r) => {
            r.headers = { ...r.headers, dpop: pool[next++] ?? 'pool-exhausted' };
            return r;
          },
        },
        () => ({ ...target.request, headers: { ...target.request.headers, dpop: key.proof(htu, nonce) } }),
      );
      usedTotal += next;
      rounds.push({ bearer, dpop });
    }

    const figures = [
      `${NAME}: every run: POST /oauth/token client_credentials (admin client, client_secret_post, scope=read:users), 1 server process, ` +
        `bearer then DPoP, ${ROUNDS} rounds; the DPoP runs add a fresh ES256 proof with the server's nonce to every request (token_type DPoP, cnf.jkt checked before and after).`,
      `${NAME}: the ${poolTotal.toLocaleString('en-US')} proofs were signed before the DPoP runs, ${(signCpuTotal / poolTotal).toFixed(0)} µs CPU each ` +
        `(${(signMsTotal / 1000).toFixed(1)} s wall), ${usedTotal.toLocaleString('en-US')} used: the client's signing is outside the measured server cost.`,
    ];
    const failed = failedRuns(rows);
    if (failed) {
      figures.push(`${NAME}: no ratio, ${failed}`);
      return { rows, figures };
    }
    const median = (/** @type {number[]} */ values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
    const byRate = rounds.map(({ bearer, dpop }) => bearer.requestsPerSecond / dpop.requestsPerSecond);
    const byCpu = rounds.map(({ bearer, dpop }) => (bearer.cpuPerOp && dpop.cpuPerOp ? dpop.cpuPerOp / bearer.cpuPerOp : NaN));
    const list = (/** @type {number[]} */ values) => values.map((v) => v.toFixed(2)).join(', ');
    figures.push(
      `${NAME}: a DPoP-bound token costs ${median(byRate).toFixed(2)}× a bearer one by tokens/s (median of rounds: ${list(byRate)}; goal ≤ ${GOAL}×): ${verdict(median(byRate))}`,
      `${NAME}: server CPU per token, DPoP ÷ bearer: ${median(byCpu).toFixed(2)}× (median of rounds: ${list(byCpu)}; goal ≤ ${GOAL}×): ${verdict(median(byCpu))}`,
    );
    return { rows, figures };
  },
};
