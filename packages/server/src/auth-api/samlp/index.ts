/**
 * Gatehouse as a SAML 2.0 identity provider for applications with `addons.samlp` (the reference's paths):
 *
 *  - `GET|POST /samlp/{client_id}`: SP-initiated sign-in, the AuthnRequest by the HTTP-Redirect or HTTP-POST
 *    binding; without a SAMLRequest, IdP-initiated sign-in (the application named in the path, the rest in the
 *    query or a form body; RelayState from the request or the add-on's `defaultRelayState`);
 *  - `GET /samlp/metadata/{client_id}`: our IdP metadata with the signing certificates;
 *  - `GET|POST /samlp/{client_id}/logout`: single logout (a LogoutRequest ends the SSO session and is answered
 *    with a LogoutResponse to the add-on's `logout.callback`);
 *  - `GET /pem`, `GET /cer`: the tenant's current signing certificate.
 *
 * Until the application and its ACS URL are known good, every refusal is the error page, never a redirect.
 */
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { signingCertificate, certificateBody } from '../../crypto/x509-certificates.js';
import { SamlMessageError } from '../../federation/saml-safety.js';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { documentedOnly, FORM, frontChannelParameters } from '../../http/openapi.js';
import { htmlPage, redirect, textBody } from '../../http/responses.js';
import { sendErrorPage } from '../../login/error-page.js';
import { signInResponseHeaders } from '../../login/hosted-page.js';
import type { App, Services } from '../../services.js';
import { recordClientAssertion } from '../../store/client-assertions.js';
import type { AuthorizationRequest, SamlSignIn } from '../authorize/request.js';
import { MAX_REQUEST_AGE_MS, readAuthnRequest, type ReceivedMessage } from './authn-request.js';
import { certificateSubject, continueSamlSignIn } from './complete.js';
import { handleSingleLogout } from './logout.js';
import { renderIdpMetadata } from './metadata.js';
import { rawQueryOf, readSamlParameters, samlApplication } from './parameters.js';

export const SAMLP_PATH = '/samlp';

function refuse(reply: FastifyReply, request: FastifyRequest, error: unknown): FastifyReply {
  if (error instanceof SamlMessageError) return sendErrorPage(reply, request, new InvalidRequest(error.message));
  if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
  throw error;
}

async function signIn(request: FastifyRequest, reply: FastifyReply, services: Services, source: unknown, afterPost: boolean): Promise<FastifyReply> {
  signInResponseHeaders(reply);
  try {
    const params = readSamlParameters(source);
    const { client, settings } = await samlApplication(services, request, (request.params as { clientId: string }).clientId);
    const relayState = params.RelayState;
    let saml: SamlSignIn;
    let forceAuthn = false;
    if (params.SAMLRequest === undefined) {
      // IdP-initiated: to the application's first callback (its ACS URL), for the configured audience.
      const acsUrl = client.callbacks[0];
      if (!acsUrl) throw new InvalidRequest('The application has no callback URL (its ACS URL) to send the sign-in to.');
      const audience = settings.audience ?? acsUrl;
      const relay = relayState ?? settings.defaultRelayState;
      saml = { acsUrl, audience, ...(relay !== undefined && { relayState: relay }) };
    } else {
      const message: ReceivedMessage = afterPost ? { binding: 'post', encoded: params.SAMLRequest } : { binding: 'redirect', encoded: params.SAMLRequest, rawQuery: rawQueryOf(request) };
      const now = Date.now();
      const authn = readAuthnRequest(message, settings.signingCert, now);
      const acsUrl = authn.acsUrl ?? client.callbacks[0];
      if (!acsUrl) throw new InvalidRequest('The AuthnRequest names no ACS URL and the application has no callback URL.');
      if (!client.callbacks.includes(acsUrl)) throw new InvalidRequest(`The ACS URL is not one of the application's callback URLs: ${acsUrl.slice(0, 300)}`);
      // Each AuthnRequest is used once (replay), on any node: its ID is remembered until it would have expired.
      const fresh = await recordClientAssertion(services.store.db, { tenant_id: request.tenant.id, client_id: client.client_id, jti: `samlp:${authn.id}`, expires_at: now + 2 * MAX_REQUEST_AGE_MS });
      if (!fresh) throw new InvalidRequest('This AuthnRequest was already used. Go back to the application and sign in again.');
      const audience = settings.audience ?? authn.issuer ?? acsUrl;
      saml = { requestId: authn.id, acsUrl, audience, ...(relayState !== undefined && { relayState }), ...(authn.isPassive && { isPassive: true }) };
      forceAuthn = authn.forceAuthn;
    }
    const authorization: AuthorizationRequest & { saml: SamlSignIn } = {
      clientId: client.client_id,
      redirectUri: saml.acsUrl,
      responseType: '',
      responseMode: 'form_post',
      scope: 'openid profile email',
      prompt: forceAuthn ? ['login'] : [],
      saml,
    };
    return await continueSamlSignIn(request, reply, services, { client, request: authorization, afterPost });
  } catch (error) {
    return refuse(reply, request, error);
  }
}

