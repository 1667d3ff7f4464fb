/**
 * GET and POST /authorize (RFC 6749 §4.1.1, §4.2.1; OIDC Core §3): the checks of checks/index.ts run in order. Until the
 * client and its redirect URI are known good, a failure shows the error page and never redirects; after that,
 * failures go back to the client in its response mode. No CORS here, ever (RFC 9700 §2.6).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest, ProtocolError } from '../../http/errors.js';
import { documentedOnly, FORM, frontChannelParameters } from '../../http/openapi.js';
import { htmlPage, redirect } from '../../http/responses.js';
import { sendErrorPage } from '../../login/error-page.js';
import { signInResponseHeaders } from '../../login/hosted-page.js';
import { loadLoginTransaction } from '../../login/transactions.js';
import type { App, Services } from '../../services.js';
import { checkAuthorizationRequest } from './checks/index.js';
import { continueAuthorization, RESUME_PATH, sendAuthorizationError } from './complete.js';
import { completeWithLoginTicket } from './login-ticket.js';
import { readParameters, type RawParameters } from './request.js';
import { continueSamlSignIn } from '../samlp/complete.js';

async function authorize(request: FastifyRequest, reply: FastifyReply, services: Services, source: unknown, afterPost: boolean): Promise<FastifyReply> {
  signInResponseHeaders(reply);
  let params: RawParameters;
  try {
    params = readParameters(source);
  } catch (error) {
    if (error instanceof ProtocolError) return sendErrorPage(reply, request, error);
    throw error;
  }
  // The table of checks is in checks/index.ts.
  const checked = await checkAuthorizationRequest(services, request.tenant, params);
  if (!checked.ok) {
    if (!checked.deliverTo) return sendErrorPage(reply, request, checked.error);
    return sendAuthorizationError(reply, request, checked.deliverTo.client, checked.deliverTo, checked.error, afterPost);
  }
  const { client } = checked;
  // Embedded login (/co/authenticate) comes back with a ticket instead of showing the hosted page.
  if (params.login_ticket) return completeWithLoginTicket(request, reply, services, { client, request: checked.request, afterPost }, params.login_ticket);
  return continueAuthorization(request, reply, services, { client, request: checked.request, afterPost });
}

/** The parameters of an authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, and the reference's). */
export const AUTHORIZE_PARAMETERS: Record<string, string> = {
  client_id: 'The application',
  redirect_uri: "One of the application's callback URLs, exactly",
  response_type: '`code`, `token`, `id_token` or a combination the application allows',
  response_mode: '`query`, `fragment`, `form_post` or `web_message`',
  scope: 'Space-separated; `openid` for an ID token, `offline_access` for a refresh token',
  audience: 'The API the access token is for',
  state: 'Echoed exactly in the response',
  nonce: 'Required for ID tokens in the front channel; echoed in the ID token',
  code_challenge: 'PKCE (S256 only); required of public clients',
  code_challenge_method: '`S256`',
  prompt: '`none`, `login` or `consent` (space-separated)',
  max_age: 'Seconds since the last login after which the user logs in again',
  acr_values: '`http://schemas.openid.net/pape/policies/2007/06/multi-factor` asks for a second factor now (step-up), even from a session that had none; the ID token then has that `acr` and `mfa` in `amr`',
  login_hint: 'Pre-fills the login page',
  screen_hint: '`signup` opens the signup page',
  connection: 'The connection to log in with',
  login_ticket: 'From /co/authenticate (embedded login): completes without a page',
  request_uri: 'From /oauth/par (RFC 9126): the pushed request, used once, with client_id; other parameters are ignored',
  request: 'A signed request object (RFC 9101; RS256, PS256 or ES256 with a key of the client): its claims are the request',
};
const AuthorizeParameters = frontChannelParameters(AUTHORIZE_PARAMETERS, ['client_id', 'response_type']);

export const AUTHORIZE_RESPONSES = {
  200: htmlPage('A page that delivers the response (form_post, web_message) or checks the browser (cross-origin verification)'),
  302: redirect("To the application's redirect URI with the response or its error, or to a hosted page (login, signup, consent)"),
  400: htmlPage(
    'The error page: the client or its redirect URI is unknown, a parameter is repeated or too long, the request_uri is unknown, used or expired, the request object is refused (invalid_request_object), or the application requires pushed requests or signed request objects; nothing is sent to the application',
  ),
};

export function registerAuthorize(app: App, services: Services): void {
  const config = { rateLimit: { bucket: 'authorize' as const } };
  const tags = ['authentication'];
  app.get('/authorize', {
    config,
    schema: { tags, summary: 'Start a sign-in (authorization request)', ...documentedOnly({ querystring: AuthorizeParameters }), response: AUTHORIZE_RESPONSES },
    handler: (request, reply) => authorize(request, reply, services, request.query, false),
  });
  app.post('/authorize', {
    config,
    schema: {
      tags,
      summary: 'Start a sign-in, parameters in a form body',
      ...documentedOnly({ body: AuthorizeParameters, consumes: [FORM] }),
      response: {
        200: AUTHORIZE_RESPONSES[200],
        303: redirect("After the POST: to the application's redirect URI with the response or its error, or to a hosted page"),
        400: AUTHORIZE_RESPONSES[400],
      },
    },
    handler: (request, reply) => authorize(request, reply, services, request.body, true),
  });

  // Where every hosted page returns after a step (login, signup, consent): finish with the session it set.
  app.get(RESUME_PATH, {
    config,
    schema: {
      tags,
      summary: 'Finish a sign-in after a hosted page (login, signup, consent)',
      ...documentedOnly({ querystring: frontChannelParameters({ state: 'The login transaction' }, ['state']) }),
      response: { ...AUTHORIZE_RESPONSES, 400: htmlPage('The error page: the sign-in expired, was completed already, or its application is gone') },
    },
  }, async (request, reply) => {
    signInResponseHeaders(reply);
    const state = (request.query as Record<string, unknown>).state;
    const transaction = await loadLoginTransaction(request, services, state);
    if (!transaction) return sendErrorPage(reply, request, new InvalidRequest('This sign-in has expired or was already completed. Go back to the application and start again.'));
    const client = await services.configCache.client(request.tenant.id, transaction.request.clientId);
    if (!client) return sendErrorPage(reply, request, new InvalidRequest('The application no longer exists.', 'invalid_client'));
    // A SAML sign-in (auth-api/samlp) finishes with a SAML Response instead of an authorization response.
    const { saml } = transaction.request;
    if (saml) return continueSamlSignIn(request, reply, services, { client, request: { ...transaction.request, saml }, transaction });
    return continueAuthorization(request, reply, services, { client, request: transaction.request, transaction, afterPost: false });
  });
}
