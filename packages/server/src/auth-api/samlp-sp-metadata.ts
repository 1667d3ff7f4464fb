/**
 * GET /samlp/metadata?connection=NAME: our SAML service-provider metadata for one samlp connection (the
 * reference's path), to configure the upstream identity provider from: the entity ID
 * `urn:auth0:{tenant}:{connection}`, the assertion consumer service /login/callback?connection=NAME (HTTP-POST)
 * and the tenant's signing certificate (for signed AuthnRequests).
 */
import { Type } from '@fastify/type-provider-typebox';
import { localParty } from '../federation/local-party.js';
import { serviceProviderMetadata, samlpStrategy } from '../federation/samlp.js';
import { openUpstream } from '../federation/secrets.js';
import { InvalidRequest } from '../http/errors.js';
import { htmlPage, textBody } from '../http/responses.js';
import { sendErrorPage } from '../login/error-page.js';
import type { App, Services } from '../services.js';
import { findConnectionByName } from '../store/connections.js';

export const SP_METADATA_PATH = '/samlp/metadata';

export function registerSamlpSpMetadata(app: App, services: Services): void {
  app.get(SP_METADATA_PATH, {
    config: { rateLimit: { bucket: 'authorize' as const } },
    schema: {
      tags: ['saml'],
      summary: 'SAML service-provider metadata of a samlp connection',
      querystring: Type.Object({ connection: Type.Optional(Type.String({ maxLength: 128, description: 'The samlp connection' })) }, { additionalProperties: true }),
      response: {
        200: textBody('The EntityDescriptor (SAML metadata) with an SPSSODescriptor', 'application/samlmetadata+xml'),
        400: htmlPage('The error page: no connection named, or none of strategy samlp by that name'),
      },
    },
    handler: async (request, reply) => {
      const name = request.query.connection;
      const connection = name ? await findConnectionByName(services.store.db, request.tenant.id, name) : undefined;
      if (!connection || connection.strategy !== samlpStrategy.name) {
        return sendErrorPage(reply, request, new InvalidRequest(name ? 'There is no SAML connection (samlp) by this name.' : 'The connection parameter is required.'));
      }
      const upstream = { ...openUpstream(samlpStrategy, services.sealer, connection), local: localParty(request, services, connection) };
      const xml = await serviceProviderMetadata(upstream);
      return reply.header('content-type', 'application/samlmetadata+xml; charset=utf-8').header('cache-control', 'public, max-age=300').send(xml);
    },
  });
}
