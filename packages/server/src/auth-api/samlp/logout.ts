/**
 * SAML single logout at `/samlp/{client_id}/logout` (SAML Profiles §4.4), both bindings; messages signed when the
 * application registered `signingCert`:
 *
 *  - a LogoutRequest from the application ends this browser's SSO session, then the other SAML applications of
 *    the session are asked to log out (single-logout.ts), then the application gets a signed LogoutResponse at
 *    its `logout.callback`;
 *  - a LogoutResponse is either the answer to a LogoutRequest Gatehouse sent (the logout goes on to the next
 *    application) or ends on the logged-out page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SAML_NS, SamlMessageError } from '../../federation/saml-safety.js';
import { InvalidRequest } from '../../http/errors.js';
import { endSsoSession } from '../../login/session.js';
import { recordLogout } from '../../logs/logouts.js';
import type { Services } from '../../services.js';
import { recordClientAssertion } from '../../store/client-assertions.js';
import { MAX_REQUEST_AGE_MS, readProtocolMessage, type Binding } from './authn-request.js';
import { rawQueryOf, samlApplication } from './parameters.js';
import { continueSingleLogout, loggedOutPage, startSingleLogout } from './single-logout.js';

export async function handleSingleLogout(request: FastifyRequest, reply: FastifyReply, services: Services, params: Record<string, string>, binding: Binding): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  const { client, settings } = await samlApplication(services, request, (request.params as { clientId: string }).clientId);
  const parameter = params.SAMLRequest !== undefined ? 'SAMLRequest' : params.SAMLResponse !== undefined ? 'SAMLResponse' : undefined;
  if (!parameter) throw new InvalidRequest('A SAMLRequest (LogoutRequest) or SAMLResponse (LogoutResponse) is required.');
  const root = readProtocolMessage({ binding, encoded: params[parameter]!, ...(binding === 'redirect' && { rawQuery: rawQueryOf(request) }) }, parameter, settings.signingCert);

  if (parameter === 'SAMLResponse') {
    if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'LogoutResponse') throw new SamlMessageError('The SAML message is not a LogoutResponse.');
    return (await continueSingleLogout(request, reply, services, client.client_id, root, params.RelayState)) ?? loggedOutPage(reply, request);
  }
  if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'LogoutRequest') throw new SamlMessageError('The SAML message is not a LogoutRequest.');
  const id = root.getAttribute('ID') ?? '';
  if (!/^[A-Za-z_][\w.-]{0,255}$/.test(id)) throw new SamlMessageError('The LogoutRequest has no valid ID.');
  const now = Date.now();
  if (!(await recordClientAssertion(services.store.db, { tenant_id: request.tenant.id, client_id: client.client_id, jti: `samlp-logout:${id}`, expires_at: now + 2 * MAX_REQUEST_AGE_MS }))) {
    throw new InvalidRequest('This LogoutRequest was already used.');
  }
  // The user asked to log out: the session ends whatever happens next.
  const session = await endSsoSession(request, reply, services, 'rp-logout');
  recordLogout(services, request, { client, ...(session && { userId: session.user_id }) });
  return startSingleLogout(request, reply, services, session, client.client_id, {
    kind: 'saml-response',
    client_id: client.client_id,
    in_response_to: id,
    ...(params.RelayState !== undefined && { relay_state: params.RelayState }),
  });
}
