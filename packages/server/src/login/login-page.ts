/** GET/POST /u/login: identifier and password for the request's database connection. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_PATH, MFA_PATH, RESUME_PATH, SIGNUP_PATH } from '../auth-api/authorize/complete.js';
import { homeRealmOf, homeRealmOrigins } from '../federation/home-realm.js';
import { redirectUpstream } from '../federation/start.js';
import { recordPasswordLogin } from '../logs/login-outcomes.js';
import { requireSecondFactor, secondFactorDue } from '../mfa/login-step.js';
import { passkeyProgressiveEnrollment, passkeysEnabled } from '../mfa/policy.js';
import { authenticationCeremony, completeAuthentication, credentialAmr } from '../mfa/webauthn.js';
import { listMfaEnrollments } from '../store/mfa-enrollments.js';
import { findPrimaryUser } from '../store/users.js';
import { authenticateWithPassword, databaseConnectionFor, databaseOptions } from '../connections/database-users.js';
import { InvalidRequest, ProtocolError } from '../http/errors.js';
import { htmlPage, redirect } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { formFields, PAGE_TAGS, STALE_STEP, STATE_QUERY } from './documentation.js';
import type { Connection } from '../store/connections.js';
import { sendErrorPage } from './error-page.js';
import { formOutcome, redirectWithOutcome, type FormOutcome } from './form-outcome.js';
import { sendHostedPage } from './hosted-page.js';
import { renderLoginPage } from './pages/login.js';
import { chooseLanguage, screenTexts } from './texts.js';
import { startSession } from './session.js';
import { authenticatedNow, formBody, loadStep, type LoginStep } from './step.js';
import { openCeremony, saveLoginTransactionRequest, takeCeremony } from './transactions.js';
import { PASSKEY_PATH } from './passkey-page.js';
import { federatedButtons, type FederatedButton } from './federated-buttons.js';

export const RESET_PASSWORD_PATH = '/u/reset-password';

/** The login page of a transaction, and where a failed attempt sends the browser back to. */
const place = (step: LoginStep) => ({ page: 'login', binding: step.transaction.id, url: `${LOGIN_PATH}?state=${step.transaction.id}` });

async function showLogin(
  reply: FastifyReply,
  request: FastifyRequest,
  services: Services,
  step: LoginStep,
  connection: Connection | undefined,
  extra: { identifier?: string; error?: string; status?: number; federated?: FederatedButton[] },
) {
  const { transaction, client } = step;
  // A passkey login: a fresh challenge with each showing of the page, kept on the transaction.
  let passkeyOptions: unknown;
  if (connection && passkeysEnabled(connection)) {
    const ceremony = await authenticationCeremony(request.tenant, 'login');
    await openCeremony(services, transaction, ceremony);
    passkeyOptions = ceremony.options;
  }
  const options = connection ? databaseOptions(connection) : {};
  const realms = connection ? await homeRealmOrigins(services, request.tenant.id, client.client_id) : [];
  const homeRealms = realms.length > 0;
  const language = chooseLanguage(request.tenant, request.headers['accept-language']);
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderLoginPage(context, {
        texts: screenTexts(request.tenant, 'login', 'login', language),
        action: LOGIN_PATH,
        csrfToken: transaction.csrfToken,
        transaction: transaction.id,
        clientName: client.name,
        ...(connection && { identifierKind: options.requires_username ? ('email_or_username' as const) : ('email' as const) }),
        ...(extra.federated && { federated: extra.federated }),
        ...(extra.identifier !== undefined ? { identifier: extra.identifier } : {}),
        ...(extra.error !== undefined ? { error: extra.error } : {}),
        ...(options.disable_signup ? {} : { signupUrl: `${SIGNUP_PATH}?state=${transaction.id}` }),
        forgotPasswordUrl: `${RESET_PASSWORD_PATH}?state=${transaction.id}`,
        ...(passkeyOptions !== undefined && { passkeyOptions }),
        ...(homeRealms && { homeRealms }),
      }),
    // Chromium applies form-action to the redirects after the POST too: the chain ends at the client's callback.
    // An email of an enterprise connection's domain is redirected to its identity provider after the POST.
    { status: extra.status ?? 200, formAction: [transaction.request.redirectUri, ...realms], language },
  );
}

