/**
 * GET and POST /login/callback: where an upstream identity provider sends the browser back (the reference's
 * path). The `state` names a trip to the upstream (federation/start.ts), accepted once, only from the browser
 * that left, and only before it expires; until then nothing is trusted and failures show the error page. After
 * that, the application's redirect URI is known good: an upstream error or an untrustworthy answer ends there as
 * an OAuth error. A good answer becomes the connection's user and an SSO session, and the sign-in continues as
 * after the hosted login page (/authorize/resume: second factor, consent, code or tokens).
 */
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { MFA_PATH, RESUME_PATH, sendAuthorizationError } from './authorize/complete.js';
import { readParameters, type RawParameters } from './authorize/request.js';
import { signInFederatedUser } from '../federation/federated-users.js';
import { openUpstream } from '../federation/secrets.js';
import { CALLBACK_PATH, callbackUrl, pkceContext } from '../federation/start.js';
import { federationStrategy } from '../federation/strategies.js';
import { usesDevelopmentKeys } from '../federation/silent-authentication.js';
import { UpstreamError } from '../federation/upstream-error.js';
import { localParty } from '../federation/local-party.js';
import { MAX_SAML_PARAMETER_CHARS } from '../federation/saml-safety.js';
import { samlpStrategy } from '../federation/samlp.js';
import { InvalidRequest, ProtocolError } from '../http/errors.js';
import { documentedOnly, FORM, frontChannelParameters } from '../http/openapi.js';
import { htmlPage, redirect } from '../http/responses.js';
import { authenticatedNow } from '../login/step.js';
import { sendErrorPage } from '../login/error-page.js';
import { signInResponseHeaders } from '../login/hosted-page.js';
import { sha256, startSession } from '../login/session.js';
import { BROWSER_COOKIE, loadLoginTransaction, saveLoginTransactionRequest } from '../login/transactions.js';
import { requireSecondFactor } from '../mfa/login-step.js';
import { mfaRequired } from '../mfa/policy.js';
import type { App, Services } from '../services.js';
import { findConnectionById, findConnectionByName, listEnabledClients } from '../store/connections.js';
import { consumeFederationTransaction } from '../store/federation-transactions.js';
import { findUser } from '../store/users.js';

const STALE = 'This sign-in has expired, was already completed, or was started in another browser. Go back to the application and sign in again.';

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The callback's parameters: each one once; a SAMLResponse may be as large as saml-safety.ts allows. */
function readCallbackParameters(source: unknown): RawParameters {
  if (!source || typeof source !== 'object' || !('SAMLResponse' in source)) return readParameters(source);
  const { SAMLResponse, ...rest } = source as Record<string, unknown>;
  if (typeof SAMLResponse !== 'string') throw new InvalidRequest('Parameter SAMLResponse must be sent once');
  if (SAMLResponse.length > MAX_SAML_PARAMETER_CHARS) throw new InvalidRequest('The SAML response is too large.');
  return { ...readParameters(rest), SAMLResponse };
}

