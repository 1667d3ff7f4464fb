/**
 * GET /.well-known/jwks.json: the tenant's published public keys (current, next, previous). Cacheable for
 * five minutes: a key is published as `next` a whole rotation before it signs, so cached sets stay valid.
 */
import { Type } from '@fastify/type-provider-typebox';
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
      response: { 200: Type.Object({ keys: Type.Array(JsonWebKey) }, { additionalProperties: false }) },
    },
    config: { cors: { kind: 'public' }, rateLimit: { bucket: 'jwks' } },
    handler: async (request, reply) => {
      reply.header('cache-control', 'public, max-age=300, stale-while-revalidate=60');
      return keyRing.jwks(request.tenant.id);
    },
  });
}
