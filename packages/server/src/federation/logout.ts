/**
 * Federated logout (`/v2/logout?federated`): after the session here ends, the browser goes to the upstream's
 * end-session endpoint (OIDC RP-Initiated Logout) with the user's last upstream ID token as `id_token_hint`, or,
 * for a samlp connection, to the IdP's SingleLogoutService with a LogoutRequest (saml-logout.ts); the upstream
 * sends it on (or back to /logout) to where the logout would have gone. An upstream without one, or one that
 * cannot be reached, leaves the logout local.
 */
import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';
import { federatedIdentityOf } from './federated-users.js';
import { startSamlUpstreamLogout } from './saml-logout.js';
import { samlpStrategy } from './samlp.js';
import { openUpstream } from './secrets.js';
import { federationStrategy } from './strategies.js';

export async function federatedLogoutUrl(services: Services, request: FastifyRequest, userId: string, returnTo: string | undefined): Promise<URL | undefined> {
  const identity = await federatedIdentityOf(services.store.db, services.sealer, userId);
  if (!identity) return undefined;
  const connection = await findConnectionById(services.store.db, request.tenant.id, identity.connectionId);
  const strategy = connection && federationStrategy(connection.strategy);
  if (!connection || !strategy) return undefined;
  try {
    if (strategy === samlpStrategy) return await startSamlUpstreamLogout(services, request, connection, userId, returnTo);
    if (!strategy.logoutUrl) return undefined;
    return await strategy.logoutUrl(openUpstream(strategy, services.sealer, connection, services.config.developmentKeys), { idToken: identity.idToken, returnTo });
  } catch (error) {
    request.log.info({ connection: connection.name, error: error instanceof Error ? error.name : 'unknown' }, 'federated logout left local: the upstream could not be used');
    return undefined;
  }
}