async function callback(request: FastifyRequest, reply: FastifyReply, services: Services, source: unknown, method: 'GET' | 'POST'): Promise<FastifyReply> {
  signInResponseHeaders(reply);
  let params: RawParameters;
  try {
    params = readCallbackParameters(source);
  } catch (error) {
    if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
    throw error;
  }
  // SAML names the trip RelayState (SAML Bindings §3.5.3); OAuth names it state.
  const saml = method === 'POST' && params.SAMLResponse !== undefined;
  const state = saml ? params.RelayState : params.state;
  const knownShape = state !== undefined && /^[A-Za-z0-9_-]{16,128}$/.test(state);
  if (!knownShape && !saml) return sendErrorPage(reply, request, new InvalidRequest('The identity provider sent no valid state. Go back to the application and sign in again.'));
  const tenant = request.tenant;
  const db = services.store.db;
  // Consumed first: a replayed or concurrent callback finds nothing, whatever happens next.
  const trip = knownShape ? await consumeFederationTransaction(db, tenant.id, sha256(state)) : undefined;
  // A SAML response of no trip of ours: IdP-initiated, if the connection allows it.
  if (!trip && saml) return unsolicitedSamlResponse(request, reply, services, params);
  const browser = request.cookies[BROWSER_COOKIE];
  if (!trip || !browser || !sameHash(sha256(browser), trip.browser_hash)) return sendErrorPage(reply, request, new InvalidRequest(STALE));
  const transaction = await loadLoginTransaction(request, services, trip.login_transaction_id);
  const client = transaction && (await services.configCache.client(tenant.id, transaction.request.clientId));
  if (!transaction || !client) return sendErrorPage(reply, request, new InvalidRequest(STALE));
  const afterPost = method === 'POST';
  const connection = await findConnectionById(db, tenant.id, trip.connection_id);
  const logged = {
    client: { client_id: client.client_id, name: client.name },
    ...(connection && { connection: { id: connection.id, name: connection.name, strategy: connection.strategy } }),
  };

  try {
    const strategy = connection && federationStrategy(connection.strategy);
    if (!connection || !strategy) throw new UpstreamError('access_denied', 'The connection no longer exists');
    const upstreamTrip = {
      state: state!,
      nonce: trip.nonce,
      codeVerifier: services.sealer.unseal(trip.code_verifier_sealed, pkceContext(trip.id)),
      redirectUri: callbackUrl(request),
    };
    const upstream = { ...openUpstream(strategy, services.sealer, connection, services.config.developmentKeys), local: localParty(request, services, connection) };
    const profile = await strategy.completeCallback(upstream, upstreamTrip, params, method);
    const identity = await signInFederatedUser(services, request, connection, strategy, profile);
    // A linked identity signs its primary user in (library rule 8).
    const user = identity.linked_to ? ((await findUser(db, tenant.id, identity.linked_to)) ?? identity) : identity;
    const userName = user.email ?? profile.subject;
    if (user.blocked) {
      services.tenantLogs.recordFor(request, { ...logged, type: 'f', user_id: user.user_id, user_name: userName, description: 'user is blocked' });
      return sendAuthorizationError(reply, request, client, transaction.request, new UpstreamError('access_denied', 'user is blocked'), afterPost);
    }
    services.tenantLogs.recordFor(request, {
      ...logged,
      type: 's',
      user_id: user.user_id,
      user_name: userName,
      ...(usesDevelopmentKeys(connection) && { description: 'Successful login with the development keys of the server (not for production)' }),
    });
    // The user has just authenticated through the connection: prompt=login, max_age and `connection` are
    // satisfied for the rest of this transaction (a linked identity's session is its primary user's, of another
    // connection; a max_age=0 login would otherwise go back to the upstream after its second factor).
    const { connection: _satisfied, ...rest } = authenticatedNow(transaction.request);
    transaction.request = rest;
    await saveLoginTransactionRequest(services, transaction);
    if (mfaRequired(tenant)) {
      // As after a password: no session until the second factor.
      await requireSecondFactor(services, tenant.id, user.user_id, transaction.id, []);
      return reply.redirect(`${MFA_PATH}?state=${transaction.id}`, afterPost ? 303 : 302);
    }
    await startSession(request, reply, services, user, Date.now());
    return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, afterPost ? 303 : 302);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    services.tenantLogs.recordFor(request, { ...logged, type: 'f', description: error.description });
    return sendAuthorizationError(reply, request, client, transaction.request, error, afterPost);
  }
}

type IdpInitiated = { enabled?: boolean; client_id?: string; client_protocol?: string; client_authorizequery?: string };

/**
 * IdP-initiated SAML (a Response without InResponseTo, posted to /login/callback?connection=NAME): accepted only
 * when the connection's `idpinitiated.enabled`, then the user's session starts here and the browser continues to
 * the configured application as if it had asked (/authorize with `client_authorizequery`, or /samlp/{client_id}),
 * where consent and a second factor apply as for any sign-in. Failures end on the error page: no application
 * asked, so there is no redirect URI to trust.
 */
