/**
 * Sending the browser to the upstream for a login transaction: a fresh `state`, `nonce` and PKCE verifier,
 * remembered (state hashed, verifier sealed) with the browser they belong to, for ten minutes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomSecret } from '../crypto/ids.js';
import { browserValue, type LoginTransaction } from '../login/transactions.js';
import { sha256 } from '../login/session.js';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import { insertFederationTransaction, purgeExpiredFederationTransactions } from '../store/federation-transactions.js';
import { sendHostedPage } from '../login/hosted-page.js';
import { renderFormPost } from '../login/pages/form-post.js';
import { localParty } from './local-party.js';
import { openUpstream } from './secrets.js';
import { federationStrategy } from './strategies.js';

export const CALLBACK_PATH = '/login/callback';
/** A user has this long at the upstream (its login page, its MFA) before the trip expires. */
const TRIP_LIFETIME_MS = 10 * 60_000;
let startedSincePurge = 0;

export const pkceContext = (tripId: string) => `federation_pkce:${tripId}`;

export function callbackUrl(request: FastifyRequest): string {
  return `${request.tenant.baseUrl}${CALLBACK_PATH}`;
}

export function isFederated(connection: Pick<Connection, 'strategy'>): boolean {
  return federationStrategy(connection.strategy) !== undefined;
}

/**
 * Redirects to the upstream's authorization endpoint, the trip bound to the browser cookie of the login
 * transaction. Throws UpstreamError when the upstream cannot be used (discovery down or refused).
 */
export async function redirectUpstream(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  transaction: LoginTransaction,
  connection: Connection,
  afterPost: boolean,
  now = Date.now(),
): Promise<FastifyReply> {
  const strategy = federationStrategy(connection.strategy)!;
  if (++startedSincePurge >= 200) {
    startedSincePurge = 0;
    await purgeExpiredFederationTransactions(services.store.db, now);
  }
  const trip = { state: randomSecret(32), nonce: randomSecret(24), codeVerifier: randomSecret(48), redirectUri: callbackUrl(request) };
  const upstream = { ...openUpstream(strategy, services.sealer, connection, services.config.developmentKeys), local: localParty(request, services, connection) };
  const destination = await strategy.authorizationUrl(upstream, trip);
  const id = sha256(trip.state);
  await insertFederationTransaction(services.store.db, {
    id,
    tenant_id: request.tenant.id,
    connection_id: connection.id,
    login_transaction_id: transaction.id,
    browser_hash: sha256(browserValue(request, reply)),
    code_verifier_sealed: services.sealer.seal(trip.codeVerifier, pkceContext(id)),
    nonce: trip.nonce,
    expires_at: now + TRIP_LIFETIME_MS,
    created_at: now,
  });
  request.log.info({ connection: connection.name, strategy: connection.strategy }, 'sign-in sent to the upstream identity provider');
  if (destination instanceof URL) return reply.redirect(destination.href, afterPost ? 303 : 302);
  // SAML HTTP-POST binding: the browser posts the AuthnRequest itself, by an auto-submitting form.
  return sendHostedPage(reply, request.tenant, () => renderFormPost(destination), { formAction: [destination.action] });
}
