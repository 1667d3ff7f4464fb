/**
 * Single logout to every session participant (SAML Profiles §4.4), front-channel as the reference does: when the
 * SSO session ends — a LogoutRequest from one application, or a logout at Gatehouse (/v2/logout, /oidc/logout) —
 * each other SAML application the session signed in to, with `logout.slo_enabled` and a `logout.callback`, is
 * sent a signed LogoutRequest (HTTP-POST, through the browser) for the NameID and SessionIndex it was given. Its
 * LogoutResponse comes back to /samlp/{its client_id}/logout and the browser goes on to the next one; after the
 * last, the logout finishes as it was asked to (a LogoutResponse to the application that started it, a redirect,
 * or the logged-out page). The session itself has already ended when the first request is sent: an application
 * that never answers leaves the browser there, but nobody stays signed in at Gatehouse.
 *
 * The state between hops is a row (`saml_logouts`) named by our RelayState; an answer counts only from the
 * application asked, with InResponseTo of the request we sent it, so it cannot be replayed or forged for another.
 */
import type { Element } from '@xmldom/xmldom';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signingCertificate } from '../../crypto/x509-certificates.js';
import { childElements, SAML_NS, SamlMessageError, xmlEscape } from '../../federation/saml-safety.js';
import { sendHostedPage } from '../../login/hosted-page.js';
import { renderMessagePage } from '../../login/pages/message.js';
import type { Services } from '../../services.js';
import { createSamlLogout, deleteSamlLogout, findSamlLogout, takeSamlParticipants, updateSamlLogout, type SamlParticipant } from '../../store/saml-sessions.js';
import type { SsoSession } from '../../store/sso-sessions.js';
import { samlSettings } from './addon.js';
import { instant, nameIdXml, NS, samlId, signSamlXml } from './assertion.js';
import { certificateSubject, idpEntityId, postToServiceProvider } from './complete.js';

/** How long a logout may take to go round its participants. */
const LOGOUT_TTL_MS = 10 * 60_000;
/** How long each LogoutRequest we send is valid (NotOnOrAfter). */
const REQUEST_LIFETIME_MS = 5 * 60_000;
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const PARTIAL_LOGOUT = 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout';

type Participant = Pick<SamlParticipant, 'client_id' | 'name_id' | 'name_id_format' | 'sp_name_qualifier' | 'session_index'>;

/** How the logout ends once every participant was asked. */
export type LogoutFinish =
  | { kind: 'saml-response'; client_id: string; in_response_to: string; relay_state?: string }
  | { kind: 'redirect'; url: string }
  | { kind: 'page' };

interface LogoutState {
  pending: Participant[];
  asked?: { client_id: string; request_id: string };
  /** Some participant did not confirm its logout. */
  partial: boolean;
  finish: LogoutFinish;
}

export function loggedOutPage(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendHostedPage(reply, request.tenant, (context) => renderMessagePage(context, { title: 'You are logged out', message: 'You have been logged out. You can close this window.' }));
}

/**
 * Called once the SSO session `session` has ended: asks its SAML participants other than `initiator` to log out,
 * then finishes. Without participants to ask, finishes at once.
 */
export async function startSingleLogout(request: FastifyRequest, reply: FastifyReply, services: Services, session: SsoSession | undefined, initiator: string | undefined, finish: LogoutFinish): Promise<FastifyReply> {
  const participants = session ? await takeSamlParticipants(services.store.db, request.tenant.id, session.id) : [];
  const pending = participants
    .filter((p) => p.client_id !== initiator)
    .map(({ client_id, name_id, name_id_format, sp_name_qualifier, session_index }) => ({ client_id, name_id, name_id_format, sp_name_qualifier, session_index }));
  if (pending.length === 0) return finishLogout(request, reply, services, finish, false);
  const state: LogoutState = { pending, partial: false, finish };
  const id = await createSamlLogout(services.store.db, request.tenant.id, state, Date.now() + LOGOUT_TTL_MS);
  return askNext(request, reply, services, id, state);
}

/**
 * A LogoutResponse at /samlp/{client_id}/logout: when its RelayState names a logout in progress, it must answer the
 * request we sent this application; the browser then goes on. Undefined when it belongs to no logout of ours.
 */
