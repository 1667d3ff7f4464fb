/**
 * The scenarios `npm run bench` runs, in order. To add one: a module next to this one that exports a
 * Scenario as default, and a line below.
 *
 * Every scenario is measured twice in the same run with the same autocannon settings: against Gatehouse,
 * and against its peer, a minimal server that answers the same path with the same body Gatehouse gave. The
 * report is the ratio of the two, which carries over between machines far better than either number.
 */
import jwks from './jwks.js';

/**
 * @typedef {object} Scenario
 * @property {string} name  short id, shown in the report
 * @property {string} path  the GET request path, the same on Gatehouse and on the peer
 * @property {(target: { host: string }) => Record<string, string>} headers
 *   request headers for a target; `host` is the Host that target expects (on Gatehouse, the one that selects
 *   the default tenant)
 * @property {Peer} peer
 * @property {string[]} rateLimitBuckets  the rate-limit buckets the path draws from: the bench raises their
 *   limits out of reach, so that it measures the endpoint and not the limiter's 429s
 */

/**
 * @typedef {object} Peer
 * @property {string} label   how the report names it, e.g. "bare Fastify"
 * @property {string} script  absolute path of a Node script that serves GET PORT/BENCH_PEER_PATH with the
 *   JSON in BENCH_PEER_BODY_FILE on 127.0.0.1 (see peers/bare-fastify.js)
 */

/** @type {Scenario[]} */
export const scenarios = [jwks];
