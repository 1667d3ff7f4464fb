/**
 * GET /client/{client_id}.js: the client configuration script of the classic login (the reference serves it from
 * its CDN and from the tenant's host). It is JSONP: `Auth0.setClient({...})`, which auth0-lock loads with a
 * script tag from `<configurationBaseUrl or https://domain>/client/<id>.js?t<time>` and reads to know which ways
 * of signing in to show: the application's enabled connections grouped by strategy. Public (a script tag sends no
 * credentials), like the reference's; it names connections and settings the login box shows anyway, no secrets.
 */
import { Type } from '@fastify/type-provider-typebox';
import { isFederated } from '../federation/start.js';
import { NotFound } from '../http/errors.js';
import { errorResponses, fileBody } from '../http/responses.js';
import type { App, Services } from '../services.js';
import type { Client } from '../store/clients.js';
import { listConnections, listEnabledClientsByConnection, type Connection } from '../store/connections.js';

export const CLIENT_SCRIPT_PATH = '/client/:clientId.js';

/** The reference's content type for this script (a JavaScript MIME type, so nosniff lets it run). */
const SCRIPT_TYPE = 'application/x-javascript; charset=utf-8';

type Entry = Record<string, unknown>;

/** The fields the login box reads of one connection, by kind (auth0-lock core/client/index.js formatClientConnection). */
function connectionEntry(connection: Connection): Entry {
  const options = connection.options;
  const entry: Entry = { name: connection.name };
  if (connection.display_name) entry.display_name = connection.display_name;
  if (connection.strategy === 'auth0') {
    entry.passwordPolicy = typeof options.passwordPolicy === 'string' ? options.passwordPolicy : 'good';
    if (options.password_complexity_options) entry.password_complexity_options = options.password_complexity_options;
    entry.showSignup = options.disable_signup !== true;
    entry.showForgot = options.disable_self_service_change_password !== true;
    entry.requires_username = options.requires_username === true;
    if (options.validation) entry.validation = options.validation;
  } else if (isFederated(connection)) {
    // Enterprise connections route emails by domain (home-realm discovery); Lock does the same with these.
    if (Array.isArray(options.domain_aliases)) entry.domain_aliases = options.domain_aliases.filter((d): d is string => typeof d === 'string');
    if (typeof options.domain === 'string') entry.domain = options.domain;
    if (typeof options.scope === 'string') entry.scope = options.scope.split(' ').filter(Boolean);
    else if (Array.isArray(options.scope)) entry.scope = options.scope;
  }
  return entry;
}

/** The script's object: the application and its enabled connections, one entry per strategy, in creation order. */
export async function clientConfiguration(services: Services, tenant: { id: string; name: string; baseUrl: string }, client: Client): Promise<Entry> {
  const db = services.store.db;
  const enabled = await listEnabledClientsByConnection(db, tenant.id);
  const strategies = new Map<string, Entry[]>();
  for (const connection of await listConnections(db, tenant.id)) {
    if (!enabled.get(connection.id)?.includes(client.client_id)) continue;
    const list = strategies.get(connection.strategy) ?? [];
    list.push(connectionEntry(connection));
    strategies.set(connection.strategy, list);
  }
  return {
    id: client.client_id,
    tenant: tenant.name,
    // Not a hosted plan: Lock shows its "free plan" badge only for `free` and `dev`.
    subscription: 'self-hosted',
    authorize: `${tenant.baseUrl}/authorize`,
    callback: client.callbacks[0] ?? '',
    hasAllowedOrigins: client.allowed_origins.length > 0 || client.web_origins.length > 0,
    strategies: [...strategies].map(([name, connections]) => ({ name, connections })),
  };
}

/** JSON inside a script: `<`, U+2028 and U+2029 escaped so no value can end the script or the statement. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

export function registerClientScript(app: App, services: Services): void {
  app.get(CLIENT_SCRIPT_PATH, {
    config: { cors: { kind: 'public' }, rateLimit: { bucket: 'discovery' } },
    schema: {
      tags: ['authentication'],
      summary: "The application's client configuration script (JSONP `Auth0.setClient({...})`: its enabled connections by strategy), as auth0-lock loads it",
      params: Type.Object({ clientId: Type.String({ maxLength: 200, description: 'The application (client_id)' }) }),
      response: {
        200: fileBody('`Auth0.setClient({id, tenant, subscription, authorize, callback, hasAllowedOrigins, strategies: [{name, connections: [...]}]});`', ['application/x-javascript']),
        ...errorResponses('oauth', { 404: 'No application with this client_id' }),
      },
    },
    handler: async (request, reply) => {
      const { clientId } = request.params as { clientId: string };
      const client = await services.configCache.client(request.tenant.id, clientId);
      if (!client) throw new NotFound('No application with this client_id');
      const configuration = await clientConfiguration(services, request.tenant, client);
      // Connections change: Lock adds a timestamp to the URL anyway, and nothing should keep an old copy.
      reply.header('cache-control', 'no-cache');
      return reply.type(SCRIPT_TYPE).send(`Auth0.setClient(${scriptJson(configuration)});`);
    },
  });
}
