/**
 * A small HTTP/1.1 client for the flows the bench drives itself (lib/flow-load.js): node:http over a keep-alive
 * agent, no redirect following (a flow checks every 302/303 itself), the whole body read as text, and a cookie
 * jar that does what a browser does for one host over plain HTTP. It costs the load generator less CPU than
 * fetch, which matters on a machine whose cores the server shares.
 */
import http from 'node:http';

/**
 * @typedef {object} HttpAnswer
 * @property {number} status
 * @property {import('node:http').IncomingHttpHeaders} headers
 * @property {string} body
 */

/**
 * @typedef {object} HttpCall
 * @property {'GET' | 'POST'} [method]  GET by default
 * @property {string} path      path and query, sent to `origin`
 * @property {Record<string, string>} [headers]
 * @property {string} [body]
 */

/**
 * A keep-alive agent for `sockets` concurrent requests: one per virtual user, reused across its requests.
 * @param {number} sockets
 */
export function keepAliveAgent(sockets) {
  return new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
}

/**
 * One request; resolves with the status, the headers and the body as text, whatever the status.
 * @param {http.Agent} agent
 * @param {URL} origin  http://host:port to connect to (the Host header may name another, see headers)
 * @param {HttpCall} call
 * @param {number} [timeoutMs]
 * @returns {Promise<HttpAnswer>}
 */
export function httpRequest(agent, origin, { method = 'GET', path, headers = {}, body }, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: origin.hostname,
        port: origin.port,
        method,
        path,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        timeout: timeoutMs,
      },
      (response) => {
        /** @type {Buffer[]} */
        const chunks = [];
        response.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${path}`)));
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * The cookies of one browser for one host: Set-Cookie answers are stored (a Max-Age of 0 or less, or an
 * Expires in the past, removes the cookie) and sent back on requests whose path is under the cookie's Path.
 * Domain, Secure and SameSite are not looked at: every request of a flow goes to the same plain-HTTP host.
 */
export class CookieJar {
  /** @type {Map<string, { value: string, path: string }>} */
  #cookies = new Map();

  /** @param {import('node:http').IncomingHttpHeaders} headers  an answer's headers */
  store(headers) {
    for (const line of headers['set-cookie'] ?? []) {
      const [pair = '', ...attributes] = line.split(';');
      const equals = pair.indexOf('=');
      if (equals <= 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      let cookiePath = '/';
      let expired = false;
      for (const attribute of attributes) {
        const [key = '', ...rest] = attribute.split('=');
        const attributeValue = rest.join('=').trim();
        switch (key.trim().toLowerCase()) {
          case 'path':
            if (attributeValue.startsWith('/')) cookiePath = attributeValue;
            break;
          case 'max-age':
            if (Number(attributeValue) <= 0) expired = true;
            break;
          case 'expires':
            if (Date.parse(attributeValue) <= Date.now()) expired = true;
            break;
        }
      }
      if (expired) this.#cookies.delete(name);
      else this.#cookies.set(name, { value, path: cookiePath });
    }
  }

  /**
   * The Cookie header for a request to `requestPath`, or undefined when no cookie applies.
   * @param {string} requestPath  path (the query is ignored)
   */
  header(requestPath) {
    const pathOnly = requestPath.split('?')[0] ?? '/';
    const pairs = [];
    for (const [name, { value, path: cookiePath }] of this.#cookies) {
      const applies = pathOnly === cookiePath || pathOnly.startsWith(cookiePath.endsWith('/') ? cookiePath : `${cookiePath}/`);
      if (applies) pairs.push(`${name}=${value}`);
    }
    return pairs.length > 0 ? pairs.join('; ') : undefined;
  }

  /** @param {string} name */
  has(name) {
    return this.#cookies.has(name);
  }
}
