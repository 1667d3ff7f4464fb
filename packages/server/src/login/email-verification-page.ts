/**
 * GET /u/email-verification?ticket=…: the link in a verification email. Marks the address verified when the
 * ticket is unspent, unexpired, and the user still has the address it was sent to; a hosted message page says
 * what happened either way. A GET changes state here on purpose: the link must work with one click, and the
 * only effect is the one the link's recipient is asked for. When the tenant's verify_email template has a
 * `resultUrl`, the browser goes there instead, with the outcome in the reference's words (result-redirect.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { eventContextFrom } from '../events/context.js';
import { emitEvent } from '../events/outbox.js';
import { userEventObject } from '../management/event-objects.js';
import { VERIFY_EMAIL_PATH } from '../messaging/account-emails.js';
import { tenantTemplate } from '../messaging/email-templates.js';
import { findTicket, spendTicket, usable } from '../messaging/tickets.js';
import type { App, Services } from '../services.js';
import { findUser, updateUsers, type User } from '../store/users.js';
import { sendHostedPage } from './hosted-page.js';
import { htmlPage, redirect } from '../http/responses.js';
import { INVALID_LINK, PAGE_TAGS, TICKET_QUERY } from './documentation.js';
import { renderMessagePage } from './pages/message.js';
import { redirectToResult, RESULT_MESSAGES } from './result-redirect.js';

class TicketSpent extends Error {}

function verified(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendHostedPage(reply, request.tenant, (context) =>
    renderMessagePage(context, { title: 'Email address verified', message: 'Thank you. Your email address has been verified; you can close this page.' }),
  );
}

function invalidLink(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderMessagePage(context, {
        title: 'This link can no longer be used',
        tone: 'problem',
        message: 'Verification links work once and expire after 5 days. Log in to the application to get a new one.',
      }),
    { status: 400 },
  );
}

export function registerEmailVerificationPage(app: App, services: Services): void {
  app.get(VERIFY_EMAIL_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'The emailed verification link',
      ...TICKET_QUERY,
      response: {
        200: htmlPage('The email is verified (also on a second click)'),
        302: redirect('When the verify_email template has a resultUrl: to it, with success, message (and email when asked)'),
        400: INVALID_LINK,
      },
    },
  }, async (request, reply) => {
    const db = services.store.db;
    const tenantId = request.tenant.id;
    const template = await tenantTemplate(db, tenantId, 'verify_email');
    // `fv` for a link that did not verify (unknown, expired, used), `sv` once it did; never the ticket.
    const record = (type: 'sv' | 'fv', description: string, user?: User) =>
      services.tenantLogs.recordFor(request, { type, description, ...(user && { user_id: user.user_id, user_name: user.email ?? undefined }) });
    const failed = (message: string, email?: string, user?: User) => {
      record('fv', message, user);
      return redirectToResult(reply, template, { success: false, message }, email) ?? invalidLink(reply, request);
    };
    const ticket = await findTicket(db, tenantId, 'email_verification', (request.query as Record<string, unknown>).ticket);
    if (!ticket) return failed(RESULT_MESSAGES.invalid);
    const user = await findUser(db, tenantId, ticket.user_id);
    if (!user || user.email !== ticket.email) return failed(RESULT_MESSAGES.invalid);
    // A second click on a link that worked (or a mail scanner's prefetch before the user) still reads as done.
    if (user.email_verified) return redirectToResult(reply, template, { success: false, message: RESULT_MESSAGES.alreadyVerified }, user.email) ?? verified(reply, request);
    if (!usable(ticket)) return failed(ticket.used_at === null ? RESULT_MESSAGES.expired : RESULT_MESSAGES.usedOnce, user.email, user);
    const now = Date.now();
    const updated: User = { ...user, email_verified: true, updated_at: now };
    try {
      await updateUsers(db, [updated], now, async (trx) => {
        if (!(await spendTicket(trx, ticket, now))) throw new TicketSpent();
        await emitEvent(trx, {
          tenantId,
          type: 'user.updated',
          object: await userEventObject(trx, updated),
          previousObject: await userEventObject(trx, user),
          context: { ...eventContextFrom(request), connection_id: user.connection_id, ...(ticket.client_id ? { client_id: ticket.client_id } : {}) },
        });
      });
    } catch (err) {
      if (err instanceof TicketSpent) return failed(RESULT_MESSAGES.usedOnce, user.email, user);
      throw err;
    }
    record('sv', RESULT_MESSAGES.emailVerified, updated);
    return redirectToResult(reply, template, { success: true, message: RESULT_MESSAGES.emailVerified }, user.email) ?? verified(reply, request);
  });
}
