/**
 * GET/POST /u/mfa: the second step of a login when the tenant's policy requires MFA (the domain logic is
 * mfa/login-step.ts). One page, whose view follows the login's state: enroll an authenticator app, answer with
 * a code (or, with `?method=recovery-code`, the recovery code), or keep the recovery code shown once. What
 * the form posts is read against that state, never trusted to name it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MFA_PATH, RESUME_PATH } from '../auth-api/authorize/complete.js';
import { InvalidRequest } from '../http/errors.js';
import { htmlPage, redirect } from '../http/responses.js';
import { answerSecondFactor, finishSecondFactor, secondFactorView, sendSecondFactorEmail, type MfaChallenge } from '../mfa/login-step.js';
import type { App, Services } from '../services.js';
import type { User } from '../store/users.js';
import { formFields, PAGE_TAGS, STALE_STEP } from './documentation.js';
import { documentedOnly, frontChannelParameters } from '../http/openapi.js';
import { sendErrorPage } from './error-page.js';
import { formOutcome, redirectWithOutcome } from './form-outcome.js';
import { sendHostedPage } from './hosted-page.js';
import { qrCodeSvg, renderMfaChallengePage, renderMfaEnrollPage, renderMfaRecoveryCodeEntryPage, renderMfaRecoveryCodePage, renderMfaEmailPage, renderMfaWebauthnChallengePage, renderMfaWebauthnEnrollPage } from './pages/mfa.js';
import { startSession } from './session.js';
import { rememberBrowser } from '../mfa/remember-browser.js';
import { rememberBrowserSettings } from '../mfa/policy.js';
import { authenticatedNow, formBody, loadStepWith, type LoginStep } from './step.js';
import { loadLoginTransactionWithChallenge, saveLoginTransactionRequest } from './transactions.js';
import { answerEventType, recordSecondFactorEvent, type SecondFactorKind } from '../logs/second-factor.js';

const RECOVERY_METHOD = 'recovery-code';
const EMAIL_METHOD = 'email';
const LOCKED = 'Too many wrong codes: multi-factor authentication is locked for this account. Contact the administrator of this application to unlock it.';

const place = (step: LoginStep, method?: string) => ({
  page: 'mfa',
  binding: step.transaction.id,
  url: `${MFA_PATH}?state=${step.transaction.id}${method ? `&method=${method}` : ''}`,
});

const STEP_QUERY = documentedOnly({
  querystring: frontChannelParameters(
    {
      state: 'The login transaction, from the redirect that led here',
      method: 'recovery-code: answer with the recovery code; email: with a code sent by email; otp: with a code from the app (instead of a security key); webauthn-roaming or webauthn-platform: enroll a security key or this device instead of an app',
      retry: "Set by the redirect after the form's POST: the page shows that post's outcome (form-outcome.ts)",
    },
    ['state'],
  ),
});

interface MfaStep extends LoginStep {
  challenge: MfaChallenge;
  user: User;
}

/** Who a `gd_*` event of this step is about. */
const who = (step: MfaStep) => ({
  userId: step.user.user_id,
  userName: step.user.email ?? step.user.username ?? undefined,
  client: { client_id: step.client.client_id, name: step.client.name },
});

/** The step, its challenge and its user; the error page when the login is not waiting for a second factor. */
async function loadMfaStep(request: FastifyRequest, reply: FastifyReply, services: Services, method: 'GET' | 'POST'): Promise<MfaStep | undefined> {
  // The transaction, its challenge and the challenge's user in one statement.
  const step = await loadStepWith(request, reply, services, method, loadLoginTransactionWithChallenge);
  if (!step) return undefined;
  const { challenge, user, ...transaction } = step.transaction;
  if (!challenge || !user || user.blocked) {
    sendErrorPage(reply, request, new InvalidRequest('This sign-in step has expired or was already completed. Go back to the application and sign in again.'));
    return undefined;
  }
  return { transaction, client: step.client, challenge, user };
}

