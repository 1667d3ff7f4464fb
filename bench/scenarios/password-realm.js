/**
 * POST /oauth/token, grant_type=http://auth0.com/oauth/grant-type/password-realm: a user logs in with username
 * and password against the database connection (realm=Username-Password-Authentication), from a first-party
 * public client (a SPA allowed that grant), scope=openid, and gets an access token and an ID token. Measured in
 * logins per second on:
 *  - Gatehouse with 1 server process, then restarted on the same data dir with GATEHOUSE_WORKERS=2;
 *  - this machine's raw argon2id verification rate (peers/raw-argon2.js, see lib/argon2.js), on a hash the
 *    server stored, in the same run. Each login costs one argon2id verification, most of its work, so that
 *    rate is the ceiling.
 *
 * The load is lib/flow-load.js, not autocannon: each virtual user logs in its own user (created through the
 * Management API before the runs), as many users logging in do, instead of every connection hammering one
 * user's row.
 *
 * Before each measured run, a pre-flight login must return 200 with an access token and an RS256 ID token for
 * that user and client, and show the raised `token` rate limit; after it, another login must still do so.
 */
import { randomBytes } from 'node:crypto';
import { argon2CpuLine, argon2Ratio, rawArgon2Row, storedPasswordHash } from '../lib/argon2.js';
import { measureFlows } from '../lib/flow-load.js';
import { httpRequest, keepAliveAgent } from '../lib/http-client.js';
import { createSpaClient, createUsers, DATABASE_CONNECTION, management, PASSWORD_REALM_GRANT } from '../lib/management.js';
import { checkRaisedLimit, userTokens } from '../lib/user-tokens.js';

/** @import { Gatehouse } from '../lib/gatehouse.js' */
/** @import { BenchUser } from '../lib/management.js' */
/** @import { Row } from '../lib/report.js' */
/** @import { Scenario } from './index.js' */

const NAME = 'password_realm';
/** Goal of the scenario (issue #4): Gatehouse's best row at this fraction of the raw argon2id rate. */
const GOAL_VS_RAW = 0.9;
/** At most this many users (one per virtual user, shared round-robin beyond). Each costs a hash to create. */
const MAX_USERS = 100;

/**
 * One password-realm login of `user`, checked: 200, tokens, an ID token for that user and client (also used by
 * logs-cost.js).
 * @param {Gatehouse} gatehouse
 * @param {import('node:http').Agent} agent
 * @param {string} clientId
 * @param {BenchUser} user
 * @param {string} who
 */
export async function passwordRealmLogin(gatehouse, agent, clientId, user, who) {
  const answer = await httpRequest(agent, new URL(gatehouse.url), {
    method: 'POST',
    path: '/oauth/token',
    headers: { host: gatehouse.tenantHost, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: PASSWORD_REALM_GRANT,
      username: user.email,
      password: user.password,
      realm: DATABASE_CONNECTION,
      client_id: clientId,
      scope: 'openid',
    }).toString(),
  });
  const tokens = userTokens(who, answer);
  return { answer, tokens };
}

/** @type {Scenario} */
export default {
  name: NAME,
  rateLimitBuckets: ['token'],
  async run({ gatehouse: running, settings, progress }) {
    /** @type {Row[]} */
    const rows = [];
    /** @type {Row[]} */
    const own = [];

    let gatehouse = await running(1);
    const api = await management(gatehouse, NAME);
    const clientId = await createSpaClient(api, { name: `bench ${NAME} ${randomBytes(3).toString('hex')}`, callback: 'https://app.bench.example/callback' });
    const userCount = Math.min(settings.connections, MAX_USERS);
    progress(`${NAME}: creating ${userCount} users through the Management API`);
    const users = await createUsers(api, { count: userCount, prefix: 'realm' });
    const first = /** @type {BenchUser} */ (users[0]);

    for (const workers of [1, 2]) {
      gatehouse = await running(workers);
      const label = `Gatehouse (${workers} worker${workers > 1 ? 's' : ''})`;
      const agent = keepAliveAgent(settings.connections);
      try {
        // Pre-flight: the login works, for the right user and client, and the limiter is out of the way.
        const { answer, tokens } = await passwordRealmLogin(gatehouse, agent, clientId, first, `${NAME}: ${label}`);
        checkRaisedLimit(`${NAME}: ${label}`, answer.headers['x-ratelimit-limit'], 'token');
        if (tokens.idTokenHeader.alg !== 'RS256') throw new Error(`${NAME}: ${label} signs ID tokens with ${String(tokens.idTokenHeader.alg)}, not RS256`);
        if (tokens.idTokenClaims.sub !== first.user_id || tokens.idTokenClaims.aud !== clientId) {
          throw new Error(`${NAME}: ${label} issued an ID token for sub ${String(tokens.idTokenClaims.sub)}, aud ${String(tokens.idTokenClaims.aud)}; expected ${first.user_id}, ${clientId}`);
        }

        progress(`${NAME}: ${label} (${settings.warmup} s warm-up + ${settings.duration} s)`);
        const measurement = await measureFlows(
          async (vu) => {
            await passwordRealmLogin(gatehouse, agent, clientId, /** @type {BenchUser} */ (users[vu % users.length]), `${NAME}: ${label}`);
          },
          settings,
          gatehouse.child.process.pid,
        );
        if (measurement.problems.length === 0) await passwordRealmLogin(gatehouse, agent, clientId, first, `${NAME}: ${label}, after the run,`);
        const row = { scenario: NAME, target: label, unit: 'logins/s', measurement };
        rows.push(row);
        own.push(row);
      } finally {
        agent.destroy();
      }
    }

    const raw = await rawArgon2Row(NAME, { hash: storedPasswordHash(gatehouse, first.email), password: first.password }, settings, progress);
    rows.push(raw.row);
    const figures = [
      `${NAME}: grant_type=${PASSWORD_REALM_GRANT}, realm=${DATABASE_CONNECTION}, scope=openid, public SPA client; ` +
        `${settings.connections} virtual users over ${users.length} users, one login (one argon2id verification) per request.`,
      raw.figure,
      argon2Ratio(NAME, own, raw.row, rows, GOAL_VS_RAW),
    ];
    const cpu = argon2CpuLine(NAME, 'login', own, raw.row);
    if (cpu) figures.push(cpu);
    return { rows, figures };
  },
};