async function connectionOf(request: FastifyRequest, reply: FastifyReply, services: Services, step: LoginStep): Promise<Connection | undefined> {
  const connection = await databaseConnectionFor(services, request.tenant, step.client.client_id, step.transaction.request.connection);
  if (!connection) {
    sendErrorPage(reply, request, new InvalidRequest('No database connection is enabled for this application, so there is no way to log in here. Its administrator can enable one for it (Management API: PATCH /api/v2/connections/{id}/clients).'));
  }
  return connection;
}

/** Upstream: an upstream that cannot be used now is said on the login page, where the person can try again. */
async function sendToHomeRealm(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  step: LoginStep,
  realm: Connection,
  retry: (status: number, error: string) => FastifyReply | Promise<FastifyReply>,
): Promise<FastifyReply> {
  const { transaction } = step;
  try {
    return await redirectUpstream(request, reply, services, { ...transaction, request: { ...transaction.request, connection: realm.name } }, realm, true);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return retry(400, `Your organization's sign-in (${realm.display_name || realm.name}) cannot be reached right now. Try again in a moment.`);
  }
}

export function registerLoginPage(app: App, services: Services): void {
  app.get(LOGIN_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'The login page',
      ...STATE_QUERY,
      response: {
        200: htmlPage('The login form'),
        400: htmlPage('The form again after a failed attempt, saying what to do (wrong credentials, a blocked user, a breached password); or the error page (a stale login transaction, no database connection for the application)'),
        429: htmlPage('The form again after a refused attempt: too many failed attempts for this account from here, or from this network'),
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'GET');
    if (!step) return reply;
    const federated = await federatedButtons(services, request.tenant.id, step.client.client_id, step.transaction.id);
    // With upstream identity providers to offer, the page stands without a database connection.
    const connection = federated.length > 0 ? await databaseConnectionFor(services, request.tenant, step.client.client_id, step.transaction.request.connection) : await connectionOf(request, reply, services, step);
    if (!connection && federated.length === 0) return reply;
    // Back from a failed attempt (post/redirect/get): its message, status and identifier.
    const outcome = formOutcome(request, services, place(step));
    if (outcome) return showLogin(reply, request, services, step, connection, { identifier: outcome.values?.username ?? '', ...(outcome.error && { error: outcome.error }), status: outcome.status, federated });
    const hint = step.transaction.request.loginHint;
    return showLogin(reply, request, services, step, connection, { ...(hint && { identifier: hint }), federated });
  });

  app.post(LOGIN_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Log in with the login form',
      ...formFields({
        username: 'Email (or username where the connection has them)',
        password: 'The password',
        webauthn_response: "Instead of username and password, where the connection has passkeys: the browser's answer to the page's passkey ceremony (AuthenticationResponseJSON)",
      }),
      response: {
        303: redirect("Logged in: to /authorize/resume, to /u/mfa when the tenant requires a second factor, or to /u/passkey to offer a passkey (passkeys on, none yet); an email of an enterprise connection's domain (domain_aliases): to its identity provider; otherwise back to the login page, which says what went wrong"),
        400: STALE_STEP,
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'POST');
    if (!step) return reply;
    const connection = await connectionOf(request, reply, services, step);
    if (!connection) return reply;
    const body = formBody(request);
    // An empty answer is the passkey form's untouched field, not an attempt: the person logs in with the password.
    if (body.webauthn_response !== undefined && body.webauthn_response !== '') return logInWithPasskey(request, reply, services, step, connection, body.webauthn_response);
    const identifier = (body.username ?? '').slice(0, 320);
    const password = body.password ?? '';
    const retry = (status: number, error: string) => redirectWithOutcome(reply, request, services, place(step), { status, error, values: { username: identifier } } satisfies FormOutcome);
    // An email of an enterprise connection's domain signs in at its identity provider, not with a password here.
    const realm = identifier ? await homeRealmOf(services, request.tenant.id, step.client.client_id, identifier) : undefined;
    if (realm) return sendToHomeRealm(request, reply, services, step, realm, retry);
    if (!identifier || !password || password.length > 1024) return retry(400, 'Enter your email and password.');
    const result = await authenticateWithPassword(services, connection, identifier, password, request.ip);
    recordPasswordLogin(services, { request, client: { client_id: step.client.client_id, name: step.client.name }, connection, identifier, success: 's' }, result);
    switch (result.outcome) {
      case 'wrong_credentials':
        return retry(400, 'Wrong email or password. Check both and try again, or choose “Forgot password?” to set a new one.');
      case 'blocked':
        return retry(400, 'This account is blocked. Contact the administrator of this application to have it unblocked.');
      case 'too_many_attempts':
        return retry(
          429,
          result.reason === 'brute_force'
            ? 'Too many failed attempts: this account is locked from here. Check your email for how to unblock it, or contact the administrator.'
            : 'Too many attempts from your network. Wait a while before you try again, or contact the administrator.',
        );
      case 'password_leaked':
        return retry(400, 'This password appeared in a data breach. Choose “Forgot password?” to set a new one, then log in with it.');
      case 'ok':
        break;
    }
    const { transaction } = step;
    if (await secondFactorDue(request, services, request.tenant, result.user.user_id, transaction.request.acrValues)) {
      // No session yet: the password alone does not sign in; the second step (/u/mfa) starts the session.
      await requireSecondFactor(services, request.tenant.id, result.user.user_id, transaction.id, ['pwd']);
      return reply.redirect(`${MFA_PATH}?state=${transaction.id}`, 303);
    }
    await startSession(request, reply, services, result.user, Date.now(), ['pwd']);
    // The user has just authenticated: prompt=login and max_age are satisfied for the rest of this transaction.
    transaction.request = authenticatedNow(transaction.request);
    await saveLoginTransactionRequest(services, transaction);
    // Passkeys on: one who has none yet is offered to create one now (and may decline).
    if (passkeyProgressiveEnrollment(connection) && !(await listMfaEnrollments(services.store.db, request.tenant.id, result.user.user_id)).some((e) => e.type === 'passkey')) {
      return reply.redirect(`${PASSKEY_PATH}?state=${transaction.id}`, 303);
    }
    return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
  });
}

