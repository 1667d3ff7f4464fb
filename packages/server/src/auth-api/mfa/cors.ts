/** The MFA API is called from browsers too (auth-spa-js): CORS as at /oauth/token, for the origins the tenant's clients allow. */
import type { Services } from '../../services.js';
import type { FastifyRequest } from 'fastify';

export const MFA_CORS = (services: Services) => ({
  kind: 'origins' as const,
  credentials: false,
  isAllowed: (request: FastifyRequest, origin: string) => services.clientOrigins.allows(request.tenant.id, origin),
});
