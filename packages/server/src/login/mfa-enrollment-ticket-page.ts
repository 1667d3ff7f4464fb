/**
 * GET/POST /u/mfa-enrollment?ticket=…: an enrollment ticket's page (mfa/enrollment-ticket.ts has the security
 * read). The enrollment view of the MFA pages (QR code drawn server-side, the key as text), then the first code;
 * a right one enrolls the authenticator app, spends the ticket and shows the recovery code once, and that is all:
 * the page starts no session and leads nowhere but back to the application's own login. Problems come back to
 * the form (post/redirect/get, form-outcome.ts). CSRF: the form carries a random token that must match a cookie
 * of this page (double submit) besides the ticket itself, which a forging site does not know either.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { documentedOnly, FORM, frontChannelParameters } from '../http/openapi.js';
import { htmlPage } from '../http/responses.js';
import {
  answerTicketEnrollment,
  ENROLLMENT_TICKET_PATH,
  openEnrollmentTicket,
  startTicketEnrollment,
  type TicketProblem,
} from '../mfa/enrollment-ticket.js';
import type { App, Services } from '../services.js';
import { BACK_TO_THE_FORM, PAGE_TAGS, TICKET_QUERY } from './documentation.js';
import { formOutcome, redirectWithOutcome } from './form-outcome.js';
import { sendHostedPage, signInResponseHeaders } from './hosted-page.js';
import { renderMessagePage } from './pages/message.js';
import { qrCodeSvg, renderMfaEnrollPage, renderMfaTicketEnrolledPage } from './pages/mfa.js';
import { cookieOptions, sha256 } from './session.js';
import { formBody } from './step.js';
import { answerEventType, recordSecondFactorEvent } from '../logs/second-factor.js';
import type { User } from '../store/users.js';

const CSRF_COOKIE = 'gh_mfa_enroll';
const LOCKED = 'Too many wrong codes: multi-factor authentication is locked for this account. Contact the administrator of this application to unlock it.';

const place = (ticket: string) => ({ page: 'mfa-enrollment', binding: sha256(ticket), url: `${ENROLLMENT_TICKET_PATH}?ticket=${encodeURIComponent(ticket)}` });

const PROBLEMS: Record<TicketProblem, { title: string; message: string }> = {
  invalid: { title: 'This link does not work', message: 'The enrollment link is not valid. Ask the administrator of the application for a new one.' },
  used: { title: 'This link was already used', message: 'Enrollment links work once. Log in with your password and your authenticator app, or ask the administrator of the application for a new link.' },
  expired: { title: 'This link has expired', message: 'Enrollment links expire after 5 days. Ask the administrator of the application for a new one.' },
  enrolled: { title: 'Your account already has a second factor', message: 'This link cannot add another one. Log in as usual; to change your factors, ask the administrator of the application.' },
  unavailable: { title: 'Authenticator apps are not available', message: 'This application does not offer authenticator apps at the moment. Ask its administrator.' },
};

function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: TicketProblem): FastifyReply {
  return sendHostedPage(reply, request.tenant, (context) => renderMessagePage(context, { ...PROBLEMS[problem], tone: 'problem' }), { status: 400 });
}

function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Who a `gd_*` event of a ticket is about (no client: the link came from an administrator). */
const ticketHolder = (user: User) => ({ userId: user.user_id, userName: user.email ?? user.username ?? undefined });

