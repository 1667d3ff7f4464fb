/**
 * What recording tenant log events costs (issue #16, point 5): the same Gatehouse, data dir and port, restarted
 * with GATEHOUSE_TENANT_LOGS=on (the default) and =off, measuring in each:
 *  - client_credentials tokens/s: the request of client-credentials.js (admin client, client_secret_post,
 *    scope=read:users), autocannon; each token is one `seccft` event;
 *  - password_realm logins/s: the load of password-realm.js (lib/flow-load.js, each virtual user its own user),
 *    each login one `sepft` event;
 * and the server's CPU per operation beside each. Goal: logging costs at most 10% of either throughput.
 *
 * On and off alternate for ROUNDS rounds, the order flipped each round (on-off, off-on, on-off: each restart
 * changes the setting, and neither setting always runs first), and the median round's cost is reported: other
 * work on the machine drifts over minutes, and neighbouring runs see about the same of it.
 *
 * That the setting did what it says is checked, not assumed: the log rows in the server's SQLite file are counted
 * around each setting's runs. With logs on there must be at least one row per measured operation (warm-up and
 * checks add more); with logs off, none at all. The counts are printed.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { measureFlows } from '../lib/flow-load.js';
import { keepAliveAgent } from '../lib/http-client.js';
import { createSpaClient, createUsers, management } from '../lib/management.js';
import { describeOutput } from '../lib/processes.js';
import { failedRuns } from '../lib/report.js';
import { gatehouseTokenRequest, measureTokens } from './client-credentials.js';
import { passwordRealmLogin } from './password-realm.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { BenchUser } from '../lib/management.js' */
/** @import { Measurement } from '../lib/load.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'logs_cost';
/** The issue's budget: logging may take at most this fraction of a throughput. */
const GOAL = 0.1;
const ROUNDS = 3;
/** As password-realm.js: one user per virtual user, at most this many (each costs a hash to create). */
const MAX_USERS = 100;
/** How long the writer may take to flush its last batch (it waits 50 ms) before the rows are counted. */
const SETTLE_MS = 5_000;

/** @typedef {'on' | 'off'} Setting */
/** @typedef {{ clientCredentials: Measurement, passwordRealm: Measurement }} SettingRuns */

/**
 * Log rows by type in the bench server's SQLite file, read while the server runs (WAL lets a reader in).
 * @param {Gatehouse} gatehouse
 * @returns {Map<string, number>}
 */
function logRowsByType(gatehouse) {
  const db = new Database(path.join(gatehouse.dataDir, 'gatehouse.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = /** @type {{ type: string, count: number }[]} */ (db.prepare('SELECT type, COUNT(*) AS count FROM logs GROUP BY type').all());
    return new Map(rows.map((row) => [row.type, row.count]));
  } finally {
    db.close();
  }
}

/**
 * The rows written since `before`, by type, once the writer has flushed: waits until at least `expected` rows
 * are there (logs on), or SETTLE_MS has passed (logs off: the wait proves nothing came late).
 * @param {Gatehouse} gatehouse
 * @param {Map<string, number>} before
 * @param {number} expected
 */
async function rowsWrittenSince(gatehouse, before, expected) {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    /** @type {Map<string, number>} */
    const added = new Map();
    for (const [type, count] of logRowsByType(gatehouse)) {
      const more = count - (before.get(type) ?? 0);
      if (more > 0) added.set(type, more);
    }
    const total = [...added.values()].reduce((sum, n) => sum + n, 0);
    if ((expected > 0 && total >= expected) || Date.now() >= deadline) return { added, total };
    await sleep(250);
  }
}

