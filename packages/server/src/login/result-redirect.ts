/**
 * The "Redirect To" of the verify_email, reset_email and blocked_account templates (`resultUrl`): where the browser goes once the
 * emailed link has done its work, instead of the hosted message page. As the reference, the URL gets `success`
 * (true or false) and `message` (the reference's words, which applications match on), and the user's `email` when
 * the template says so (`includeEmailInRedirect`).
 */
import type { FastifyReply } from 'fastify';
import type { EmailTemplateRow } from '../store/email-settings.js';

export const RESULT_MESSAGES = {
  emailVerified: 'Your email was verified. You can continue using the application.',
  alreadyVerified: 'This account is already verified.',
  usedOnce: 'This URL can be used only once',
  expired: 'Access expired.',
  invalid: 'User account does not exist or verification code is invalid.',
  passwordChanged: 'You can now login to the application with the new password.',
  // The unblock link's outcomes: our words, as the reference documents none for it.
  unblocked: 'Your account is unblocked. You can log in again.',
  invalidUnblock: 'The unblock link is not valid, has already been used, or has expired.',
} as const;

/** Redirects to the template's result URL with the outcome; undefined when the template has none. */
export function redirectToResult(
  reply: FastifyReply,
  template: EmailTemplateRow | undefined,
  outcome: { success: boolean; message: string },
  email?: string,
): FastifyReply | undefined {
  if (!template?.result_url) return undefined;
  const url = new URL(template.result_url);
  if (template.include_email_in_redirect === 1 && email) url.searchParams.set('email', email);
  url.searchParams.set('message', outcome.message);
  url.searchParams.set('success', String(outcome.success));
  return reply.header('cache-control', 'no-store').redirect(url.href, 302);
}
