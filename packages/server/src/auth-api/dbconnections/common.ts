/**
 * What both /dbconnections endpoints share: the client and database connection a request names, CORS for the
 * tenant's client origins (a preflight carries no body, so it cannot name the client), then the exact check
 * against the named client's own origins, and the family's error classes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { databaseConnectionFor } from '../../connections/database-users.js';
import type { PasswordCheck } from '../../connections/password-policy.js';
import type { CorsPolicy } from '../../http/cors.js';
import { ProtocolError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import type { Connection } from '../../store/connections.js';

/** A request the endpoint cannot act on (unknown client, a connection the client may not use, a bad field). */
export class DbConnectionsBadRequest extends ProtocolError {
  constructor(description: string, code = 'invalid_request') {
    super(400, code, description);
  }
}

/** Sign-up or password change switched off for the connection, or a browser origin the client does not allow. */
export class DbConnectionsUnauthorized extends ProtocolError {
  constructor(description: string) {
    super(403, 'unauthorized', description);
  }
}

export class UserExists extends ProtocolError {
  constructor(by: 'email' | 'username') {
    super(400, by === 'email' ? 'user_exists' : 'username_exists', by === 'email' ? 'The user already exists.' : 'The username already exists.');
  }
}

export function dbConnectionsCors(services: Services): CorsPolicy {
  return { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) };
}

function originOf(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The client named by `client_id`, and the database connection named by `connection` that is enabled for it. */
export async function clientAndConnection(
  request: FastifyRequest,
  services: Services,
  clientId: string,
  connectionName: string,
): Promise<{ client: Client; connection: Connection }> {
  const tenant = request.tenant;
  const client = await services.configCache.client(tenant.id, clientId);
  if (!client) throw new DbConnectionsBadRequest('client_id does not name a client of this tenant');
  // A browser call must come from one of this client's origins (or the tenant's own pages).
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null' && originOf(origin) !== tenant.baseUrl) {
    const allowed = [...client.allowed_origins, ...client.web_origins].map(originOf);
    if (!allowed.includes(originOf(origin))) throw new DbConnectionsUnauthorized(`Origin ${origin.slice(0, 200)} is not allowed for this client`);
  }
  const connection = await databaseConnectionFor(services, tenant, client.client_id, connectionName);
  if (!connection) throw new DbConnectionsBadRequest(`connection ${connectionName.slice(0, 128)} is not a database connection enabled for this client`);
  return { client, connection };
}

/**
 * Password policy errors carry more than the family's four fields: their own `name` (PasswordStrengthError, …)
 * and the `policy` text, and for a strength error a `description` object listing the rules (auth0-js hands
 * these to the application as they are), so they are sent here rather than through the error renderer.
 */
export function sendPasswordRejected(reply: FastifyReply, check: Extract<PasswordCheck, { ok: false }>): FastifyReply {
  const description = check.name === 'PasswordStrengthError' ? { rules: check.rules, verified: false } : check.message;
  return reply
    .code(400)
    .type('application/json; charset=utf-8')
    .send({ name: check.name, message: check.message, code: check.code, description, policy: check.policy, statusCode: 400 });
}
