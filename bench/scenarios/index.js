/**
 * The scenarios `npm run bench` runs, in order. To add one: a module next to this one that exports a
 * Scenario as default, and a line below. BENCH_SCENARIO=<name>[,<name>…] runs only the ones named.
 *
 * Every scenario measures Gatehouse and what it is compared with in the same run, with the same settings,
 * and reports the ratio, which carries over between machines far better than either number.
 *  - jwks: a GET whose peer is a minimal server answering the same bytes (see lib/same-body.js);
 *  - client_credentials: token issuance, against oidc-provider@9 and this machine's raw RS256 signing rate;
 *  - dpop_client_credentials: the same token bound to a DPoP key (a fresh proof per request) against a bearer one;
 *  - events: user creation with and without a webhook stream, events/s delivered and change-to-delivery latency;
 *  - import: user import jobs on SQLite and PostgreSQL (users/s, logins' p99 during an import, export RSS);
 *  - logs_cost: client_credentials and password_realm with tenant logs on and off (GATEHOUSE_TENANT_LOGS), alternating;
 *  - logs: tenant log searches, paging and stats on 1,000,000 log events against 1,000 (SQLite and PostgreSQL);
 *  - scale: each Management read, search, signup, login and refresh on a large tenant against a 1,000-user one.
 */
import authorizationCode from './authorization-code.js';
import bundleSize from './bundle-size.js';
import clientCredentials from './client-credentials.js';
import dpopClientCredentials from './dpop-client-credentials.js';
import events from './events.js';
import importJobs from './import.js';
import jwks from './jwks.js';
import logs from './logs.js';
import logsCost from './logs-cost.js';
import passwordRealm from './password-realm.js';
import scale from './scale.js';
import userinfo from './userinfo.js';

/** @import { Gatehouse, ServerSettings } from '../lib/gatehouse.js' */
/** @import { LoadSettings } from '../lib/load.js' */
/** @import { Row } from '../lib/report.js' */

/**
 * @typedef {object} Scenario
 * @property {string} name  short id, shown in the report and matched by BENCH_SCENARIO
 * @property {string[]} rateLimitBuckets  the rate-limit buckets its requests draw from: the bench raises their
 *   limits out of reach before it starts Gatehouse, so that it measures the endpoint and not the limiter's 429s
 * @property {(context: ScenarioContext) => Promise<ScenarioResult>} run
 *   measures Gatehouse and its comparison targets, one after the other; child processes it starts are its own
 *   to stop (lib/processes.js stops whatever is left on exit)
 */

/**
 * @typedef {object} ScenarioContext
 * @property {(workers: number, env?: ServerSettings) => Promise<Gatehouse>} gatehouse
 *   Gatehouse running with that many server processes and those settings (none beyond the bench's own by
 *   default): the running one, or the same data dir and port restarted with the new count or settings
 * @property {LoadSettings} settings
 * @property {(message: string) => void} progress  a line on stderr
 */

/**
 * @typedef {object} ScenarioResult
 * @property {Row[]} rows       for the table
 * @property {string[]} figures  the ratio lines under the table (and any notes on how to read them)
 */

/** @type {Scenario[]} */
export const scenarios = [jwks, clientCredentials, dpopClientCredentials, authorizationCode, passwordRealm, userinfo, logsCost, events, importJobs, scale, logs, bundleSize];
