/**
 * GET/POST /u/passkey: creating a passkey on the hosted pages, in one of two situations kept on the login
 * transaction as its open WebAuthn ceremony (mfa/webauthn.ts):
 *  - `signup`: the sign-up page took an email for a passkey account; the account is created once the browser
 *    has made the passkey and the answer checks out, and it is logged in with it;
 *  - `add-passkey`: a person who just logged in with a password (the session exists) is offered to create a
 *    passkey for next time, or to continue without one.
 * The ceremony's answer is taken once; a failed one opens a fresh ceremony for the same account, so "try
 * again" works without starting over.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RESUME_PATH } from '../auth-api/authorize/complete.js';
import { databaseConnectionFor, signUpWithPasskey } from '../connections/database-users.js';
import { eventContextFrom } from '../events/context.js';
import { InvalidRequest } from '../http/errors.js';
import { htmlPage, redirect } from '../http/responses.js';
import { passkeysEnabled } from '../mfa/policy.js';
import { credentialAmr, registrationCeremony, saveRegistration, verifyRegistration, type Ceremony } from '../mfa/webauthn.js';
import type { App, Services } from '../services.js';
import { listMfaEnrollments } from '../store/mfa-enrollments.js';
import { formFields, PAGE_TAGS, STALE_STEP, STATE_QUERY } from './documentation.js';
import { sendErrorPage } from './error-page.js';
import { formOutcome, redirectWithOutcome } from './form-outcome.js';
import { sendHostedPage } from './hosted-page.js';
import { renderPasskeyPage } from './pages/passkey.js';
import { currentSession, startSession } from './session.js';
import { authenticatedNow, formBody, loadStep, type LoginStep } from './step.js';
import { openCeremony, openedCeremony, saveLoginTransactionRequest, takeCeremony } from './transactions.js';

export const PASSKEY_PATH = '/u/passkey';

const PURPOSES = ['signup', 'add-passkey'] as const;
const place = (step: LoginStep) => ({ page: 'passkey', binding: step.transaction.id, url: `${PASSKEY_PATH}?state=${step.transaction.id}` });
const NOTHING_TO_DO = 'There is no passkey to create in this sign-in. Go back to the application and sign in again.';

/** A fresh ceremony for the same account as `previous` (after a failed answer, or a reload). */
async function reopen(request: FastifyRequest, services: Services, step: LoginStep, previous: Ceremony): Promise<Ceremony> {
  const userId = previous.userId!;
  const existing = previous.purpose === 'signup' ? [] : await listMfaEnrollments(services.store.db, request.tenant.id, userId);
  const ceremony = await registrationCeremony(request.tenant, previous.purpose, 'passkey', { id: userId, name: previous.email ?? (previous.options as { user?: { name?: string } }).user?.name ?? userId }, existing);
  if (previous.email) ceremony.email = previous.email;
  await openCeremony(services, step.transaction, ceremony);
  return ceremony;
}

async function resume(services: Services, step: LoginStep, reply: FastifyReply) {
  const { transaction } = step;
  transaction.request = authenticatedNow(transaction.request);
  delete transaction.request.screenHint;
  await saveLoginTransactionRequest(services, transaction);
  return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
}

