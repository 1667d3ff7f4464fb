/**
 * GET/POST /u/reset-password/ticket?ticket=…: the page a reset email links to. A valid ticket (unspent,
 * unexpired, of this tenant, for a user who still has the address it was sent to) shows the new-password form;
 * the POST checks the connection's password policy, stores the new hash with `last_password_reset`, spends the
 * ticket (and the user's other reset tickets) in the same transaction, and ends the user's SSO sessions.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { databaseOptions } from '../connections/database-users.js';
import { checkPassword, MAX_PASSWORD_LENGTH, passwordPolicyText, type PasswordPolicyOptions } from '../connections/password-policy.js';
import { hashPassword } from '../crypto/passwords.js';
import { eventContextFrom } from '../events/context.js';
import { emitEvent } from '../events/outbox.js';
import { userEventObject } from '../management/event-objects.js';
import { checkBreachedPasswordAtPasswordChange } from '../protection/checks.js';
import { RESET_TICKET_PATH } from '../messaging/account-emails.js';
import { findTicket, spendTicket, usable, type UserTicket } from '../messaging/tickets.js';
import type { App, Services } from '../services.js';
import { findConnectionById, type Connection } from '../store/connections.js';
import { deleteSsoSessionsOfUser } from '../store/sso-sessions.js';
import { findUser, updateUsers, type User } from '../store/users.js';
import { sendHostedPage } from './hosted-page.js';
import { renderMessagePage } from './pages/message.js';
import { renderResetPasswordPage } from './pages/reset-password.js';
import { formBody } from './step.js';

interface ResetTarget {
  ticket: UserTicket;
  user: User;
  connection: Connection;
}

class TicketSpent extends Error {}

/** The policy text as one line per rule (kind lists folded into their rule), for the form's hint list. */
export function passwordRules(options: PasswordPolicyOptions): string[] {
  const rules: string[] = [];
  for (const line of passwordPolicyText(options).split('\n')) {
    const text = line.replace(/^\s*[*-]\s*/, '').trim();
    if (!text) continue;
    if (/^\s+[*-]/.test(line) && rules.length > 0) rules[rules.length - 1] += `${rules[rules.length - 1]!.endsWith(':') ? ' ' : ', '}${text}`;
    else rules.push(text);
  }
  return rules;
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

function sendInvalidLink(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderMessagePage(context, {
        title: 'This link can no longer be used',
        message: 'Password reset links work once and expire after 24 hours. Ask for a new one from the log-in page.',
      }),
    { status: 400 },
  );
}

function showForm(reply: FastifyReply, request: FastifyRequest, target: ResetTarget, ticket: string, error?: string): FastifyReply {
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderResetPasswordPage(context, {
        action: RESET_TICKET_PATH,
        ticket,
        email: target.user.email ?? '',
        passwordRules: passwordRules(databaseOptions(target.connection)),
        ...(error !== undefined ? { error } : {}),
      }),
    { status: error === undefined ? 200 : 400 },
  );
}

export function registerPasswordResetTicketPage(app: App, services: Services): void {
  app.get(RESET_TICKET_PATH, { config: { rateLimit: { bucket: 'authorize' } }, schema: { hide: true } }, async (request, reply) => {
    const ticket = (request.query as Record<string, unknown>).ticket;
    const target = await resetTarget(services, request, ticket);
    if (!target || typeof ticket !== 'string') return sendInvalidLink(reply, request);
    return showForm(reply, request, target, ticket);
  });

  app.post(RESET_TICKET_PATH, { config: { rateLimit: { bucket: 'login' } }, schema: { hide: true } }, async (request, reply) => {
    const body = formBody(request);
    const ticket = body.ticket ?? '';
    const target = await resetTarget(services, request, ticket);
    if (!target) return sendInvalidLink(reply, request);
    const password = body.password ?? '';
    if (password.length > 4 * MAX_PASSWORD_LENGTH) return showForm(reply, request, target, ticket, 'That password is too long.');
    if (password !== (body.password_confirmation ?? '')) return showForm(reply, request, target, ticket, 'The two passwords do not match.');
    const { user, connection } = target;
    const check = checkPassword(password, databaseOptions(connection), {
      email: user.email,
      username: user.username,
      ...user.profile,
      phone_number: user.phone_number,
      user_metadata: user.user_metadata,
    });
    if (!check.ok) return showForm(reply, request, target, ticket, `${check.message}.`);
    if ((await checkBreachedPasswordAtPasswordChange(services, connection, password)) === 'password_leaked') {
      return showForm(reply, request, target, ticket, 'This password has appeared in a data breach elsewhere. Choose a different one.');
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
      });
    } catch (err) {
      if (err instanceof TicketSpent) return sendInvalidLink(reply, request);
      throw err;
    }
    // Whoever knew the old password is signed out everywhere (a linked identity's sessions are its primary's).
    await deleteSsoSessionsOfUser(services.store.db, user.tenant_id, user.user_id);
    if (user.linked_to) await deleteSsoSessionsOfUser(services.store.db, user.tenant_id, user.linked_to);
    request.log.info({ userId: user.user_id }, 'password reset with an emailed ticket');
    return sendHostedPage(reply, request.tenant, (context) =>
      renderMessagePage(context, {
        title: 'Your password has been changed',
        message: 'You can now log in with your new password. For your safety, every session of this account has been signed out.',
      }),
    );
  });
}
