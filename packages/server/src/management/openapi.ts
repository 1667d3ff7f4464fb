/**
 * GET /api/v2/openapi.json: the Management API's OpenAPI 3.1 document, generated from the same route schemas
 * that validate requests, with each operation's scopes as its security requirement. Public, like the
 * reference's published document.
 */
import { fileBody, OPENAPI_DOCUMENT } from '../http/responses.js';
import type { App } from '../services.js';
import { MANAGEMENT_SECURITY_SCHEME } from './operation.js';
import { describeScope, MANAGEMENT_SCOPES } from './scopes.js';

interface OpenApiDocument {
  paths?: Record<string, unknown>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The OAuth 2.0 scheme every operation names, with the whole catalogue as its scopes. */
export function managementSecuritySchemes(tokenUrl: string): Record<
  string,
  { type: 'oauth2'; description: string; flows: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } } }
> {
  return {
    [MANAGEMENT_SECURITY_SCHEME]: {
      type: 'oauth2' as const,
      description: 'An access token for the audience <issuer>api/v2/, from the client credentials grant.',
      flows: {
        clientCredentials: {
          tokenUrl,
          scopes: Object.fromEntries(MANAGEMENT_SCOPES.map((s) => [s, describeScope(s)])),
        },
      },
    },
  };
}

export function registerOpenApiDocument(app: App): void {
  app.get('/api/v2/openapi.json', {
    schema: {
      tags: ['documentation'],
      summary: 'This document: the Management API (OpenAPI 3.1), with each operation\'s scopes',
      // Public, as the reference publishes its own: the one Management API path without a token.
      security: [],
      response: { 200: fileBody('The OpenAPI document', ['application/json'], OPENAPI_DOCUMENT) },
    },
    handler: async (request, reply) => {
      const full = app.swagger() as OpenApiDocument;
      const paths = Object.fromEntries(
        Object.entries(full.paths ?? {})
          .filter(([path]) => path.startsWith('/api/v2/'))
          .map(([path, item]) => [path.slice('/api/v2'.length), item]),
      );
      const document = {
        openapi: '3.1.0',
        info: { title: 'Gatehouse Management API', version: '2.0', description: 'Administers a Gatehouse tenant.' },
        servers: [{ url: `${request.tenant.baseUrl}/api/v2` }],
        paths,
        components: {
          ...full.components,
          securitySchemes: managementSecuritySchemes(`${request.tenant.baseUrl}/oauth/token`),
        },
      };
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(document));
    },
  });
}
