/** GET/POST /u/signup: a new database user, logged in at once, then back to the authorization request. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_PATH, RESUME_PATH, SIGNUP_PATH } from '../auth-api/authorize/complete.js';
import { databaseConnectionFor, databaseOptions, newDatabaseUserId, passkeySignupRefusal, signUpWithPassword } from '../connections/database-users.js';
import { passkeysEnabled } from '../mfa/policy.js';
import { registrationCeremony } from '../mfa/webauthn.js';
import { PASSKEY_PATH } from './passkey-page.js';
import { MAX_PASSWORD_LENGTH, passwordChecklist } from '../connections/password-policy.js';
import { eventContextFrom } from '../events/context.js';
import { InvalidRequest } from '../http/errors.js';
import { htmlPage, redirect } from '../http/responses.js';
import { checkSignupThrottle } from '../protection/checks.js';
import type { App, Services } from '../services.js';
import { formFields, PAGE_TAGS, STATE_QUERY } from './documentation.js';
import type { Connection } from '../store/connections.js';
import { sendErrorPage } from './error-page.js';
import { formOutcome, redirectWithOutcome, type FormOutcome } from './form-outcome.js';
import { sendHostedPage } from './hosted-page.js';
import { passwordAdvice } from './pages/password-rules.js';
import { renderSignupPage } from './pages/signup.js';
import { chooseLanguage, screenTexts } from './texts.js';
import { startSession } from './session.js';
import { authenticatedNow, formBody, loadStep, type LoginStep } from './step.js';
import { openCeremony, saveLoginTransactionRequest } from './transactions.js';

const SIGNUP_UNAVAILABLE = 'Sign-up is not available for this application. Go back to it and log in with an existing account, or ask its administrator for one.';

/** The sign-up page of a transaction, and where a refused sign-up sends the browser back to. */
const place = (step: LoginStep) => ({ page: 'signup', binding: step.transaction.id, url: `${SIGNUP_PATH}?state=${step.transaction.id}` });

function showSignup(reply: FastifyReply, request: FastifyRequest, step: LoginStep, connection: Connection, outcome: FormOutcome | { values?: Record<string, string> }) {
  const { transaction, client } = step;
  const options = databaseOptions(connection);
  const language = chooseLanguage(request.tenant, request.headers['accept-language']);
  const shown: Partial<FormOutcome> = outcome;
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderSignupPage(context, {
        texts: screenTexts(request.tenant, 'signup', 'signup', language),
        action: SIGNUP_PATH,
        csrfToken: transaction.csrfToken,
        transaction: transaction.id,
        clientName: client.name,
        requireUsername: options.requires_username === true,
        passwordRules: shown.passwordRules ? { rules: shown.passwordRules, checked: true } : { rules: passwordChecklist(options), checked: false },
        loginUrl: `${LOGIN_PATH}?state=${transaction.id}`,
        passkeys: passkeysEnabled(connection) && options.requires_username !== true,
        ...(shown.values?.email !== undefined ? { email: shown.values.email } : {}),
        ...(shown.values?.username !== undefined ? { username: shown.values.username } : {}),
        ...(shown.error !== undefined ? { error: shown.error } : {}),
      }),
    { status: shown.status ?? 200, formAction: [transaction.request.redirectUri], language },
  );
}

async function signupConnection(request: FastifyRequest, reply: FastifyReply, services: Services, step: LoginStep): Promise<Connection | undefined> {
  const connection = await databaseConnectionFor(services, request.tenant, step.client.client_id, step.transaction.request.connection);
  if (!connection || databaseOptions(connection).disable_signup) {
    sendErrorPage(reply, request, new InvalidRequest(SIGNUP_UNAVAILABLE));
    return undefined;
  }
  return connection;
}