/** @param {number} n */
const fmt = (n) => Math.round(n).toLocaleString('en-US');
/** @param {number[]} values */
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
/** @param {number} fraction */
const percent = (fraction) => `${(fraction * 100).toFixed(1)}%`;

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: ['token'],
  async run({ gatehouse: running, settings, progress }) {
    /** @type {Row[]} */
    const rows = [];
    /** @type {Record<Setting, Record<string, string>>} */
    const env = { on: {}, off: { GATEHOUSE_TENANT_LOGS: 'off' } };

    // Set-up on the default server (logs on): the SPA client and users of password-realm.js.
    let gatehouse = await running(1);
    const api = await management(gatehouse, NAME);
    const clientId = await createSpaClient(api, { name: `bench ${NAME} ${randomBytes(3).toString('hex')}`, callback: 'https://app.bench.example/callback' });
    const userCount = Math.min(settings.connections, MAX_USERS);
    progress(`${NAME}: creating ${userCount} users through the Management API`);
    const users = await createUsers(api, { count: userCount, prefix: 'logcost' });
    const first = /** @type {BenchUser} */ (users[0]);

    /** @type {{ on: SettingRuns, off: SettingRuns }[]} */
    const rounds = [];
    /** @type {Record<Setting, { rows: number, operations: number, types: Map<string, number> }>} */
    const written = { on: { rows: 0, operations: 0, types: new Map() }, off: { rows: 0, operations: 0, types: new Map() } };

    /**
     * Both measurements with tenant logs `setting`, and the rows they wrote, checked.
     * @param {Setting} setting
     * @param {number} round
     * @returns {Promise<SettingRuns>}
     */
    const measureWith = async (setting, round) => {
      gatehouse = await running(1, env[setting]);
      const pid = gatehouse.child.process.pid;
      const label = (/** @type {string} */ what) => `${what}, logs ${setting} (round ${round})`;
      const before = logRowsByType(gatehouse);

      const target = await gatehouseTokenRequest(gatehouse);
      const clientCredentials = await measureTokens(label('client_credentials'), target.url, target.request, settings, progress, pid);
      rows.push({ scenario: NAME, target: label('client_credentials'), unit: 'tokens/s', measurement: clientCredentials });

      const agent = keepAliveAgent(settings.connections);
      /** @type {Measurement} */
      let passwordRealm;
      try {
        const who = `${NAME}: ${label('password_realm')}`;
        await passwordRealmLogin(gatehouse, agent, clientId, first, who);
        progress(`${who} (${settings.warmup} s warm-up + ${settings.duration} s)`);
        passwordRealm = await measureFlows((vu) => passwordRealmLogin(gatehouse, agent, clientId, /** @type {BenchUser} */ (users[vu % users.length]), who).then(() => undefined), settings, pid);
        if (passwordRealm.problems.length === 0) await passwordRealmLogin(gatehouse, agent, clientId, first, `${who}, after the run,`);
      } finally {
        agent.destroy();
      }
      rows.push({ scenario: NAME, target: label('password_realm'), unit: 'logins/s', measurement: passwordRealm });

      // Every measured operation is one event (seccft, sepft); warm-ups and checks add more.
      const operations = clientCredentials.total + passwordRealm.total;
      const { added, total } = await rowsWrittenSince(gatehouse, before, setting === 'on' ? operations : 0);
      const types = [...added].map(([type, n]) => `${type} ${fmt(n)}`).join(', ') || 'none';
      progress(`${NAME}: logs ${setting} (round ${round}): ${fmt(operations)} measured operations, ${fmt(total)} log rows written (${types})`);
      if (setting === 'on' && total < operations) {
        throw new Error(`${NAME}: with tenant logs on, ${fmt(operations)} measured operations wrote only ${fmt(total)} log rows (${types}): the "on" runs did not log`);
      }
      if (setting === 'off' && total > 0) {
        throw new Error(`${NAME}: with GATEHOUSE_TENANT_LOGS=off, the runs wrote ${fmt(total)} log rows (${types}): the "off" runs still logged`);
      }
      written[setting].rows += total;
      written[setting].operations += operations;
      for (const [type, n] of added) written[setting].types.set(type, (written[setting].types.get(type) ?? 0) + n);
      return { clientCredentials, passwordRealm };
    };

    /**
     * measureWith, and when it fails with the server gone (a refused connection), how it ended and what it said.
     * @param {Setting} setting
     * @param {number} round
     */
    const measureChecked = async (setting, round) => {
      try {
        return await measureWith(setting, round);
      } catch (err) {
        const server = gatehouse.child.process;
        if (server.exitCode === null && server.signalCode === null) throw err;
        throw new Error(`${NAME}: logs ${setting} (round ${round}): Gatehouse ended (exit ${server.exitCode}, signal ${server.signalCode}).\n${describeOutput(gatehouse.child)}`, { cause: err });
      }
    };

    for (let round = 1; round <= ROUNDS; round++) {
      // Flipped each round: the setting of the round's second half is that of the next round's first, so each
      // round costs one restart, and neither setting always follows a restart into a cold cache.
      /** @type {Setting[]} */
      const order = round % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
      /** @type {Partial<Record<Setting, SettingRuns>>} */
      const runs = {};
      for (const setting of order) runs[setting] = await measureChecked(setting, round);
      rounds.push(/** @type {{ on: SettingRuns, off: SettingRuns }} */ (runs));
    }
    // Later scenarios get the default server back.
    await running(1);

    const summary = (/** @type {Setting} */ setting) =>
      `${fmt(written[setting].rows)} log rows for ${fmt(written[setting].operations)} measured operations` +
      (written[setting].types.size > 0 ? ` (${[...written[setting].types].map(([type, n]) => `${type} ${fmt(n)}`).join(', ')})` : '');
    const figures = [
      `${NAME}: one server process, the same data dir restarted with GATEHOUSE_TENANT_LOGS=on and =off, ${ROUNDS} rounds (on-off, off-on, …); ` +
        `each setting: client_credentials (as the client_credentials scenario, scope=read:users) then password_realm (${settings.connections} virtual users over ${users.length} users).`,
      `${NAME}: rows in the logs table, counted around the runs: logs on wrote ${summary('on')}; logs off wrote ${summary('off')}.`,
    ];
    const failed = failedRuns(rows);
    if (failed) {
      figures.push(`${NAME}: no figure, ${failed}`);
      return { rows, figures };
    }
    /**
     * @param {string} what  the row's name in the figure
     * @param {(runs: SettingRuns) => Measurement} pick
     */
    const costLines = (what, pick) => {
      // Throughput given up to logging, and server CPU per operation added by it, per round.
      const byRate = rounds.map((r) => 1 - pick(r.on).requestsPerSecond / pick(r.off).requestsPerSecond);
      const byCpu = rounds.map((r) => {
        const on = pick(r.on).cpuPerOp;
        const off = pick(r.off).cpuPerOp;
        return on && off ? on / off - 1 : NaN;
      });
      const list = (/** @type {number[]} */ values) => values.map(percent).join(', ');
      const verdict = (/** @type {number} */ cost) => (cost <= GOAL ? 'met' : 'MISSED');
      return [
        `${NAME}: tenant logs cost ${percent(median(byRate))} of ${what} throughput (median of rounds: ${list(byRate)}; goal ≤ ${percent(GOAL)}): ${verdict(median(byRate))}`,
        `${NAME}: tenant logs add ${percent(median(byCpu))} server CPU per ${what} operation (median of rounds: ${list(byCpu)}; goal ≤ ${percent(GOAL)}): ${verdict(median(byCpu))}`,
      ];
    };
    figures.push(...costLines('client_credentials', (runs) => runs.clientCredentials), ...costLines('password_realm', (runs) => runs.passwordRealm));
    figures.push(`${NAME}: a negative cost is noise: logs on measured faster than off in that round.`);
    return { rows, figures };
  },
};
