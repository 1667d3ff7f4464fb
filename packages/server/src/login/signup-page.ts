/** GET/POST /u/signup: a new database user, logged in at once, then back to the authorization request. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_PATH, RESUME_PATH, SIGNUP_PATH } from '../auth-api/authorize/complete.js';
import { databaseConnectionFor, databaseOptions, signUpWithPassword } from '../connections/database-users.js';
import { passwordPolicyText } from '../connections/password-policy.js';
import { eventContextFrom } from '../events/context.js';
import { InvalidRequest } from '../http/errors.js';
import { checkBreachedPasswordAtSignup, checkSignupThrottle } from '../protection/checks.js';
import type { App, Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import { sendErrorPage } from './error-page.js';
import { sendHostedPage } from './hosted-page.js';
import { renderSignupPage } from './pages/signup.js';
import { startSession } from './session.js';
import { formBody, loadStep, type LoginStep } from './step.js';
import { saveLoginTransactionRequest } from './transactions.js';

function showSignup(reply: FastifyReply, request: FastifyRequest, step: LoginStep, connection: Connection, extra: { email?: string; username?: string; error?: string; status?: number }) {
  const { transaction, client } = step;
  const options = databaseOptions(connection);
  // The policy text is a bullet list whose indented bullets belong to the line above: one rule per top bullet.
  const rules: string[] = [];
  for (const line of passwordPolicyText(options).split('\n')) {
    const text = line.replace(/^\s*[*-]\s*/, '').trim();
    if (!text) continue;
    if (/^\s+[*-]/.test(line) && rules.length > 0) rules[rules.length - 1] += `${rules[rules.length - 1]!.endsWith(':') ? ' ' : ', '}${text}`;
    else rules.push(text);
  }
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderSignupPage(context, {
        action: SIGNUP_PATH,
        csrfToken: transaction.csrfToken,
        transaction: transaction.id,
        clientName: client.name,
        requireUsername: options.requires_username === true,
        passwordRules: rules,
        loginUrl: `${LOGIN_PATH}?state=${transaction.id}`,
        ...(extra.email !== undefined ? { email: extra.email } : {}),
        ...(extra.username !== undefined ? { username: extra.username } : {}),
        ...(extra.error !== undefined ? { error: extra.error } : {}),
      }),
    { status: extra.status ?? 200, formAction: [transaction.request.redirectUri] },
  );
}

async function signupConnection(request: FastifyRequest, reply: FastifyReply, services: Services, step: LoginStep): Promise<Connection | undefined> {
  const connection = await databaseConnectionFor(services, request.tenant, step.client.client_id, step.transaction.request.connection);
  if (!connection || databaseOptions(connection).disable_signup) {
    sendErrorPage(reply, request, new InvalidRequest('Sign-up is not available for this application.'));
    return undefined;
  }
  return connection;
}

export function registerSignupPage(app: App, services: Services): void {
  app.get(SIGNUP_PATH, { config: { rateLimit: { bucket: 'authorize' } }, schema: { hide: true } }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'GET');
    if (!step) return reply;
    const connection = await signupConnection(request, reply, services, step);
    if (!connection) return reply;
    const hint = step.transaction.request.loginHint;
    return showSignup(reply, request, step, connection, hint?.includes('@') ? { email: hint } : {});
  });

  app.post(SIGNUP_PATH, { config: { rateLimit: { bucket: 'login' } }, schema: { hide: true } }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'POST');
    if (!step) return reply;
    const connection = await signupConnection(request, reply, services, step);
    if (!connection) return reply;
    const body = formBody(request);
    const email = (body.email ?? '').slice(0, 320);
    const username = body.username?.slice(0, 128);
    const password = body.password ?? '';
    const keep = { email, ...(username !== undefined ? { username } : {}), status: 400 };
    if (password.length > 1024) return showSignup(reply, request, step, connection, { ...keep, error: 'That password is too long.' });
    // Attack protection (C.10), as at /dbconnections/signup: signup throttling per IP, then breached passwords.
    if ((await checkSignupThrottle(services, connection, request.ip)) === 'too_many_attempts') {
      return showSignup(reply, request, step, connection, { ...keep, error: 'Too many sign-ups from your network. Try again later.', status: 429 });
    }
    if ((await checkBreachedPasswordAtSignup(services, connection, password)) === 'password_leaked') {
      return showSignup(reply, request, step, connection, { ...keep, error: 'This password appeared in a data breach. Choose another one.' });
    }
    const result = await signUpWithPassword(services, connection, { email, password, username }, { ...eventContextFrom(request), client_id: step.client.client_id });
    switch (result.outcome) {
      case 'invalid':
        return showSignup(reply, request, step, connection, { ...keep, error: result.message });
      case 'password_rejected':
        return showSignup(reply, request, step, connection, { ...keep, error: `${result.message}.` });
      case 'exists':
        // The form cannot avoid saying so (the reference's signup says user_exists too); it says no more.
        return showSignup(reply, request, step, connection, { ...keep, error: 'An account with this email or username already exists. Log in instead.' });
      case 'disabled':
        return sendErrorPage(reply, request, new InvalidRequest('Sign-up is not available for this application.'));
      case 'ok':
        break;
    }
    await startSession(request, reply, services, result.user);
    const { transaction } = step;
    transaction.request = { ...transaction.request, prompt: transaction.request.prompt.filter((p) => p !== 'login') };
    delete transaction.request.screenHint;
    await saveLoginTransactionRequest(services, transaction);
    return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
  });
}