const SSO_PARAMETERS = frontChannelParameters({
  SAMLRequest: 'The AuthnRequest: base64 of its DEFLATEd XML (HTTP-Redirect) or of its XML (HTTP-POST). Without it, an IdP-initiated sign-in',
  RelayState: 'Returned to the service provider with the Response (at most 1024 characters)',
  SigAlg: 'HTTP-Redirect: the signature algorithm (RSA with SHA-256 or SHA-512)',
  Signature: 'HTTP-Redirect: the signature over SAMLRequest, RelayState and SigAlg as encoded in the URL',
});
const CLIENT_PARAMS = Type.Object({ clientId: Type.String({ maxLength: 200, description: 'The application (client_id)' }) });
const SIGN_IN_RESPONSES = {
  200: htmlPage("A page that posts the signed SAML Response to the application's ACS URL"),
  302: redirect('To the hosted login page (or the second factor)'),
  400: htmlPage('The error page: unknown application, no samlp add-on, a malformed, oversized, unsigned (when required), badly signed, expired or replayed AuthnRequest, or an ACS URL that is not a callback of the application'),
};

export function registerSamlp(app: App, services: Services): void {
  const config = { rateLimit: { bucket: 'authorize' as const } };
  const tags = ['saml'];

  app.get(`${SAMLP_PATH}/:clientId`, {
    config,
    schema: { tags, summary: 'SAML sign-in (HTTP-Redirect binding, or IdP-initiated)', params: CLIENT_PARAMS, ...documentedOnly({ querystring: SSO_PARAMETERS }), response: SIGN_IN_RESPONSES },
    handler: (request, reply) => signIn(request, reply, services, request.query, false),
  });
  app.post(`${SAMLP_PATH}/:clientId`, {
    config,
    schema: {
      tags,
      summary: 'SAML sign-in (HTTP-POST binding, or IdP-initiated with a form body)',
      params: CLIENT_PARAMS,
      ...documentedOnly({ body: SSO_PARAMETERS, consumes: [FORM] }),
      response: { 200: SIGN_IN_RESPONSES[200], 303: redirect('To the hosted login page (or the second factor)'), 400: SIGN_IN_RESPONSES[400] },
    },
    handler: (request, reply) => signIn(request, reply, services, request.body, true),
  });

  app.get(`${SAMLP_PATH}/metadata/:clientId`, {
    config,
    schema: {
      tags,
      summary: 'SAML identity provider metadata for an application',
      params: CLIENT_PARAMS,
      response: { 200: textBody('The EntityDescriptor (SAML metadata) with the signing certificates', 'application/samlmetadata+xml'), 400: htmlPage('The error page: unknown application or no samlp add-on') },
    },
    handler: async (request, reply) => {
      try {
        const { client, settings } = await samlApplication(services, request, request.params.clientId);
        const xml = await renderIdpMetadata(services, request.tenant, client, settings);
        return reply.header('content-type', 'application/samlmetadata+xml; charset=utf-8').header('cache-control', 'public, max-age=300').send(xml);
      } catch (error) {
        return refuse(reply, request, error);
      }
    },
  });

  const LOGOUT_RESPONSES = {
    200: htmlPage('A page that posts the signed LogoutResponse to the logout callback, or the logged-out page'),
    400: htmlPage('The error page: unknown application, or a malformed, unsigned (when required) or badly signed message'),
  };
  app.get(`${SAMLP_PATH}/:clientId/logout`, {
    config,
    schema: {
      tags,
      summary: 'SAML single logout (HTTP-Redirect binding)',
      params: CLIENT_PARAMS,
      ...documentedOnly({ querystring: frontChannelParameters({ SAMLRequest: 'A LogoutRequest', SAMLResponse: 'A LogoutResponse', RelayState: 'Returned with the answer', SigAlg: 'The signature algorithm', Signature: 'The signature' }) }),
      response: LOGOUT_RESPONSES,
    },
    handler: async (request, reply) => {
      try {
        return await handleSingleLogout(request, reply, services, readSamlParameters(request.query), 'redirect');
      } catch (error) {
        return refuse(reply, request, error);
      }
    },
  });
  app.post(`${SAMLP_PATH}/:clientId/logout`, {
    config,
    schema: {
      tags,
      summary: 'SAML single logout (HTTP-POST binding)',
      params: CLIENT_PARAMS,
      ...documentedOnly({ body: frontChannelParameters({ SAMLRequest: 'A LogoutRequest', SAMLResponse: 'A LogoutResponse', RelayState: 'Returned with the answer' }), consumes: [FORM] }),
      response: LOGOUT_RESPONSES,
    },
    handler: async (request, reply) => {
      try {
        return await handleSingleLogout(request, reply, services, readSamlParameters(request.body), 'post');
      } catch (error) {
        return refuse(reply, request, error);
      }
    },
  });

  // The tenant's current signing certificate, as the reference publishes it.
  app.get('/pem', {
    config: { rateLimit: { bucket: 'jwks' } },
    schema: { tags, summary: 'The signing certificate (PEM)', response: { 200: textBody('The X.509 certificate of the current signing key', 'application/x-pem-file') } },
    handler: async (request, reply) => {
      const key = await services.keyRing.signingKey(request.tenant.id);
      const pem = await signingCertificate(key, certificateSubject(request.tenant));
      return reply.header('content-type', 'application/x-pem-file').header('cache-control', 'public, max-age=300').send(pem);
    },
  });
  app.get('/cer', {
    config: { rateLimit: { bucket: 'jwks' } },
    schema: { tags, summary: 'The signing certificate (DER)', response: { 200: textBody('The X.509 certificate of the current signing key, DER-encoded', 'application/x-x509-ca-cert') } },
    handler: async (request, reply) => {
      const key = await services.keyRing.signingKey(request.tenant.id);
      const pem = await signingCertificate(key, certificateSubject(request.tenant));
      return reply
        .header('content-type', 'application/x-x509-ca-cert')
        .header('content-disposition', `attachment; filename="${request.tenant.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.cer"`)
        .header('cache-control', 'public, max-age=300')
        .send(Buffer.from(certificateBody(pem), 'base64'));
    },
  });
}
