/**
 * SAML single logout at `/samlp/{client_id}/logout` (SAML Profiles §4.4), SP-initiated: a LogoutRequest
 * (HTTP-Redirect or HTTP-POST; signed when the application registered `signingCert`) ends this browser's SSO
 * session and is answered with a signed LogoutResponse, posted to the add-on's `logout.callback`. A
 * LogoutResponse arriving here (after a logout we asked for) ends on the logged-out page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signingCertificate } from '../../crypto/x509-certificates.js';
import { SAML_NS, SamlMessageError, xmlEscape } from '../../federation/saml-safety.js';
import { InvalidRequest } from '../../http/errors.js';
import { sendHostedPage } from '../../login/hosted-page.js';
import { renderMessagePage } from '../../login/pages/message.js';
import { endSession } from '../../login/session.js';
import { recordLogout } from '../../logs/logouts.js';
import type { Services } from '../../services.js';
import { recordClientAssertion } from '../../store/client-assertions.js';
import { instant, NS, samlId, signSamlXml } from './assertion.js';
import { MAX_REQUEST_AGE_MS, readProtocolMessage, type Binding } from './authn-request.js';
import { certificateSubject, idpEntityId, postToServiceProvider } from './complete.js';
import { rawQueryOf, samlApplication } from './parameters.js';

function loggedOut(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendHostedPage(reply, request.tenant, (context) => renderMessagePage(context, { title: 'You are logged out', message: 'You have been logged out. You can close this window.' }));
}

export async function handleSingleLogout(request: FastifyRequest, reply: FastifyReply, services: Services, params: Record<string, string>, binding: Binding): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  const { client, settings } = await samlApplication(services, request, (request.params as { clientId: string }).clientId);
  const parameter = params.SAMLRequest !== undefined ? 'SAMLRequest' : params.SAMLResponse !== undefined ? 'SAMLResponse' : undefined;
  if (!parameter) throw new InvalidRequest('A SAMLRequest (LogoutRequest) or SAMLResponse (LogoutResponse) is required.');
  const root = readProtocolMessage({ binding, encoded: params[parameter]!, ...(binding === 'redirect' && { rawQuery: rawQueryOf(request) }) }, parameter, settings.signingCert);

  if (parameter === 'SAMLResponse') {
    if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'LogoutResponse') throw new SamlMessageError('The SAML message is not a LogoutResponse.');
    return loggedOut(reply, request);
  }
  if (root.namespaceURI !== SAML_NS.protocol || root.localName !== 'LogoutRequest') throw new SamlMessageError('The SAML message is not a LogoutRequest.');
  const id = root.getAttribute('ID') ?? '';
  if (!/^[A-Za-z_][\w.-]{0,255}$/.test(id)) throw new SamlMessageError('The LogoutRequest has no valid ID.');
  const now = Date.now();
  if (!(await recordClientAssertion(services.store.db, { tenant_id: request.tenant.id, client_id: client.client_id, jti: `samlp-logout:${id}`, expires_at: now + 2 * MAX_REQUEST_AGE_MS }))) {
    throw new InvalidRequest('This LogoutRequest was already used.');
  }
  // The user asked to log out: the session ends whatever happens next.
  const userId = await endSession(request, reply, services, 'rp-logout');
  recordLogout(services, request, { client, ...(userId !== undefined && { userId }) });
  if (!settings.logoutCallback || !settings.sloEnabled) return loggedOut(reply, request);

  const key = await services.keyRing.signingKey(request.tenant.id);
  const certificatePem = await signingCertificate(key, certificateSubject(request.tenant));
  const xml =
    `<samlp:LogoutResponse ${NS} ID="${samlId()}" Version="2.0" IssueInstant="${instant(now)}" Destination="${xmlEscape(settings.logoutCallback)}" InResponseTo="${xmlEscape(id)}">` +
    `<saml:Issuer>${xmlEscape(idpEntityId(request.tenant, settings))}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `</samlp:LogoutResponse>`;
  const signed = signSamlXml(xml, "/*[local-name(.)='LogoutResponse']", { key, certificatePem, settings });
  return postToServiceProvider(reply, request.tenant, settings.logoutCallback, {
    SAMLResponse: Buffer.from(signed, 'utf8').toString('base64'),
    ...(params.RelayState !== undefined && { RelayState: params.RelayState }),
  });
}