export function registerMfaEnrollmentTicketPage(app: App, services: Services): void {
  app.get(ENROLLMENT_TICKET_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: "An MFA enrollment ticket's link: set up an authenticator app (no password, no login)",
      ...TICKET_QUERY,
      response: {
        200: htmlPage('The enrollment: the QR code and the key, and the form for the first code'),
        400: htmlPage("The form again after a wrong code; or the link's error page (not valid, used, expired, or the user already has a factor)"),
        429: htmlPage('The form again after a refused code: too many wrong codes, so MFA is locked for the account'),
      },
    },
  }, async (request, reply) => {
    signInResponseHeaders(reply);
    const ticket = (request.query as Record<string, unknown>).ticket;
    const opened = await openEnrollmentTicket(services, request.tenant, ticket);
    if ('problem' in opened) return sendProblem(reply, request, opened.problem);
    const secret = ticket as string;
    const outcome = formOutcome(request, services, place(secret));
    const { secret: key, uri } = await startTicketEnrollment(services, request.tenant, opened.user);
    if (!outcome) recordSecondFactorEvent(services, request, 'gd_start_enroll', ticketHolder(opened.user), 'totp');
    const qrSvg = await qrCodeSvg(uri);
    // Kept across reloads and the redirect after a wrong code, so an open form (or a second tab) stays valid.
    const existing = request.cookies[CSRF_COOKIE];
    const csrfToken = existing && /^[A-Za-z0-9_-]{32}$/.test(existing) ? existing : randomBytes(24).toString('base64url');
    reply.setCookie(CSRF_COOKIE, csrfToken, { ...cookieOptions(request.tenant), path: ENROLLMENT_TICKET_PATH });
    return sendHostedPage(
      reply,
      request.tenant,
      (ctx) =>
        renderMfaEnrollPage(ctx, {
          action: ENROLLMENT_TICKET_PATH,
          csrfToken,
          transaction: '',
          ticket: secret,
          secret: key,
          qrSvg,
          ...(outcome?.error !== undefined && { error: outcome.error }),
        }),
      { status: outcome?.status ?? 200 },
    );
  });

  app.post(ENROLLMENT_TICKET_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Enroll the authenticator app with its first code',
      ...documentedOnly({
        body: frontChannelParameters({ ticket: 'From the link', code: 'The 6-digit code from the authenticator app', _csrf: "The page's CSRF token" }, ['ticket', 'code', '_csrf']),
        consumes: [FORM],
      }),
      response: {
        200: htmlPage('Enrolled: the recovery code to keep, when one was issued; no session is started'),
        303: BACK_TO_THE_FORM,
        400: htmlPage("The link's error page (not valid, used, expired, the user already has a factor), or the form was sent from another page (CSRF)"),
      },
    },
  }, async (request, reply) => {
    signInResponseHeaders(reply);
    const body = formBody(request);
    if (!sameToken(body._csrf, request.cookies[CSRF_COOKIE])) {
      return sendHostedPage(
        reply,
        request.tenant,
        (context) => renderMessagePage(context, { title: 'This form has expired', message: 'Open the link from your email again and enter a new code.', tone: 'problem' }),
        { status: 400 },
      );
    }
    const secret = body.ticket ?? '';
    const opened = await openEnrollmentTicket(services, request.tenant, secret);
    if ('problem' in opened) return sendProblem(reply, request, opened.problem);
    const result = await answerTicketEnrollment(services, request.tenant, opened, (body.code ?? '').slice(0, 16));
    if (result.outcome !== 'used') {
      const type = result.outcome === 'enrolled' ? 'gd_enrollment_complete' : answerEventType('totp', result);
      recordSecondFactorEvent(services, request, type, ticketHolder(opened.user), 'totp');
    }
    switch (result.outcome) {
      case 'enrolled':
        reply.clearCookie(CSRF_COOKIE, { path: ENROLLMENT_TICKET_PATH });
        request.log.info({ userId: opened.user.user_id }, 'MFA enrolled with an enrollment ticket');
        return sendHostedPage(reply, request.tenant, (ctx) => renderMfaTicketEnrolledPage(ctx, result.recoveryCode ? { recoveryCode: result.recoveryCode } : {}));
      case 'used':
        return sendProblem(reply, request, 'used');
      case 'wrong':
      case 'locked': {
        const locked = result.outcome === 'locked' || result.nowLocked;
        return redirectWithOutcome(reply, request, services, place(secret), {
          status: locked ? 429 : 400,
          error: locked ? LOCKED : 'That code is not right. Enter the code your authenticator app shows now.',
        });
      }
    }
  });
}
