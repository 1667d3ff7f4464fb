/**
 * Set-up of the user-login scenarios through Gatehouse's Management API, as an administrator would do it: a
 * first-party application, the database connection enabled for it, and users with passwords. Everything goes
 * through HTTP with the admin client's token (lib/gatehouse.js adminCredentials), so the users' password
 * hashes are made by the server exactly as in production.
 */
import { randomBytes } from 'node:crypto';
import { adminCredentials } from './gatehouse.js';

/** @import { Gatehouse } from './gatehouse.js' */

/** The database connection every fresh tenant has. */
export const DATABASE_CONNECTION = 'Username-Password-Authentication';
export const PASSWORD_REALM_GRANT = 'http://auth0.com/oauth/grant-type/password-realm';

/**
 * @typedef {object} BenchUser
 * @property {string} user_id
 * @property {string} email
 * @property {string} password
 */

/**
 * @typedef {object} Management
 * @property {string} token  the admin access token, for load generators that build their own requests
 * @property {(method: string, path: string, body?: unknown) => Promise<unknown>} call
 *   a Management API call (path after /api/v2); anything but 2xx throws with the answer
 */

/**
 * A Management API caller for `gatehouse`, with a fresh admin token. A 429 (the `management` bucket, which the
 * bench does not raise: set-up is not measured) is retried after the time the server asks for.
 * @param {Gatehouse} gatehouse
 * @param {string} who  for messages (the scenario's name)
 * @returns {Promise<Management>}
 */
export async function management(gatehouse, who) {
  const credentials = adminCredentials(gatehouse);
  const host = gatehouse.tenantHost;
  const tokenResponse = await fetch(`${gatehouse.url}/oauth/token`, {
    method: 'POST',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      audience: `http://${host}/api/v2/`,
    }).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const tokenText = await tokenResponse.text();
  if (tokenResponse.status !== 200) throw new Error(`${who}: no Management API token (HTTP ${tokenResponse.status}): ${tokenText.slice(0, 300)}`);
  const accessToken = /** @type {{ access_token: string }} */ (JSON.parse(tokenText)).access_token;

  /** @type {Management['call']} */
  const call = async (method, path, body) => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`${gatehouse.url}/api/v2${path}`, {
        method,
        headers: { host, authorization: `Bearer ${accessToken}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.status === 429 && attempt < 20) {
        const wait = Math.min(5, Number(response.headers.get('retry-after')) || 1);
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        continue;
      }
      if (response.status < 200 || response.status > 299) {
        throw new Error(`${who}: Management API ${method} ${path} answered HTTP ${response.status}: ${text.slice(0, 500)}`);
      }
      return text ? /** @type {unknown} */ (JSON.parse(text)) : undefined;
    }
  };
  return { token: accessToken, call };
}

/**
 * A first-party single-page application (public client: token_endpoint_auth_method none) allowed the
 * authorization-code, refresh-token and password-realm grants, with the database connection enabled for it.
 * @param {Management} api
 * @param {{ name: string, callback: string }} options
 * @returns {Promise<string>}  its client_id
 */
export async function createSpaClient(api, { name, callback }) {
  const client = /** @type {{ client_id: string }} */ (
    await api.call('POST', '/clients', {
      name,
      app_type: 'spa',
      is_first_party: true,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token', PASSWORD_REALM_GRANT],
      callbacks: [callback],
      web_origins: [new URL(callback).origin],
      allowed_origins: [new URL(callback).origin],
    })
  );
  const connections = /** @type {{ id: string, name: string }[]} */ (
    await api.call('GET', `/connections?name=${encodeURIComponent(DATABASE_CONNECTION)}`)
  );
  const connection = connections.find((c) => c.name === DATABASE_CONNECTION);
  if (!connection) throw new Error(`no ${DATABASE_CONNECTION} connection in the bench tenant`);
  await api.call('PATCH', `/connections/${encodeURIComponent(connection.id)}/clients`, [{ client_id: client.client_id, status: true }]);
  return client.client_id;
}

/**
 * `count` users of the database connection, each with its own random password and a full profile (so that
 * the `profile` and `email` scopes have something to return). A few at a time: each costs the server one
 * argon2id hash.
 * @param {Management} api
 * @param {{ count: number, prefix: string }} options  prefix: part of each email, unique to the scenario
 * @returns {Promise<BenchUser[]>}
 */
export async function createUsers(api, { count, prefix }) {
  const run = randomBytes(4).toString('hex');
  /** @type {BenchUser[]} */
  const users = [];
  const create = async (/** @type {number} */ i) => {
    const email = `${prefix}-${run}-${i}@bench.example`;
    const password = `${randomBytes(12).toString('base64url')}-Aa1!`;
    const user = /** @type {{ user_id: string }} */ (
      await api.call('POST', '/users', {
        connection: DATABASE_CONNECTION,
        email,
        password,
        email_verified: true,
        given_name: 'Bench',
        family_name: `User ${i}`,
        name: `Bench User ${i}`,
        nickname: `bench${i}`,
        picture: `https://bench.example/avatars/${i}.png`,
      })
    );
    users[i] = { user_id: user.user_id, email, password };
  };
  const parallel = 4;
  for (let i = 0; i < count; i += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, (_, j) => create(i + j)));
  }
  return users;
}
