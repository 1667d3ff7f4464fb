/**
 * GET /.well-known/jwks.json of the default tenant: the hottest public endpoint (every relying party fetches
 * it to verify tokens). On Gatehouse it passes tenancy by Host, CORS, the token-bucket limiter, the cached
 * key ring and the response schema; the peer returns the same document from a bare route.
 */
import { fileURLToPath } from 'node:url';
import { sameBodyScenario } from '../lib/same-body.js';

export default sameBodyScenario({
  name: 'jwks',
  path: '/.well-known/jwks.json',
  headers: ({ host }) => ({ host, accept: 'application/json' }),
  peer: { label: 'bare Fastify', script: fileURLToPath(new URL('../peers/bare-fastify.js', import.meta.url)) },
  rateLimitBuckets: ['jwks'],
  // Issue #18: Gatehouse's pipeline at no less than 0.6× of a bare Fastify route sending the same bytes.
  goal: 0.6,
});
