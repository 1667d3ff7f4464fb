/**
 * How the hosted pages appear in the OpenAPI documents: their parameters (read by the handlers, which answer
 * with a page rather than a schema's 400) and the answers they share.
 */
import type { TSchema } from '@fastify/type-provider-typebox';
import { documentedOnly, FORM, frontChannelParameters } from '../http/openapi.js';
import { htmlPage, redirect } from '../http/responses.js';

export const PAGE_TAGS = ['hosted pages'];

const RETRY = "Set by the redirect after the form's POST: the page shows that post's outcome (form-outcome.ts)";

/** GET of a page reached from /authorize: `?state=<login transaction>`. */
export const STATE_QUERY = documentedOnly({
  querystring: frontChannelParameters({ state: 'The login transaction, from the redirect that led here', retry: RETRY }, ['state']),
});

/** POST of a page's form: its fields, the login transaction and the CSRF token. */
export function formFields(fields: Record<string, string>, required: readonly string[] = []): Record<string, unknown> {
  const body: TSchema = frontChannelParameters(
    { transaction: 'The login transaction', _csrf: "The form's CSRF token (bound to this browser)", ...fields },
    ['transaction', '_csrf', ...required],
  );
  return documentedOnly({ body, consumes: [FORM] });
}

/** GET of an emailed link: `?ticket=…`. */
export const TICKET_QUERY = documentedOnly({ querystring: frontChannelParameters({ ticket: 'From the email', retry: RETRY }, ['ticket']) });

/** After a form's POST (post/redirect/get): the page shows that post's outcome. */
export const BACK_TO_THE_FORM = redirect("Back to the form's page, which shows the outcome (what went wrong, or that it is done); or to /authorize/resume");

export const INVALID_LINK = htmlPage('The link is not valid, was used, or expired');

export const STALE_STEP = htmlPage(
  'The error page: the login transaction expired, was completed, belongs to another browser, or the CSRF token does not match',
);

export const TO_RESUME = redirect('To /authorize/resume, which finishes the sign-in');
