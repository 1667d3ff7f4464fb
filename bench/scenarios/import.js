/**
 * User import and export jobs at scale, on SQLite and then PostgreSQL (when BENCH_POSTGRES_URL, by default the
 * local test database, answers; a fresh schema each run). For each:
 *  1. logins alone: password-realm logins of users created through the Management API (lib/flow-load.js), p99;
 *  2. an import of BENCH_IMPORT_USERS users (default 1,000,000; generate-users.js: profiles, metadata and
 *     precomputed bcrypt, salted MD5, PBKDF2 and SHA-256 hashes) through POST /api/v2/jobs/users-imports, alone:
 *     users/s from the start of the upload to the job's completion;
 *  3. the same logins while another import (a fifth as many users) runs: their p99 against (1);
 *  4. wrong passwords, one at a time, for an unknown email, an argon2id user, and imported bcrypt and MD5 users:
 *     median times, which should not tell them apart;
 *  5. an export of every user (NDJSON, default fields) and its download: the server's peak RSS meanwhile.
 * Goals on a 2-vCPU machine (issue #20): ≥ 10,000 users/s on SQLite, ≥ 5,000 on PostgreSQL, logins during an
 * import at ≤ 2× their idle p99, the export under 250 MB of server RSS.
 */
import { randomBytes } from 'node:crypto';
import { openAsBlob, readFileSync } from 'node:fs';
import path from 'node:path';
import { algorithmOf, passwordOf, writeUsersFile } from '../generate-users.js';
import { treeCpuSeconds } from '../lib/cpu.js';
import { FlowFailure, measureFlows } from '../lib/flow-load.js';
import { startGatehouse } from '../lib/gatehouse.js';
import { httpRequest, keepAliveAgent } from '../lib/http-client.js';
import { createSpaClient, createUsers, DATABASE_CONNECTION, management, PASSWORD_REALM_GRANT } from '../lib/management.js';
import { POSTGRES_URL, postgresSchema } from '../lib/postgres-schema.js';
import { makeTempDir, stopChild } from '../lib/processes.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { Management } from '../lib/management.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'import';
const GOALS = { sqlite: 10_000, postgres: 5_000 };
const LOGIN_P99_GOAL = 2;
const RSS_GOAL_MB = 250;
/** BENCH_IMPORT_DIALECTS=sqlite or postgres runs one half only. */
const DIALECTS = /** @type {('sqlite' | 'postgres')[]} */ ((process.env.BENCH_IMPORT_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim()).filter((d) => d === 'sqlite' || d === 'postgres'));

function importCount() {
  const raw = process.env.BENCH_IMPORT_USERS;
  if (raw === undefined || raw.trim() === '') return 1_000_000;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1000) throw new Error(`BENCH_IMPORT_USERS=${raw}: expected a whole number of at least 1000`);
  return Number(raw);
}

/** @param {number} pid  resident memory of the process, MB (Linux) */
function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * @param {Gatehouse} gatehouse
 * @param {Management} api
 * @param {string} file
 * @param {string} connectionId
 * @returns {Promise<string>} the job id
 */
async function startImport(gatehouse, api, file, connectionId) {
  const form = new FormData();
  form.append('users', await openAsBlob(file, { type: 'application/json' }), path.basename(file));
  form.append('connection_id', connectionId);
  const response = await fetch(`${gatehouse.url}/api/v2/jobs/users-imports`, {
    method: 'POST',
    headers: { host: gatehouse.tenantHost, authorization: `Bearer ${api.token}` },
    body: form,
  });
  const body = /** @type {{ id?: string }} */ (await response.json());
  if (response.status !== 202 || !body.id) throw new Error(`${NAME}: the import was refused (HTTP ${response.status}): ${JSON.stringify(body).slice(0, 300)}`);
  return body.id;
}

/**
 * @param {Management} api
 * @param {string} id
 * @returns {Promise<Record<string, any>>}
 */
