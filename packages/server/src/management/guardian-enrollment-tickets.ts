/**
 * POST /api/v2/guardian/enrollments/ticket (the reference's): an MFA enrollment ticket for a user of the tenant,
 * emailed to them unless `send_mail` is false (the reference's default is to send). The body and the answer are
 * the reference's (`{ ticket_id, ticket_url }`); what the ticket may do is mfa/enrollment-ticket.ts.
 *  - `factor`: `otp` (or none: the authenticator app, the one factor a ticket enrolls here); `email` is refused
 *    as by the reference (400); push, phone and the WebAuthn factors are not enrolled by ticket here (501).
 *  - `email`: another address for the email (the user's own otherwise); `email_locale` is accepted and has no
 *    effect (the built-in emails are in English; a tenant's enrollment_email template says what it says).
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidInput, NotOffered } from '../http/errors.js';
import { errorResponses } from '../http/responses.js';
import { createEnrollmentTicket, TICKET_FACTORS, type TicketFactor } from '../mfa/enrollment-ticket.js';
import type { App, Services } from '../services.js';
import { findPrimaryUser } from '../store/users.js';
import { operation } from './operation.js';
import { UserNotFound } from './users.js';

const TicketBody = Type.Object(
  {
    user_id: Type.String({ minLength: 3, maxLength: 321, pattern: '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$', description: 'The user to enroll' }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 320, description: "Another address to email the ticket to (the user's own otherwise)" })),
    send_mail: Type.Optional(Type.Boolean({ description: 'Whether to email the ticket to the user (default true)' })),
    email_locale: Type.Optional(Type.String({ maxLength: 35, description: 'Accepted; the emails are in English' })),
    factor: Type.Optional(Type.String({ enum: [...TICKET_FACTORS], description: 'The factor to enroll: otp (the only one offered by ticket)' })),
    allow_multiple_enrollments: Type.Optional(Type.Boolean({ description: 'Whether a user who has a factor already may add one (default false)' })),
  },
  { additionalProperties: false },
);
const Ticket = Type.Object({
  ticket_id: Type.String({ description: 'The ticket (opens nothing by itself)' }),
  ticket_url: Type.String({ description: 'The link to the enrollment page: single use, 5 days' }),
});

export function registerGuardianEnrollmentTickets(api: App, services: Services): void {
  api.post('/guardian/enrollments/ticket', {
    ...operation(['create:guardian_enrollment_tickets'], {
      summary: 'Create an MFA enrollment ticket, and email it to the user',
      body: TicketBody,
      response: {
        200: Ticket,
        ...errorResponses('management', {
          400: 'invalid_body: a malformed body; factor email (not enrolled by ticket); send_mail without an address to send to',
          404: 'inexistent_user',
          501: 'not_offered: a factor other than otp (push-notification, phone, webauthn-roaming, webauthn-platform)',
        }),
      },
    }),
    handler: async (request) => {
      const body = request.body;
      const factor = body.factor as TicketFactor | undefined;
      if (factor === 'email') throw new InvalidInput('body', 'factor: email cannot be enrolled through an enrollment ticket.');
      if (factor !== undefined && factor !== 'otp') throw new NotOffered(`Enrolling ${factor} through a ticket`, 'is not offered by this server (otp is; security keys and passkeys are enrolled at login).');
      const user = await findPrimaryUser(services.store.db, request.tenant.id, body.user_id);
      if (!user) throw new UserNotFound();
      const sendMail = body.send_mail ?? true;
      const mailTo = sendMail ? (body.email ?? user.email ?? undefined) : undefined;
      if (sendMail && !mailTo) throw new InvalidInput('body', 'send_mail: the user has no email address; give email, or send_mail: false and hand the ticket_url over yourself.');
      const created = await createEnrollmentTicket(services, request.tenant, user, { factor, allowMultiple: body.allow_multiple_enrollments ?? false, mailTo });
      return { ticket_id: created.ticketId, ticket_url: created.ticketUrl };
    },
  });
}