export function registerPasskeyPage(app: App, services: Services): void {
  app.get(PASSKEY_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Create a passkey: for a new account (passkey sign-up), or after a password login',
      ...STATE_QUERY,
      response: {
        200: htmlPage('The page: a button that has the browser make the passkey (and, after a password login, a way to continue without)'),
        400: htmlPage('The page again after a failed attempt; or the error page (a stale login transaction, or no passkey to create in it)'),
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'GET');
    if (!step) return reply;
    let ceremony = openedCeremony(step.transaction, PURPOSES);
    if (!ceremony) {
      // After a password login: the session's user, offered a passkey.
      const active = await currentSession(request, services);
      if (!active) return sendErrorPage(reply, request, new InvalidRequest(NOTHING_TO_DO));
      const existing = await listMfaEnrollments(services.store.db, request.tenant.id, active.user.user_id);
      const name = active.user.email ?? active.user.username ?? active.user.user_id;
      ceremony = await registrationCeremony(request.tenant, 'add-passkey', 'passkey', { id: active.user.user_id, name }, existing);
      await openCeremony(services, step.transaction, ceremony);
    }
    const outcome = formOutcome(request, services, place(step));
    const shown = ceremony;
    return sendHostedPage(
      reply,
      request.tenant,
      (context) =>
        renderPasskeyPage(context, {
          action: PASSKEY_PATH,
          csrfToken: step.transaction.csrfToken,
          transaction: step.transaction.id,
          purpose: shown.purpose === 'signup' ? 'signup' : 'add',
          account: shown.email ?? (shown.options as { user?: { name?: string } }).user?.name ?? '',
          options: shown.options,
          ...(outcome?.error !== undefined && { error: outcome.error }),
        }),
      { status: outcome?.status ?? 200, formAction: [step.transaction.request.redirectUri] },
    );
  });

  app.post(PASSKEY_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Answer the passkey page: the new passkey, or continue without one',
      ...formFields({
        webauthn_response: "The browser's answer to the page's ceremony (RegistrationResponseJSON)",
        skip: 'yes: continue without a passkey (after a password login only)',
      }),
      response: {
        303: redirect('Done: to /authorize/resume; or back to the page, which says what went wrong'),
        400: STALE_STEP,
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'POST');
    if (!step) return reply;
    const body = formBody(request);
    const open = openedCeremony(step.transaction, PURPOSES);
    const active = open?.purpose === 'signup' ? undefined : await currentSession(request, services);
    if (body.skip === 'yes') {
      // Only a logged-in person may go on without a passkey: a passkey sign-up has no other credential.
      if (!active) return sendErrorPage(reply, request, new InvalidRequest(NOTHING_TO_DO));
      return resume(services, step, reply);
    }
    const ceremony = await takeCeremony(services, step.transaction, PURPOSES);
    if (!ceremony?.userId || (ceremony.purpose === 'add-passkey' && active?.user.user_id !== ceremony.userId)) {
      return sendErrorPage(reply, request, new InvalidRequest(NOTHING_TO_DO));
    }
    const failed = async (error: string) => {
      await reopen(request, services, step, ceremony);
      return redirectWithOutcome(reply, request, services, place(step), { status: 400, error });
    };
    const enrollment = await verifyRegistration(request.tenant, ceremony, ceremony.userId, (body.webauthn_response ?? '').slice(0, 32_768), request.headers['user-agent']);
    if (!enrollment) return failed('The passkey was not created. Try again, and confirm with your fingerprint, face, screen lock or security key PIN when asked.');

    if (ceremony.purpose === 'signup') {
      const connection = await databaseConnectionFor(services, request.tenant, step.client.client_id, step.transaction.request.connection);
      if (!connection || !passkeysEnabled(connection)) return sendErrorPage(reply, request, new InvalidRequest(NOTHING_TO_DO));
      const created = await signUpWithPasskey(services, request.tenant, connection, { email: ceremony.email ?? '', userId: ceremony.userId }, { ...eventContextFrom(request), client_id: step.client.client_id });
      if (created.outcome !== 'ok') {
        return sendErrorPage(reply, request, new InvalidRequest('This account could not be created: an account with this email may already exist. Go back to the application and log in instead.'));
      }
      if (!(await saveRegistration(services.store.db, enrollment))) return failed('This passkey is already registered. Try again with another.');
      await startSession(request, reply, services, created.user, Date.now(), [credentialAmr(enrollment), 'mfa']);
      return resume(services, step, reply);
    }
    if (!(await saveRegistration(services.store.db, enrollment))) return failed('This passkey is already registered. Try again with another.');
    return resume(services, step, reply);
  });
}
