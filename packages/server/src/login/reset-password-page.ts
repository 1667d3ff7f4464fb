/**
 * GET/POST /u/reset-password: where the login page's "Forgot password?" link leads. The POST emails a reset
 * link when the address belongs to a user of the client's database connection and shows the same "check your
 * email" state whether or not it does; the lookup and the email happen after the answer, so its timing says
 * nothing either. The link itself leads to the ticket page (password-reset-ticket-page.ts), registered here too.
 */
import { LOGIN_PATH } from '../auth-api/authorize/complete.js';
import { databaseConnectionFor } from '../connections/database-users.js';
import { InvalidRequest } from '../http/errors.js';
import { requestPasswordReset } from '../messaging/account-emails.js';
import type { App, Services } from '../services.js';
import { sendErrorPage } from './error-page.js';
import { RESET_PASSWORD_PATH } from './login-page.js';
import { sendHostedPage } from './hosted-page.js';
import { htmlPage } from '../http/responses.js';
import { BACK_TO_THE_FORM, formFields, PAGE_TAGS, STATE_QUERY } from './documentation.js';
import { registerPasswordResetTicketPage } from './password-reset-ticket-page.js';
import { renderForgotPasswordPage } from './pages/forgot-password.js';
import { formBody, loadStep } from './step.js';
import { formOutcome, redirectWithOutcome } from './form-outcome.js';
import { isEmailAddress, normalizeEmail } from '../connections/email-address.js';

/** The "forgot password" page of a transaction, and where its POST sends the browser back to. */
const place = (transactionId: string) => ({ page: 'forgot-password', binding: transactionId, url: `${RESET_PASSWORD_PATH}?state=${transactionId}` });

export function registerResetPasswordPage(app: App, services: Services): void {
  app.get(RESET_PASSWORD_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: '"Forgot password?": the page that asks for the email',
      ...STATE_QUERY,
      response: {
        200: htmlPage('The form, or after the POST "check your email" (the same whether or not the account exists)'),
        400: htmlPage('The form again after the POST, for an invalid email; or the error page for a stale login transaction'),
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'GET');
    if (!step) return reply;
    const { transaction } = step;
    // After the POST (post/redirect/get): "check your email", or the address to correct.
    const outcome = formOutcome(request, services, place(transaction.id));
    const hint = transaction.request.loginHint?.includes('@') ? transaction.request.loginHint : undefined;
    const email = outcome?.values?.email ?? hint;
    return sendHostedPage(
      reply,
      request.tenant,
      (context) =>
        renderForgotPasswordPage(context, {
          action: RESET_PASSWORD_PATH,
          csrfToken: transaction.csrfToken,
          transaction: transaction.id,
          loginUrl: `${LOGIN_PATH}?state=${transaction.id}`,
          ...(email !== undefined ? { email } : {}),
          ...(outcome?.error !== undefined ? { error: outcome.error } : {}),
          ...(outcome?.done ? { sent: true } : {}),
        }),
      { status: outcome?.status ?? 200 },
    );
  });

  app.post(RESET_PASSWORD_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Email a password reset link',
      ...formFields({ email: 'The email of the account' }, ['email']),
      response: {
        303: BACK_TO_THE_FORM,
        400: htmlPage('The error page: a stale form, or no password reset for this application'),
      },
    },
  }, async (request, reply) => {
    const step = await loadStep(request, reply, services, 'POST');
    if (!step) return reply;
    const { transaction, client } = step;
    const typed = (formBody(request).email ?? '').slice(0, 320);
    const email = normalizeEmail(typed);
    if (!isEmailAddress(email)) {
      return redirectWithOutcome(reply, request, services, place(transaction.id), { status: 400, error: 'Enter a valid email address, such as name@example.com.', values: { email: typed } });
    }
    const connection = await databaseConnectionFor(services, request.tenant, client.client_id, transaction.request.connection);
    if (!connection || connection.options.disable_self_service_change_password === true) {
      return sendErrorPage(reply, request, new InvalidRequest('Password reset is not available for this application. Contact its administrator to change your password.'));
    }
    const tenant = request.tenant;
    const log = request.log;
    // Not awaited: the page must not wait on (and so reveal) whether there was a user to email.
    void requestPasswordReset(services, tenant, connection, { email }, client.client_id).catch((err: unknown) => {
      log.error({ err }, 'queueing a password reset email failed');
    });
    // A reload of the "check your email" page shows it again rather than sending another email.
    return redirectWithOutcome(reply, request, services, place(transaction.id), { status: 200, done: true, values: { email } });
  });

  registerPasswordResetTicketPage(app, services);
}