async function finished(api, id) {
  for (;;) {
    const job = /** @type {Record<string, any>} */ (await api.call('GET', `/jobs/${id}`));
    if (job.status === 'completed') return job;
    if (job.status === 'failed') throw new Error(`${NAME}: job ${id} failed: ${job.status_details}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: [],
  async run({ settings, progress }) {
    const count = importCount();
    const moreCount = Math.max(20_000, Math.floor(count / 5));
    const dir = makeTempDir('gatehouse-bench-import-');
    const file = path.join(dir, 'users.json');
    const more = path.join(dir, 'more.json');
    progress(`${NAME}: generating ${fmt(count)} + ${fmt(moreCount)} users (precomputed hashes)`);
    const bytes = await writeUsersFile(file, count, 'imported');
    await writeUsersFile(more, moreCount, 'during');

    /** @type {Row[]} */
    const rows = [];
    const figures = [`${NAME}: ${fmt(count)} users, ${(bytes / 1e6).toFixed(0)} MB file; logins: ${settings.connections} virtual users, password-realm, one argon2id each.`];
    const postgres = DIALECTS.includes('postgres') ? await postgresSchema() : undefined;
    if (DIALECTS.includes('postgres') && !postgres) figures.push(`${NAME}: PostgreSQL at ${POSTGRES_URL} did not answer: its half is missing from this run.`);
    for (const dialect of DIALECTS) {
      if (dialect === 'postgres' && !postgres) continue;
      const label = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
      progress(`${NAME}: starting Gatehouse on ${label}`);
      const gatehouse = await startGatehouse({ rateLimitBuckets: ['token'], ...(dialect === 'postgres' && { databaseUrl: postgres?.url }) });
      const agent = keepAliveAgent(settings.connections);
      try {
        const api = await management(gatehouse, NAME);
        const clientId = await createSpaClient(api, { name: `bench ${NAME}`, callback: 'https://app.bench.example/callback' });
        const connections = /** @type {{ id: string, name: string }[]} */ (await api.call('GET', '/connections'));
        const connectionId = /** @type {{ id: string }} */ (connections.find((c) => c.name === DATABASE_CONNECTION)).id;
        const loginUsers = await createUsers(api, { count: Math.min(settings.connections, 50), prefix: `import-${dialect}` });
        const pid = /** @type {number} */ (gatehouse.child.process.pid);

        /** @param {string} username @param {string} password */
        const login = (username, password) =>
          httpRequest(agent, new URL(gatehouse.url), {
            method: 'POST',
            path: '/oauth/token',
            headers: { host: gatehouse.tenantHost, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: PASSWORD_REALM_GRANT, username, password, realm: DATABASE_CONNECTION, client_id: clientId, scope: 'openid' }).toString(),
          });
        const loginFlow = async (/** @type {number} */ vu) => {
          const user = /** @type {import('../lib/management.js').BenchUser} */ (loginUsers[vu % loginUsers.length]);
          const answer = await login(user.email, user.password);
          if (answer.status !== 200) throw new FlowFailure(`login answered HTTP ${answer.status}`);
        };

        progress(`${NAME}: ${label}: logins alone`);
        const idle = await measureFlows(loginFlow, settings, pid);
        rows.push({ scenario: NAME, target: `${label}: logins alone`, unit: 'logins/s', measurement: idle });

        progress(`${NAME}: ${label}: importing ${fmt(count)} users`);
        const began = Date.now();
        const cpuBefore = treeCpuSeconds(pid);
        let importPeak = rssMb(pid);
        const importSampler = setInterval(() => (importPeak = Math.max(importPeak, rssMb(pid))), 500);
        const job = await finished(api, await startImport(gatehouse, api, file, connectionId)).finally(() => clearInterval(importSampler));
        const seconds = (Date.now() - began) / 1000;
        const cpuAfter = treeCpuSeconds(pid);
        const cpuPerUser = cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1e6) / count : undefined;
        const rate = count / seconds;
        if (job.summary.inserted !== count) throw new Error(`${NAME}: ${label}: ${job.summary.inserted} of ${count} users inserted`);

        progress(`${NAME}: ${label}: logins during an import of ${fmt(moreCount)} users`);
        const second = await startImport(gatehouse, api, more, connectionId);
        const during = await measureFlows(loginFlow, settings, pid);
        const stillRunning = /** @type {{ status: string }} */ (await api.call('GET', `/jobs/${second}`)).status !== 'completed';
        rows.push({ scenario: NAME, target: `${label}: logins during an import`, unit: 'logins/s', measurement: during });
        await finished(api, second);

        progress(`${NAME}: ${label}: wrong passwords`);
        /** @type {Record<string, number[]>} */
        const wrong = { unknown: [], argon2id: [], 'imported bcrypt': [], 'imported md5': [] };
        const imported = (/** @type {string} */ algorithm, /** @type {number} */ k) => {
          let seen = -1;
          for (let i = 0; ; i++) if (algorithmOf(i) === algorithm && ++seen === k) return `imported-${i}@bench.example`;
        };
        for (let k = 0; k < 9; k++) {
          for (const [kind, email] of /** @type {[string, string][]} */ ([
            ['unknown', `nobody-${k}-${randomBytes(3).toString('hex')}@bench.example`],
            ['argon2id', /** @type {{ email: string }} */ (loginUsers[k % loginUsers.length]).email],
            ['imported bcrypt', imported('bcrypt', k)],
            ['imported md5', imported('md5', k)],
          ])) {
            const t = performance.now();
            const answer = await login(email, `${passwordOf(0)}-wrong`);
            if (answer.status !== 403) throw new Error(`${NAME}: a wrong password for ${email} answered HTTP ${answer.status}`);
            wrong[kind]?.push(performance.now() - t);
          }
        }
        const medians = Object.entries(wrong).map(([kind, times]) => [kind, median(times)]);
        const spread = Math.max(...medians.map(([, m]) => Number(m))) / Math.min(...medians.map(([, m]) => Number(m)));

        progress(`${NAME}: ${label}: exporting every user`);
        let peak = rssMb(pid);
        const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200);
        const exportStarted = Date.now();
        let exported = 0;
        try {
          const created = /** @type {{ id: string }} */ (await api.call('POST', '/jobs/users-exports', { format: 'json' }));
          const done = await finished(api, created.id);
          const download = await fetch(done.location, { headers: { host: gatehouse.tenantHost } });
          if (download.status !== 200 || !download.body) throw new Error(`${NAME}: the export download answered HTTP ${download.status}`);
          for await (const chunk of download.body) exported += chunk.length;
        } finally {
          clearInterval(sampler);
        }
        const exportSeconds = (Date.now() - exportStarted) / 1000;

        const p99Ratio = during.p99 / idle.p99;
        const before = figures.length;
        figures.push(
          `${NAME}: ${label}: import ${fmt(rate)} users/s (${fmt(count)} users in ${seconds.toFixed(1)} s, upload and all; goal ${fmt(GOALS[dialect])}: ${rate >= GOALS[dialect] ? 'met' : 'NOT met'})` +
            (cpuPerUser === undefined ? '' : `; server CPU ${fmt(cpuPerUser)} µs per user (${fmt(1e6 / cpuPerUser)} users per CPU-second, whatever else the machine runs); server peak RSS ${importPeak.toFixed(0)} MB`),
          `${NAME}: ${label}: login p99 ${idle.p99.toFixed(0)} ms alone, ${during.p99.toFixed(0)} ms during an import = ${p99Ratio.toFixed(2)}× (goal ≤ ${LOGIN_P99_GOAL}×: ${p99Ratio <= LOGIN_P99_GOAL ? 'met' : 'NOT met'})` +
            (stillRunning ? '' : ' — the import ended before the window did: partly measured alone'),
          `${NAME}: ${label}: wrong password, median ms: ${medians.map(([kind, m]) => `${kind} ${Number(m).toFixed(0)}`).join(', ')} (largest / smallest ${spread.toFixed(2)})`,
          `${NAME}: ${label}: export of ${fmt(count + moreCount + loginUsers.length)} users, ${(exported / 1e6).toFixed(0)} MB gzip, ${exportSeconds.toFixed(1)} s; server peak RSS ${peak.toFixed(0)} MB (goal < ${RSS_GOAL_MB} MB: ${peak < RSS_GOAL_MB ? 'met' : 'NOT met'})`,
        );
        // Also at once on stderr: a long run stopped before its end keeps what it measured.
        for (const line of figures.slice(before)) progress(line);
      } finally {
        agent.destroy();
        await stopChild(gatehouse.child);
      }
    }
    await postgres?.drop();
    return { rows, figures };
  },
};
