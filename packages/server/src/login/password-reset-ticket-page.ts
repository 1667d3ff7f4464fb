/**
 * GET/POST /u/reset-password/ticket?ticket=…: the page a reset email links to. A valid ticket (unspent,
 * unexpired, of this tenant, for a user who still has the address it was sent to) shows the new-password form;
 * the POST checks the connection's password policy, stores the new hash with `last_password_reset`, spends the
 * ticket (and the user's other reset tickets) in the same transaction, and ends the user's SSO sessions. Either
 * way the POST answers 303 back to the page (form-outcome.ts), which then shows the problem or the success, the
 * latter with a link to the application's login.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { databaseOptions } from '../connections/database-users.js';
import { checkPassword, MAX_PASSWORD_LENGTH, passwordChecklist } from '../connections/password-policy.js';
import { hashPassword } from '../crypto/passwords.js';
import { eventContextFrom } from '../events/context.js';
import { emitEvent } from '../events/outbox.js';
import { userEventObject } from '../management/event-objects.js';
import { checkBreachedPasswordAtPasswordChange } from '../protection/checks.js';
import { RESET_TICKET_PATH } from '../messaging/account-emails.js';
import { tenantTemplate } from '../messaging/email-templates.js';
import { findTicket, spendTicket, usable, type UserTicket } from '../messaging/tickets.js';
import type { App, Services } from '../services.js';
import { logRow, requestOrigin } from '../logs/log-event.js';
import type { Tenant } from '../store/tenants.js';
import { findConnectionById, type Connection } from '../store/connections.js';
import { endSessionsOfUsers } from '../auth-api/backchannel-logout/queue.js';
import { findUser, updateUsers, type User } from '../store/users.js';
import { formOutcome, redirectWithOutcome, type FormOutcome } from './form-outcome.js';
import { sendHostedPage } from './hosted-page.js';
import { documentedOnly, FORM, frontChannelParameters } from '../http/openapi.js';
import { htmlPage, redirect } from '../http/responses.js';
import { BACK_TO_THE_FORM, INVALID_LINK, PAGE_TAGS, TICKET_QUERY } from './documentation.js';
import { renderMessagePage } from './pages/message.js';
import { passwordAdvice } from './pages/password-rules.js';
import { renderResetPasswordPage } from './pages/reset-password.js';
import { redirectToResult, RESULT_MESSAGES } from './result-redirect.js';
import { sha256 } from './session.js';
import { formBody } from './step.js';

interface ResetTarget {
  ticket: UserTicket;
  user: User;
  connection: Connection;
}

class TicketSpent extends Error {}

/** The ticket page of one ticket (known by its hash, never kept in clear), and where its POST sends the browser back to. */
const place = (ticket: string) => ({ page: 'reset-ticket', binding: sha256(ticket), url: `${RESET_TICKET_PATH}?ticket=${encodeURIComponent(ticket)}` });

/**
 * Where "Log in" leads once the password is changed (or the link is dead): the application's own login route
 * (its `initiate_login_uri`), else the tenant's default login route, else, for the Default App of the default
 * tenant, the demo this server serves. Undefined when none is known: the page then says to go back to the app.
 */
async function applicationLogin(services: Services, tenant: Tenant, clientId: string | null | undefined): Promise<string | undefined> {
  const client = clientId ? await services.configCache.client(tenant.id, clientId) : undefined;
  // A route with {placeholders} needs values (an organization, a connection) that a reset does not have.
  if (client?.initiate_login_uri && !client.initiate_login_uri.includes('{')) return client.initiate_login_uri;
  if (tenant.settings.default_redirection_uri) return tenant.settings.default_redirection_uri;
  if (client?.is_default_app && tenant.isDefault) return `${tenant.baseUrl}/demo`;
  return undefined;
}

