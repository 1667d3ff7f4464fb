/**
 * Checks of the token answers of the user grants (authorization_code, password-realm), shared by the
 * scenarios that obtain user tokens: each measured operation goes through `userTokens`, so a run whose
 * logins stop returning tokens fails instead of measuring error answers.
 */
import { FlowFailure } from './flow-load.js';

/** @import { HttpAnswer } from './http-client.js' */

/**
 * @typedef {object} UserTokens
 * @property {string} accessToken
 * @property {string} idToken
 * @property {Record<string, unknown>} idTokenHeader
 * @property {Record<string, unknown>} idTokenClaims
 * @property {string | undefined} scope
 * @property {number | undefined} expiresIn
 */

/**
 * The header and payload of a JWT, undecoded signature; throws FlowFailure when it is not one.
 * @param {string} who
 * @param {string} jwt
 */
export function decodeJwt(who, jwt) {
  const [header, payload] = jwt.split('.');
  try {
    return {
      header: /** @type {Record<string, unknown>} */ (JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8'))),
      payload: /** @type {Record<string, unknown>} */ (JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'))),
    };
  } catch {
    throw new FlowFailure(`${who}: not a JWT: ${jwt.slice(0, 60)}…`);
  }
}

/**
 * A token endpoint answer that must be 200 with an access token and an ID token (the user grants with
 * scope=openid): its tokens, the ID token decoded. Anything else throws a FlowFailure that says what came back.
 * @param {string} who  for messages
 * @param {HttpAnswer} answer
 * @returns {UserTokens}
 */
export function userTokens(who, answer) {
  if (answer.status !== 200) throw new FlowFailure(`${who}: token endpoint answered HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
  /** @type {{ access_token?: unknown, id_token?: unknown, scope?: unknown, expires_in?: unknown }} */
  let body;
  try {
    body = JSON.parse(answer.body);
  } catch {
    throw new FlowFailure(`${who}: token endpoint answered something other than JSON: ${answer.body.slice(0, 200)}`);
  }
  if (typeof body.access_token !== 'string' || body.access_token === '') throw new FlowFailure(`${who}: no access_token in ${answer.body.slice(0, 300)}`);
  if (typeof body.id_token !== 'string') throw new FlowFailure(`${who}: no id_token in ${answer.body.slice(0, 300)}`);
  const { header, payload } = decodeJwt(`${who}: id_token`, body.id_token);
  return {
    accessToken: body.access_token,
    idToken: body.id_token,
    idTokenHeader: header,
    idTokenClaims: payload,
    scope: typeof body.scope === 'string' ? body.scope : undefined,
    expiresIn: typeof body.expires_in === 'number' ? body.expires_in : undefined,
  };
}

/**
 * The rate-limit check of a pre-flight: an answer's X-RateLimit-Limit must show the raised capacity, or the
 * run would measure the limiter's 429s.
 * @param {string} who
 * @param {string | string[] | null | undefined} limit  the answer's X-RateLimit-Limit header
 * @param {string} bucket
 */
export function checkRaisedLimit(who, limit, bucket) {
  if (typeof limit !== 'string' || Number(limit) < 1_000_000) {
    throw new Error(`${who}: X-RateLimit-Limit is ${String(limit)}; raising the '${bucket}' limit did not take`);
  }
}
