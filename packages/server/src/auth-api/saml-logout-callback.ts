/**
 * GET and POST /logout: our SingleLogoutService as a SAML service provider (named in the SP metadata of a samlp
 * connection that signs out). The IdP's LogoutResponse to a federated logout comes back here (HTTP-Redirect or
 * HTTP-POST); its RelayState names the logout we sent (answered once, for ten minutes), federation/saml-logout.ts
 * checks it, and the browser continues to the returnTo the logout accepted (or the logged-out page). A status
 * other than Success still continues (our session is gone; the user asked to leave) and is logged as a failed
 * logout. An untrustworthy or unknown answer ends on the error page: nothing in it is followed. A LogoutRequest
 * from the IdP (IdP-initiated logout) is not offered: 501 `not_offered` (JSON, as the service's other refusals).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readLogoutResponse } from '../federation/saml-logout.js';
import { SAML_LOGOUT_CALLBACK_PATH } from '../federation/samlp.js';
import { SamlMessageError } from '../federation/saml-safety.js';
import { InvalidRequest, NotOffered, ProtocolError } from '../http/errors.js';
import { documentedOnly, FORM, frontChannelParameters } from '../http/openapi.js';
import { errorResponses, htmlPage, redirect } from '../http/responses.js';
import { sendErrorPage } from '../login/error-page.js';
import { sha256 } from '../login/session.js';
import type { App, Services } from '../services.js';
import { findConnectionById } from '../store/connections.js';
import { consumeSamlUpstreamLogout } from '../store/saml-upstream-logout.js';
import { loggedOutPage } from './samlp/single-logout.js';
import { rawQueryOf, readSamlParameters } from './samlp/parameters.js';

const UNKNOWN = 'This logout answer is unknown, expired or was already used. You are logged out of this service.';

async function logoutCallback(request: FastifyRequest, reply: FastifyReply, services: Services, source: unknown, binding: 'redirect' | 'post'): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  try {
    const params = readSamlParameters(source);
    if (params.SAMLRequest !== undefined) throw new NotOffered('IdP-initiated SAML logout', 'is not offered: this service sends LogoutRequests to identity providers (/v2/logout?federated) but does not take them.');
    if (params.SAMLResponse === undefined) throw new InvalidRequest('A SAMLResponse (LogoutResponse) is required.');
    const relayState = params.RelayState;
    if (relayState === undefined || !/^[A-Za-z0-9_-]{16,128}$/.test(relayState)) throw new InvalidRequest(UNKNOWN);
    const pending = await consumeSamlUpstreamLogout(services.store.db, request.tenant.id, sha256(relayState));
    const connection = pending && (await findConnectionById(services.store.db, request.tenant.id, pending.connection_id));
    if (!pending || !connection) throw new InvalidRequest(UNKNOWN);
    const answer = readLogoutResponse(
      { binding, encoded: params.SAMLResponse, rawQuery: rawQueryOf(request), redirectSigned: params.Signature !== undefined },
      connection,
      request.tenant.baseUrl,
      pending.request_id,
    );
    // The logout itself was logged at /v2/logout; only an IdP that did not confirm it is worth a tenant log event.
    if (answer.success) request.log.info({ connection: connection.name }, 'logged out of the SAML identity provider');
    else services.tenantLogs.recordFor(request, { connection: { id: connection.id, name: connection.name, strategy: connection.strategy }, type: 'flo', description: `The SAML identity provider did not confirm the logout (${answer.status})` });
    if (pending.return_to) return reply.redirect(pending.return_to, binding === 'post' ? 303 : 302);
    return loggedOutPage(reply, request);
  } catch (error) {
    if (error instanceof SamlMessageError) return sendErrorPage(reply, request, new InvalidRequest(`The identity provider's logout answer was refused: ${error.message}`));
    // Not offered is the service's answer, not a page of a flow: the JSON error, 501.
    if (error instanceof NotOffered) throw error;
    if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
    throw error;
  }
}

const PARAMETERS = {
  SAMLResponse: "The IdP's LogoutResponse",
  RelayState: 'The logout it answers, as sent with our LogoutRequest',
  SigAlg: 'HTTP-Redirect: the signature algorithm',
  Signature: 'HTTP-Redirect: the signature',
  SAMLRequest: 'A LogoutRequest from the IdP: not offered (501)',
};

const RESPONSES = {
  200: htmlPage('The logged-out page (the logout had no returnTo)'),
  400: htmlPage('The error page: no, an unknown, expired or used RelayState, or a LogoutResponse that is malformed, badly signed or answers another request'),
  ...errorResponses('oauth', { 501: 'not_offered: a LogoutRequest from the identity provider (IdP-initiated logout)' }),
};

export function registerSamlLogoutCallback(app: App, services: Services): void {
  const config = { rateLimit: { bucket: 'authorize' as const } };
  const tags = ['saml'];
  app.get(SAML_LOGOUT_CALLBACK_PATH, {
    config,
    schema: {
      tags,
      summary: "The identity provider's answer to a federated SAML logout (HTTP-Redirect binding)",
      ...documentedOnly({ querystring: frontChannelParameters(PARAMETERS) }),
      response: { ...RESPONSES, 302: redirect('To the returnTo the logout accepted') },
    },
    handler: (request, reply) => logoutCallback(request, reply, services, request.query, 'redirect'),
  });
  app.post(SAML_LOGOUT_CALLBACK_PATH, {
    config,
    schema: {
      tags,
      summary: "The identity provider's answer to a federated SAML logout (HTTP-POST binding)",
      ...documentedOnly({ body: frontChannelParameters(PARAMETERS), consumes: [FORM] }),
      response: { ...RESPONSES, 303: redirect('To the returnTo the logout accepted') },
    },
    handler: (request, reply) => logoutCallback(request, reply, services, request.body, 'post'),
  });
}