async function resetTarget(services: Services, request: FastifyRequest, value: unknown): Promise<ResetTarget | undefined> {
  const db = services.store.db;
  const tenantId = request.tenant.id;
  const ticket = await findTicket(db, tenantId, 'password_reset', value);
  if (!ticket || !usable(ticket)) return undefined;
  const user = await findUser(db, tenantId, ticket.user_id);
  // A link sent to an address the user no longer has must not change the password.
  if (!user || user.email !== ticket.email) return undefined;
  const connection = await findConnectionById(db, tenantId, user.connection_id);
  if (!connection || connection.strategy !== 'auth0') return undefined;
  return { ticket, user, connection };
}

async function sendInvalidLink(reply: FastifyReply, request: FastifyRequest, services: Services, ticket: unknown): Promise<FastifyReply> {
  const known = await findTicket(services.store.db, request.tenant.id, 'password_reset', ticket);
  const login = await applicationLogin(services, request.tenant, known?.client_id);
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderMessagePage(context, {
        title: 'This link can no longer be used',
        tone: 'problem',
        message: 'Password reset links work once and expire after 24 hours. Ask for a new one with “Forgot password?” on the log-in page.',
        ...(login ? { linkUrl: login, linkText: 'Go to the log-in page' } : {}),
      }),
    { status: 400 },
  );
}

async function sendPasswordChanged(reply: FastifyReply, request: FastifyRequest, services: Services, ticket: string): Promise<FastifyReply> {
  const spent = await findTicket(services.store.db, request.tenant.id, 'password_reset', ticket);
  // The reset_email template's "Redirect To" takes the browser back to the application instead of this page.
  const template = await tenantTemplate(services.store.db, request.tenant.id, 'reset_email');
  const redirected = redirectToResult(reply, template, { success: true, message: RESULT_MESSAGES.passwordChanged }, spent?.email);
  if (redirected) return redirected;
  const login = await applicationLogin(services, request.tenant, spent?.client_id);
  return sendHostedPage(reply, request.tenant, (context) =>
    renderMessagePage(context, {
      title: 'Your password has been changed',
      message: login
        ? 'Log in with your new password. For your safety, every session of this account has been signed out.'
        : 'Go back to the application and log in with your new password. For your safety, every session of this account has been signed out.',
      ...(login ? { linkUrl: login, linkText: 'Log in' } : {}),
    }),
  );
}

function showForm(reply: FastifyReply, request: FastifyRequest, target: ResetTarget, ticket: string, outcome?: FormOutcome): FastifyReply {
  const options = databaseOptions(target.connection);
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderResetPasswordPage(context, {
        action: RESET_TICKET_PATH,
        ticket,
        email: target.user.email ?? '',
        passwordRules: outcome?.passwordRules ? { rules: outcome.passwordRules, checked: true } : { rules: passwordChecklist(options), checked: false },
        ...(outcome?.error !== undefined ? { error: outcome.error } : {}),
      }),
    { status: outcome?.status ?? 200 },
  );
}