/**
 * A passkey login: the answer to the ceremony the page showed (taken once), from a passkey of this tenant
 * whose user may log in here. The session's `amr` says which kind of key; a passkey meets the MFA policy.
 */
async function logInWithPasskey(request: FastifyRequest, reply: FastifyReply, services: Services, step: LoginStep, connection: Connection, answer: string) {
  const { transaction } = step;
  const retry = (status: number, error: string) => redirectWithOutcome(reply, request, services, place(step), { status, error });
  const ceremony = passkeysEnabled(connection) ? await takeCeremony(services, transaction, ['login']) : undefined;
  if (!ceremony) return retry(400, 'That passkey sign-in has expired. Try again.');
  const result = await completeAuthentication(services.store.db, request.tenant, ceremony, answer.slice(0, 32_768), { types: ['passkey'] });
  const user = result.outcome === 'right' ? await findPrimaryUser(services.store.db, request.tenant.id, result.enrollment.userId) : undefined;
  if (result.outcome !== 'right' || !user || user.connection_id !== connection.id) {
    return retry(400, 'That passkey could not sign you in: it is not registered here, or was not verified. Try again, or log in with your password.');
  }
  if (user.blocked) return retry(400, 'This account is blocked. Contact the administrator of this application to have it unblocked.');
  await startSession(request, reply, services, user, Date.now(), [credentialAmr(result.enrollment), 'mfa']);
  transaction.request = authenticatedNow(transaction.request);
  await saveLoginTransactionRequest(services, transaction);
  return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
}
