/**
 * Logout: GET /v2/logout (the reference's: `client_id`, `returnTo`, `federated`) and GET /oidc/logout (OIDC
 * RP-Initiated Logout: `id_token_hint`, `client_id`, `post_logout_redirect_uri`, `state`). Both end the SSO
 * session on the server and clear its cookie, then redirect only to a URL registered for logout — the named
 * client's allowed logout URLs, or the tenant's when no client is named — and otherwise show a page. Never an
 * open redirect.
 */
import type { FastifyRequest } from 'fastify';
import { verifyIdTokenHint } from '../crypto/access-token.js';
import { InvalidRequest, ProtocolError } from '../http/errors.js';
import { documentedOnly, frontChannelParameters } from '../http/openapi.js';
import { htmlPage, redirect } from '../http/responses.js';
import { sendErrorPage } from '../login/error-page.js';
import { endSsoSession } from '../login/session.js';
import { federatedLogoutUrl } from '../federation/logout.js';
import { recordLogout, type LogoutFacts } from '../logs/logouts.js';
import type { App, Services } from '../services.js';
import type { Client } from '../store/clients.js';
import { readParameters } from './authorize/request.js';
import { startSingleLogout } from './samlp/single-logout.js';

export const LOGOUT_PATH = '/v2/logout';
export const OIDC_LOGOUT_PATH = '/oidc/logout';

async function clientNamed(services: Services, request: FastifyRequest, clientId: string | undefined): Promise<Client | undefined> {
  if (!clientId) return undefined;
  const client = clientId.length <= 200 ? await services.configCache.client(request.tenant.id, clientId) : undefined;
  if (!client) throw new InvalidRequest('Unknown client: the client_id does not name an application of this tenant', 'invalid_client');
  return client;
}

function withState(url: string, state: string | undefined): string {
  if (state === undefined) return url;
  return `${url}${url.includes('?') ? '&' : '?'}state=${encodeURIComponent(state)}`;
}

const LOGGED_OUT_OR_SLO = htmlPage('The logged-out page, or, when the session had signed in to SAML applications with single logout, a page that posts a LogoutRequest to the first of them (the browser comes back and goes on)');
const REFUSED = htmlPage('The error page: an unknown client, a return URL that is not registered, or a repeated parameter. The session is left as it was when the client is unknown, ended otherwise');

export function registerLogout(app: App, services: Services): void {
  const config = { rateLimit: { bucket: 'authorize' as const } };
  const tags = ['authentication'];

  app.get(LOGOUT_PATH, {
    config,
    schema: {
      tags,
      summary: 'Log out (the reference\'s logout)',
      ...documentedOnly({
        querystring: frontChannelParameters({
          client_id: "The application whose Allowed Logout URLs returnTo must be in (the tenant's without it)",
          returnTo: 'Where to go after logging out; without it, the application\'s first Allowed Logout URL or the logged-out page',
          federated: "A bare flag: also end the session at the user's upstream identity provider (OIDC end-session endpoint, or a SAML LogoutRequest to a samlp connection's IdP, answered at /logout), which then sends the browser on to returnTo",
        }),
      }),
      response: { 200: LOGGED_OUT_OR_SLO, 302: redirect("To returnTo, or to the application's first Allowed Logout URL; with federated, to the upstream identity provider's end-session endpoint (or SAML SingleLogoutService) first"), 400: REFUSED },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const logged: LogoutFacts = {};
    try {
      const params = readParameters(request.query);
      const client = await clientNamed(services, request, params.client_id);
      // The session ends whatever happens next: the user asked to log out.
      const session = await endSsoSession(request, reply, services, 'rp-logout');
      logged.userId = session?.user_id;
      logged.client = client;
      const allowed = client ? client.allowed_logout_urls : (request.tenant.settings.allowed_logout_urls ?? []);
      const returnTo = params.returnTo;
      let target: string | undefined;
      if (returnTo === undefined || returnTo === '') {
        target = client ? allowed[0] : undefined;
      } else if (!allowed.includes(returnTo)) {
        const where = client ? "the application's Allowed Logout URLs" : "the tenant's Allowed Logout URLs (no client_id was given)";
        throw new InvalidRequest(`The returnTo URL is not in ${where}: ${returnTo.slice(0, 300)}`);
      } else {
        target = returnTo;
      }
      recordLogout(services, request, logged);
      // `federated` is a bare flag (`&federated`); `federated=false` is not asking.
      const federated = params.federated !== undefined && params.federated !== 'false' && logged.userId !== undefined;
      const upstream = federated ? await federatedLogoutUrl(services, request, logged.userId!, target) : undefined;
      // The session's SAML applications are told first (front-channel), then the browser goes on.
      const next = upstream?.href ?? target;
      return await startSingleLogout(request, reply, services, session, undefined, next ? { kind: 'redirect', url: next } : { kind: 'page' });
    } catch (error) {
      recordLogout(services, request, logged, error);
      if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
      throw error;
    }
  });

  app.get(OIDC_LOGOUT_PATH, {
    config,
    schema: {
      tags,
      summary: 'Log out (OpenID Connect RP-Initiated Logout 1.0)',
      ...documentedOnly({
        querystring: frontChannelParameters({
          id_token_hint: 'An ID token this tenant issued; names the application',
          client_id: 'The application, when there is no id_token_hint (or the same one as its audience)',
          post_logout_redirect_uri: "Where to go after logging out; one of the application's Allowed Logout URLs",
          state: 'Echoed on post_logout_redirect_uri',
        }),
      }),
      response: { 200: LOGGED_OUT_OR_SLO, 302: redirect('To post_logout_redirect_uri, with state'), 400: REFUSED },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const logged: LogoutFacts = {};
    try {
      const params = readParameters(request.query);
      let clientId = params.client_id;
      if (params.id_token_hint) {
        const claims = await verifyIdTokenHint(services.keyRing, request.tenant, params.id_token_hint).catch(() => {
          throw new InvalidRequest('id_token_hint is not an ID token issued by this tenant');
        });
        const audience = typeof claims.aud === 'string' ? claims.aud : (claims.azp as string | undefined);
        if (clientId && audience !== clientId) throw new InvalidRequest('client_id does not match the audience of id_token_hint');
        clientId = audience;
      }
      const client = await clientNamed(services, request, clientId);
      const session = await endSsoSession(request, reply, services, 'rp-logout');
      logged.userId = session?.user_id;
      logged.client = client;
      const target = params.post_logout_redirect_uri;
      if (target === undefined || target === '') {
        recordLogout(services, request, logged);
        return await startSingleLogout(request, reply, services, session, undefined, { kind: 'page' });
      }
      if (!client) throw new InvalidRequest('post_logout_redirect_uri needs id_token_hint or client_id to say which application it belongs to');
      if (!client.allowed_logout_urls.includes(target)) {
        throw new InvalidRequest(`post_logout_redirect_uri is not in the application's Allowed Logout URLs: ${target.slice(0, 300)}`);
      }
      recordLogout(services, request, logged);
      return await startSingleLogout(request, reply, services, session, undefined, { kind: 'redirect', url: withState(target, params.state) });
    } catch (error) {
      recordLogout(services, request, logged, error);
      if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
      throw error;
    }
  });
}