export function registerPasswordResetTicketPage(app: App, services: Services): void {
  app.get(RESET_TICKET_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'The emailed password reset link: the form for a new password',
      ...TICKET_QUERY,
      response: {
        200: htmlPage('The form, or after the POST "your password has been changed"'),
        302: redirect('After the POST, when the reset_email template has a resultUrl: to it, with success and message'),
        400: htmlPage("The form again after the POST, saying why the password was refused; or the link's error page"),
      },
    },
  }, async (request, reply) => {
    const ticket = (request.query as Record<string, unknown>).ticket;
    if (typeof ticket !== 'string') return sendInvalidLink(reply, request, services, ticket);
    // After the POST (post/redirect/get): the success, or the problem to fix.
    const outcome = formOutcome(request, services, place(ticket));
    if (outcome?.done) return sendPasswordChanged(reply, request, services, ticket);
    const target = await resetTarget(services, request, ticket);
    if (!target) return sendInvalidLink(reply, request, services, ticket);
    return showForm(reply, request, target, ticket, outcome);
  });

  app.post(RESET_TICKET_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Set the new password',
      ...documentedOnly({
        body: frontChannelParameters({ ticket: 'From the link', password: 'The new password', password_confirmation: 'The same again' }, ['ticket', 'password', 'password_confirmation']),
        consumes: [FORM],
      }),
      response: {
        303: BACK_TO_THE_FORM,
        400: INVALID_LINK,
      },
    },
  }, async (request, reply) => {
    const body = formBody(request);
    const ticket = body.ticket ?? '';
    const target = await resetTarget(services, request, ticket);
    if (!target) return sendInvalidLink(reply, request, services, ticket);
    const { user: owner, connection: ownerConnection } = target;
    const changeFacts = {
      user_id: owner.user_id,
      user_name: owner.email ?? owner.username ?? undefined,
      connection: { id: ownerConnection.id, name: ownerConnection.name, strategy: ownerConnection.strategy },
      ...(target.ticket.client_id ? { client: { client_id: target.ticket.client_id } } : {}),
    };
    const retry = (outcome: Omit<FormOutcome, 'status'>) => {
      // `fcp`: the reason shown to the person, which never repeats the password.
      services.tenantLogs.recordFor(request, { type: 'fcp', ...changeFacts, description: outcome.error?.slice(0, 300) });
      return redirectWithOutcome(reply, request, services, place(ticket), { status: 400, ...outcome });
    };
    const password = body.password ?? '';
    if (password.length > 4 * MAX_PASSWORD_LENGTH) return retry({ error: `That password is too long. Choose one of at most ${MAX_PASSWORD_LENGTH} characters.` });
    if (password !== (body.password_confirmation ?? '')) return retry({ error: 'The two passwords do not match. Type the same new password in both fields.' });
    const { user, connection } = target;
    const personal = { email: user.email, username: user.username, ...user.profile, phone_number: user.phone_number, user_metadata: user.user_metadata };
    const check = checkPassword(password, databaseOptions(connection), personal);
    if (!check.ok) return retry({ error: passwordAdvice(check), passwordRules: passwordChecklist(databaseOptions(connection), password, personal) });
    if ((await checkBreachedPasswordAtPasswordChange(services, connection, password)) === 'password_leaked') {
      return retry({ error: 'This password has appeared in a data breach elsewhere. Choose a different one.' });
    }

    const now = Date.now();
    const updated: User = { ...user, password_hash: await hashPassword(password), last_password_reset: now, updated_at: now };
    try {
      await updateUsers(services.store.db, [updated], now, async (trx) => {
        // Spent in the same transaction: two tabs racing with one link change the password once.
        if (!(await spendTicket(trx, target.ticket, now))) throw new TicketSpent();
        const previousObject = await userEventObject(trx, user);
        await emitEvent(trx, {
          tenantId: user.tenant_id,
          type: 'user.updated',
          object: await userEventObject(trx, updated),
          previousObject,
          context: { ...eventContextFrom(request), connection_id: connection.id, ...(target.ticket.client_id ? { client_id: target.ticket.client_id } : {}) },
        });
        // `scp` commits with the new password.
        await services.tenantLogs.writeWith(trx, () => [logRow(user.tenant_id, { type: 'scp', ...changeFacts }, requestOrigin(request), now)]);
      });
    } catch (err) {
      if (err instanceof TicketSpent) return sendInvalidLink(reply, request, services, ticket);
      throw err;
    }
    // Whoever knew the old password is signed out everywhere (a linked identity's sessions are its primary's).
    // The clients those sessions served are told (back-channel logout, initiator password-changed).
    await endSessionsOfUsers(services, request.tenant, [user.user_id, ...(user.linked_to ? [user.linked_to] : [])], 'password-changed');
    request.log.info({ userId: user.user_id }, 'password reset with an emailed ticket');
    return redirectWithOutcome(reply, request, services, place(ticket), { status: 200, done: true });
  });
}