export async function continueSingleLogout(request: FastifyRequest, reply: FastifyReply, services: Services, clientId: string, response: Element, relayState: string | undefined): Promise<FastifyReply | undefined> {
  if (relayState === undefined || !/^[0-9a-f]{40}$/.test(relayState)) return undefined;
  const state = (await findSamlLogout(services.store.db, request.tenant.id, relayState)) as LogoutState | undefined;
  if (!state) return undefined;
  if (state.asked?.client_id !== clientId || response.getAttribute('InResponseTo') !== state.asked.request_id) {
    throw new SamlMessageError('This LogoutResponse does not answer the logout request Gatehouse sent to this application.');
  }
  const status = childElements(response, SAML_NS.protocol, 'Status')[0];
  const code = status && childElements(status, SAML_NS.protocol, 'StatusCode')[0]?.getAttribute('Value');
  if (code !== SUCCESS) state.partial = true;
  delete state.asked;
  return askNext(request, reply, services, relayState, state);
}

async function askNext(request: FastifyRequest, reply: FastifyReply, services: Services, id: string, state: LogoutState): Promise<FastifyReply> {
  const tenant = request.tenant;
  for (let next = state.pending.shift(); next; next = state.pending.shift()) {
    const client = await services.configCache.client(tenant.id, next.client_id);
    const settings = client && samlSettings(client);
    // An application deleted since, or without single logout: nothing to tell it.
    if (!settings?.sloEnabled || !settings.logoutCallback) continue;
    const now = Date.now();
    const requestId = samlId();
    const issuer = idpEntityId(tenant, settings);
    const xml =
      `<samlp:LogoutRequest ${NS} ID="${requestId}" Version="2.0" IssueInstant="${instant(now)}" NotOnOrAfter="${instant(now + REQUEST_LIFETIME_MS)}" Destination="${xmlEscape(settings.logoutCallback)}">` +
      `<saml:Issuer>${xmlEscape(issuer)}</saml:Issuer>` +
      nameIdXml(next.name_id_format, { value: next.name_id, ...(next.sp_name_qualifier !== null && { spNameQualifier: next.sp_name_qualifier }) }) +
      `<samlp:SessionIndex>${xmlEscape(next.session_index)}</samlp:SessionIndex>` +
      `</samlp:LogoutRequest>`;
    const key = await services.keyRing.signingKey(tenant.id);
    const signed = signSamlXml(xml, "/*[local-name(.)='LogoutRequest']", { key, certificatePem: await signingCertificate(key, certificateSubject(tenant)), settings });
    state.asked = { client_id: next.client_id, request_id: requestId };
    await updateSamlLogout(services.store.db, id, state);
    request.log.info({ client_id: next.client_id }, 'SAML LogoutRequest sent');
    return postToServiceProvider(reply, tenant, settings.logoutCallback, { SAMLRequest: Buffer.from(signed, 'utf8').toString('base64'), RelayState: id });
  }
  await deleteSamlLogout(services.store.db, id);
  return finishLogout(request, reply, services, state.finish, state.partial);
}

async function finishLogout(request: FastifyRequest, reply: FastifyReply, services: Services, finish: LogoutFinish, partial: boolean): Promise<FastifyReply> {
  if (finish.kind === 'redirect') return reply.redirect(finish.url, 302);
  if (finish.kind === 'page') return loggedOutPage(reply, request);
  const tenant = request.tenant;
  const client = await services.configCache.client(tenant.id, finish.client_id);
  const settings = client && samlSettings(client);
  if (!settings?.logoutCallback || !settings.sloEnabled) return loggedOutPage(reply, request);
  const key = await services.keyRing.signingKey(tenant.id);
  // PartialLogout is a second-level code under Success (SAML Core §3.2.2.2): this session ended, another may not have.
  const statusCode = partial ? `<samlp:StatusCode Value="${SUCCESS}"><samlp:StatusCode Value="${PARTIAL_LOGOUT}"/></samlp:StatusCode>` : `<samlp:StatusCode Value="${SUCCESS}"/>`;
  const xml =
    `<samlp:LogoutResponse ${NS} ID="${samlId()}" Version="2.0" IssueInstant="${instant(Date.now())}" Destination="${xmlEscape(settings.logoutCallback)}" InResponseTo="${xmlEscape(finish.in_response_to)}">` +
    `<saml:Issuer>${xmlEscape(idpEntityId(tenant, settings))}</saml:Issuer>` +
    `<samlp:Status>${statusCode}</samlp:Status>` +
    `</samlp:LogoutResponse>`;
  const signed = signSamlXml(xml, "/*[local-name(.)='LogoutResponse']", { key, certificatePem: await signingCertificate(key, certificateSubject(tenant)), settings });
  return postToServiceProvider(reply, tenant, settings.logoutCallback, {
    SAMLResponse: Buffer.from(signed, 'utf8').toString('base64'),
    ...(finish.relay_state !== undefined && { RelayState: finish.relay_state }),
  });
}