export function registerMfaPage(app: App, services: Services): void {
  app.get(MFA_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'The second step of a login: enroll an authenticator app, answer with a code or the recovery code, or keep the new recovery code',
      ...STEP_QUERY,
      response: {
        200: htmlPage('The step: the enrollment (QR code and key), the code form, the recovery code form, or the recovery code to keep'),
        400: htmlPage('The form again after a wrong code; or the error page (a stale login transaction, or a login not waiting for a second factor)'),
        429: htmlPage('The form again after a refused answer: too many wrong codes, so the account is locked for MFA until an administrator lifts it; or enough codes were emailed for this sign-in'),
      },
    },
  }, async (request, reply) => {
    const step = await loadMfaStep(request, reply, services, 'GET');
    if (!step) return reply;
    const outcome = formOutcome(request, services, place(step));
    const form = {
      action: MFA_PATH,
      csrfToken: step.transaction.csrfToken,
      transaction: step.transaction.id,
      ...(outcome?.error !== undefined && { error: outcome.error }),
    };
    const options = { status: outcome?.status ?? 200, formAction: [step.transaction.request.redirectUri] };
    // On the forms that end the step (a challenge, the recovery code to keep), where the tenant offers it.
    const settings = rememberBrowserSettings(request.tenant);
    const finishing = {
      ...form,
      ...(settings.display_remember_me_checkbox && { remember: { checked: settings.remember_me_default_value, days: Math.max(1, Math.round(settings.mfa_session_overall_timeout / 86_400)) } }),
    };
    const method = (request.query as Record<string, unknown>).method;
    const view = await secondFactorView(services, request.tenant, step.challenge, step.user, step.transaction, typeof method === 'string' ? method : undefined);
    // An enrollment shown afresh (not the same page again after a refused answer) is one started.
    if (!outcome && (view.kind === 'enroll' || view.kind === 'webauthn-enroll')) {
      recordSecondFactorEvent(services, request, 'gd_start_enroll', who(step), view.kind === 'enroll' ? 'totp' : view.factor);
    }
    switch (view.kind) {
      case 'enroll': {
        const qrSvg = await qrCodeSvg(view.uri);
        const alternatives = view.alternatives.map((factor) => ({ factor, url: place(step, factor).url }));
        return sendHostedPage(reply, request.tenant, (ctx) => renderMfaEnrollPage(ctx, { ...form, secret: view.secret, qrSvg, alternatives }), options);
      }
      case 'webauthn-enroll':
        return sendHostedPage(
          reply,
          request.tenant,
          (ctx) => renderMfaWebauthnEnrollPage(ctx, { ...form, factor: view.factor, options: view.options, ...(view.otpEnabled && { otpUrl: place(step).url }) }),
          options,
        );
      case 'webauthn-challenge':
        return sendHostedPage(
          reply,
          request.tenant,
          (ctx) =>
            renderMfaWebauthnChallengePage(ctx, {
              ...finishing,
              options: view.options,
              ...(view.hasTotp && { otpUrl: place(step, 'otp').url }),
              ...(view.hasRecoveryCode && { recoveryCodeUrl: place(step, RECOVERY_METHOD).url }),
              ...(view.hasEmail && { emailUrl: place(step, EMAIL_METHOD).url }),
            }),
          options,
        );
      case 'email-challenge':
        return sendHostedPage(reply, request.tenant, (ctx) => renderMfaEmailPage(ctx, { ...finishing, sent: view.sent, address: view.address, canSendMore: view.canSendMore, otherUrl: place(step).url }), options);
      case 'recovery-code':
        return sendHostedPage(reply, request.tenant, (ctx) => renderMfaRecoveryCodePage(ctx, { ...finishing, code: view.code }), options);
      case 'challenge': {
        const wantsRecovery = method === RECOVERY_METHOD && view.hasRecoveryCode;
        if (wantsRecovery) return sendHostedPage(reply, request.tenant, (ctx) => renderMfaRecoveryCodeEntryPage(ctx, { ...form, codeUrl: place(step).url }), options);
        const recoveryCodeUrl = view.hasRecoveryCode ? place(step, RECOVERY_METHOD).url : undefined;
        const emailUrl = view.hasEmail ? place(step, EMAIL_METHOD).url : undefined;
        return sendHostedPage(reply, request.tenant, (ctx) => renderMfaChallengePage(ctx, { ...finishing, ...(recoveryCodeUrl && { recoveryCodeUrl }), ...(emailUrl && { emailUrl }) }), options);
      }
    }
  });

  app.post(MFA_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Answer the second step of a login',
      ...formFields({
        code: 'The 6-digit code from the authenticator app (enrollment and challenge)',
        recovery_code: 'The recovery code, instead of a code',
        send_email_code: 'yes: email a one-time code (the email factor, for a verified address)',
        email_code: 'The code from that email',
        webauthn_response: "A security key or this device (the WebAuthn factors): the browser's answer to the page's ceremony, enrollment or challenge",
        saved: 'yes: the person has kept the recovery code shown (finishes the login)',
        rememberBrowser: 'true (the checkbox): do not ask this browser for a second factor again for this user while the Guardian settings allow (30 days by default); only where those settings offer it',
      }),
      response: {
        303: redirect('Done: to /authorize/resume; or back to the page, which shows the recovery code to keep or what went wrong'),
        400: STALE_STEP,
      },
    },
  }, async (request, reply) => {
    const step = await loadMfaStep(request, reply, services, 'POST');
    if (!step) return reply;
    const { challenge, transaction } = step;
    const body = formBody(request);

    const finish = async (factorAmr?: string[]) => {
      const amr = await finishSecondFactor(services, challenge, factorAmr);
      if (!amr) return sendErrorPage(reply, request, new InvalidRequest('This sign-in step was already completed. Go back to the application and sign in again.'));
      await startSession(request, reply, services, step.user, Date.now(), amr);
      if (body.rememberBrowser !== undefined && body.rememberBrowser !== 'false' && rememberBrowserSettings(request.tenant).display_remember_me_checkbox) {
        await rememberBrowser(request, reply, services, step.user.user_id);
      }
      transaction.request = authenticatedNow(transaction.request);
      await saveLoginTransactionRequest(services, transaction);
      return reply.redirect(`${RESUME_PATH}?state=${transaction.id}`, 303);
    };

    // The recovery code was shown: the login finishes once the person says they kept it.
    if (challenge.recoveryCodeSealed) return finish();

    if (body.send_email_code === 'yes') {
      const sent = await sendSecondFactorEmail(services, request.tenant, challenge, step.user);
      if (sent === 'sent') return reply.redirect(place(step, EMAIL_METHOD).url, 303);
      return redirectWithOutcome(reply, request, services, place(step, EMAIL_METHOD), {
        status: sent === 'limit' ? 429 : 400,
        error: sent === 'limit' ? 'Enough codes were sent for this sign-in. Use the last one, or another method.' : 'Codes by email are not available for this account. Use another method.',
      });
    }
    const byEmail = body.email_code !== undefined;
    const byRecoveryCode = body.recovery_code !== undefined;
    const byWebauthn = body.webauthn_response !== undefined;
    // Back to the page the answer came from: a failed security key enrollment returns to it, not to the app's.
    const enrolling = byWebauthn && (body.method === 'webauthn-roaming' || body.method === 'webauthn-platform') ? body.method : undefined;
    const back = place(step, byEmail ? EMAIL_METHOD : byRecoveryCode ? RECOVERY_METHOD : enrolling);
    const answer = byEmail
      ? { emailCode: (body.email_code ?? '').slice(0, 16) }
      : byWebauthn
      ? { webauthn: (body.webauthn_response ?? '').slice(0, 32_768) }
      : byRecoveryCode
        ? { recoveryCode: (body.recovery_code ?? '').slice(0, 64) }
        : { code: (body.code ?? '').slice(0, 16) };
    const result = await answerSecondFactor(services, request.tenant, challenge, transaction, answer, request.headers['user-agent']);
    const factor: SecondFactorKind = byEmail ? 'email' : byRecoveryCode ? 'recovery-code' : byWebauthn ? (enrolling ?? 'webauthn') : 'totp';
    recordSecondFactorEvent(
      services,
      request,
      result.outcome === 'show-recovery-code' && result.enrolled ? 'gd_enrollment_complete' : answerEventType(factor, result.outcome === 'done' || result.outcome === 'show-recovery-code' ? { outcome: 'right' } : result),
      who(step),
      factor,
    );
    switch (result.outcome) {
      case 'done':
        return finish(result.amr);
      case 'show-recovery-code':
        return reply.redirect(place(step).url, 303);
      case 'wrong':
        return redirectWithOutcome(reply, request, services, back, {
          status: result.nowLocked ? 429 : 400,
          error: result.nowLocked
            ? LOCKED
            : byWebauthn
              ? 'That security key or device was not accepted. Try again, or use another method.'
              : byEmail
                ? 'That code is not right, or has expired. Enter the code from the newest email, or send a new one.'
              : byRecoveryCode
                ? 'That recovery code is not right. Check it and try again.'
                : 'That code is not right. Enter the code your authenticator app shows now.',
        });
      case 'locked':
        return redirectWithOutcome(reply, request, services, back, {
          status: 429,
          error: LOCKED,
        });
    }
  });
}