export function registerSignupPage(app: App, services: Services): void {
  app.get(SIGNUP_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'The signup page',
      ...STATE_QUERY,
      response: {
        200: htmlPage('The signup form'),
        400: htmlPage('The form again after a refused signup, saying what to do (invalid fields, a weak or breached password, an existing account); or the error page (a stale login transaction, no signup for the application)'),
        429: htmlPage('The form again after a refused signup: too many signups from this network'),
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'GET');
    if (!step) return reply;
    const connection = await signupConnection(request, reply, services, step);
    if (!connection) return reply;
    // Back from a refused sign-up (post/redirect/get): its message, status, fields and checked rules.
    const outcome = formOutcome(request, services, place(step));
    if (outcome) return showSignup(reply, request, step, connection, outcome);
    const hint = step.transaction.request.loginHint;
    return showSignup(reply, request, step, connection, hint?.includes('@') ? { values: { email: hint } } : {});
  });

  app.post(SIGNUP_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Sign up with the signup form',
      ...formFields({
        email: 'Email',
        username: 'Username, where the connection has them',
        password: 'The password',
        method: 'passkey: sign up with a passkey instead of a password (the email alone; where the connection has passkeys)',
      }),
      response: {
        303: redirect('Signed up: to /authorize/resume; for a passkey sign-up, to /u/passkey, which makes the passkey and creates the account; otherwise back to the signup page, which says what went wrong'),
        400: htmlPage('The error page: a stale form, or no signup for the application'),
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'POST');
    if (!step) return reply;
    const connection = await signupConnection(request, reply, services, step);
    if (!connection) return reply;
    const body = formBody(request);
    const email = (body.email ?? '').slice(0, 320);
    const username = body.username?.slice(0, 128);
    const password = body.password ?? '';
    const values = { email, ...(username !== undefined ? { username } : {}) };
    const retry = (outcome: Omit<FormOutcome, 'values' | 'status'> & { status?: number }) =>
      redirectWithOutcome(reply, request, services, place(step), { status: 400, values, ...outcome });
    if (password.length > 4 * MAX_PASSWORD_LENGTH) return retry({ error: `That password is too long. Choose one of at most ${MAX_PASSWORD_LENGTH} characters.` });
    // Attack protection (C.10), as at /dbconnections/signup: signup throttling per IP (breached passwords: signUpWithPassword).
    if ((await checkSignupThrottle(services, connection, request.ip)) === 'too_many_attempts') {
      return retry({ status: 429, error: 'Too many sign-ups from your network. Wait a while before you try again, or contact the administrator.' });
    }
    if (body.method === 'passkey' && passkeysEnabled(connection) && databaseOptions(connection).requires_username !== true) {
      const refusal = await passkeySignupRefusal(services, connection, email);
      if (refusal?.outcome === 'invalid') return retry({ error: refusal.message });
      if (refusal?.outcome === 'exists') return retry({ error: 'An account with this email already exists. Log in instead.' });
      if (refusal) return sendErrorPage(reply, request, new InvalidRequest(SIGNUP_UNAVAILABLE));
      // The account is created once the passkey is made (/u/passkey); its id is chosen now, for the passkey's user handle.
      const ceremony = await registrationCeremony(request.tenant, 'signup', 'passkey', { id: newDatabaseUserId(), name: email.trim().toLowerCase() }, []);
      ceremony.email = email;
      await openCeremony(services, step.transaction, ceremony);
      return reply.redirect(`${PASSKEY_PATH}?state=${step.transaction.id}`, 303);
    }
    const result = await signUpWithPassword(services, request.tenant, connection, { email, password, username }, { ...eventContextFrom(request), client_id: step.client.client_id });
    switch (result.outcome) {
      case 'invalid':
        return retry({ error: result.message });
      case 'password_rejected':
        return retry({ error: passwordAdvice(result.check), passwordRules: passwordChecklist(databaseOptions(connection), password, { email, username: username ?? null }) });
      case 'password_leaked':
        return retry({ error: 'This password has appeared in a data breach elsewhere. Choose a different one.' });
      case 'exists':
        // The form cannot avoid saying so (the reference's signup says user_exists too); it says no more.
        return retry({ error: 'An account with this email or username already exists. Log in instead; if you forgot its password, choose “Forgot password?” there.' });
      case 'disabled':
        return sendErrorPage(reply, request, new InvalidRequest(SIGNUP_UNAVAILABLE));
      case 'ok':
        break;
    }
    await startSession(request, reply, services, result.user, Date.now(), ['pwd']);
    const { transaction } = step;
    transaction.request = authenticatedNow(transaction.request);
    delete transaction.request.screenHint;
    await saveLoginTransactionRequest(services, transaction);
    return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
  });
}
