/**
 * GET /.well-known/jwks.json: the tenant's published public keys (current, next, previous). Cacheable for
 * five minutes: a key is published as `next` a whole rotation before it signs, so cached sets stay valid.
 * Every relying party polls it, so the key ring keeps the body as bytes with its ETag (no serialization per
 * request), and a poll that names that ETag gets a 304 without the body.
 */
import { Type } from '@fastify/type-provider-typebox';
import { noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';

const JsonWebKey = Type.Object(
  {
    kty: Type.String(),
    kid: Type.String(),
    alg: Type.String(),
    use: Type.String(),
    n: Type.String(),
    e: Type.String(),
  },
  { additionalProperties: false },
);

export function registerJwks(app: App, { keyRing }: Pick<Services, 'keyRing'>): void {
  app.get('/.well-known/jwks.json', {
    schema: {
      tags: ['discovery'],
      summary: 'JSON Web Key Set of the tenant',
      response: {
        200: Type.Object({ keys: Type.Array(JsonWebKey) }, { additionalProperties: false }),
        304: noContent('Not modified (If-None-Match matched the ETag)'),
      },
    },
    config: { cors: { kind: 'public' }, rateLimit: { bucket: 'jwks' } },
    handler: async (request, reply) => {
      const document = await keyRing.document(request.tenant.id);
      reply.header('cache-control', 'public, max-age=300, stale-while-revalidate=60').header('etag', document.etag);
      if (request.headers['if-none-match'] === document.etag) return reply.code(304).send();
      // A string body is sent as it is (the schema above describes it; the serializer is not run).
      return reply.type('application/json; charset=utf-8').send(document.body as never);
    },
  });
}