async function unsolicitedSamlResponse(request: FastifyRequest, reply: FastifyReply, services: Services, params: RawParameters): Promise<FastifyReply> {
  const tenant = request.tenant;
  const db = services.store.db;
  const name = (request.query as Record<string, unknown> | undefined)?.connection;
  const connection = typeof name === 'string' && name.length <= 128 ? await findConnectionByName(db, tenant.id, name) : undefined;
  const idp = connection?.strategy === samlpStrategy.name ? (connection.options.idpinitiated as IdpInitiated | undefined) : undefined;
  if (!connection || !idp?.enabled || !idp.client_id) return sendErrorPage(reply, request, new InvalidRequest(STALE));
  const client = await services.configCache.client(tenant.id, idp.client_id);
  if (!client || !(await listEnabledClients(db, connection.id)).includes(client.client_id)) {
    return sendErrorPage(reply, request, new InvalidRequest('The application for IdP-initiated sign-in through this connection does not exist or does not use the connection.'));
  }
  const logged = { client: { client_id: client.client_id, name: client.name }, connection: { id: connection.id, name: connection.name, strategy: connection.strategy } };
  try {
    const upstream = { ...openUpstream(samlpStrategy, services.sealer, connection, services.config.developmentKeys), local: localParty(request, services, connection) };
    const profile = await samlpStrategy.completeUnsolicited(upstream, params, 'POST');
    const identity = await signInFederatedUser(services, request, connection, samlpStrategy, profile);
    const user = identity.linked_to ? ((await findUser(db, tenant.id, identity.linked_to)) ?? identity) : identity;
    if (user.blocked) throw new UpstreamError('access_denied', 'user is blocked');
    services.tenantLogs.recordFor(request, { ...logged, type: 's', user_id: user.user_id, user_name: user.email ?? profile.subject, description: 'IdP-initiated sign-in' });
    await startSession(request, reply, services, user, Date.now());
    if (idp.client_protocol === 'samlp') return reply.redirect(`/samlp/${encodeURIComponent(client.client_id)}`, 303);
    const query = new URLSearchParams(idp.client_authorizequery ?? '');
    query.set('client_id', client.client_id);
    if (!query.has('response_type')) query.set('response_type', 'code');
    return reply.redirect(`/authorize?${query}`, 303);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    services.tenantLogs.recordFor(request, { ...logged, type: 'f', description: error.description });
    return sendErrorPage(reply, request, error);
  }
}

const CALLBACK_PARAMETERS = {
  state: 'The trip to the upstream, as sent there',
  code: 'The upstream authorization code (back channel)',
  id_token: 'The upstream ID token (front channel, form_post)',
  iss: "The upstream's issuer (RFC 9207)",
  error: "The upstream's error",
  error_description: "The upstream's error description",
  session_state: 'OIDC Session Management (ignored)',
  SAMLResponse: 'samlp: the SAML Response (HTTP-POST binding, base64)',
  RelayState: 'samlp: the trip to the upstream, as sent there (absent or foreign when IdP-initiated)',
};

const RESPONSES = {
  400: htmlPage('The error page: the state is missing, unknown, used already, expired or from another browser; nothing is sent to the application'),
};

export function registerLoginCallback(app: App, services: Services): void {
  const config = { rateLimit: { bucket: 'authorize' as const } };
  const tags = ['authentication'];
  app.get(CALLBACK_PATH, {
    config,
    schema: {
      tags,
      summary: 'Return from an upstream identity provider (oidc, oauth2)',
      ...documentedOnly({ querystring: frontChannelParameters(CALLBACK_PARAMETERS, ['state']) }),
      response: {
        200: htmlPage('The OAuth error delivered to the application in its response mode (form_post, web_message)'),
        302: redirect("To /authorize/resume (or /u/mfa) once the upstream's answer is accepted; otherwise to the application's redirect URI with an OAuth error"),
        ...RESPONSES,
      },
    },
    handler: (request, reply) => callback(request, reply, services, request.query, 'GET'),
  });
  app.post(CALLBACK_PATH, {
    config,
    schema: {
      tags,
      summary: 'Return from an upstream identity provider by form_post, and the SAML assertion consumer service (samlp)',
      ...documentedOnly({
        querystring: Type.Object({ connection: Type.Optional(Type.String({ maxLength: 128, description: "samlp: the connection (the ACS URL in the IdP's configuration), for IdP-initiated sign-in" })) }),
        body: frontChannelParameters(CALLBACK_PARAMETERS),
        consumes: [FORM],
      }),
      response: {
        200: htmlPage('The OAuth error delivered to the application in its response mode (form_post, web_message)'),
        303: redirect(
          "To /authorize/resume (or /u/mfa) once the upstream's answer is accepted; otherwise to the application's redirect URI with an OAuth error. IdP-initiated SAML: to /authorize (or /samlp/{client_id}) of the connection's application",
        ),
        ...RESPONSES,
      },
    },
    handler: (request, reply) => callback(request, reply, services, request.body, 'POST'),
  });
}

