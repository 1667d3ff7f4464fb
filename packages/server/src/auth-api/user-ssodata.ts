/**
 * GET /user/ssodata: the browser's SSO state for the classic login conventions (auth0-js's and svc's
 * `getSSOData` on a hosted page call it with credentials): `{sso:false}` without a live session, otherwise who is
 * signed in and through which connection. Read-only. The session cookie decides; an origin other than the
 * server's own reads the answer only when it is one of the application's Allowed Web Origins (CORS with
 * credentials), since the answer names the user.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { documentedOnly, frontChannelParameters } from '../http/openapi.js';
import { currentSession } from '../login/session.js';
import type { App, Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';

export const SSODATA_PATH = '/user/ssodata';

const SsoData = Type.Object(
  {
    sso: Type.Boolean({ description: 'Whether this browser has a live session' }),
    sessionClients: Type.Optional(Type.Array(Type.String(), { description: 'The application that asked (client_id), when it named one' })),
    lastUsedClientID: Type.Optional(Type.String()),
    lastUsedUserID: Type.Optional(Type.String({ description: 'The signed-in user (`user_id`)' })),
    lastUsedUsername: Type.Optional(Type.String({ description: 'Their email, or else username or name' })),
    lastUsedConnection: Type.Optional(Type.Object({ name: Type.String(), strategy: Type.String() }, { description: "The connection of the user's primary identity" })),
  },
  { description: '`{sso:false}`, or the session: camelCase, as the reference answers' },
);

function queryValue(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 200 ? value : undefined;
}

/** The origin may read the answer: one of the named application's web origins, or else any application's. */
async function originAllowed(services: Services, request: FastifyRequest, origin: string): Promise<boolean> {
  const clientId = queryValue(request, 'client_id');
  if (!clientId) return services.clientOrigins.allows(request.tenant.id, origin);
  const client = await services.configCache.client(request.tenant.id, clientId);
  return Boolean(client?.web_origins.some((o) => o.replace(/\/$/, '') === origin));
}

export function registerUserSsoData(app: App, services: Services): void {
  app.get(SSODATA_PATH, {
    config: {
      rateLimit: { bucket: 'authorize' },
      cors: { kind: 'origins', credentials: true, isAllowed: (request, origin) => originAllowed(services, request, origin) },
    },
    schema: {
      tags: ['authentication'],
      summary: "The browser's SSO state: whether it has a session, its user and connection (getSSOData on hosted pages)",
      ...documentedOnly({ querystring: frontChannelParameters({ client_id: 'The application asking', ldaps: 'Ignored (no AD/LDAP connections here)' }) }),
      response: { 200: SsoData },
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const active = await currentSession(request, services);
      if (!active) return { sso: false };
      const { user } = active;
      const connection = await findConnectionById(services.store.db, request.tenant.id, user.connection_id);
      const clientId = queryValue(request, 'client_id');
      const client = clientId ? await services.configCache.client(request.tenant.id, clientId) : undefined;
      const username = user.email ?? user.username ?? (typeof user.profile.name === 'string' ? user.profile.name : undefined);
      return {
        sso: true,
        // Which applications this session has signed in to is not recorded: only the one asking is named.
        ...(client && { sessionClients: [client.client_id], lastUsedClientID: client.client_id }),
        lastUsedUserID: user.user_id,
        ...(username && { lastUsedUsername: username }),
        ...(connection && { lastUsedConnection: { name: connection.name, strategy: connection.strategy } }),
      };
    },
  });
}
