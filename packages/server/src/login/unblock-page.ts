/**
 * GET /u/unblock?ticket=…: the brute-force notice's link (protection/block-notice.ts), or a factor lock's
 * (mfa/lock-notice.ts; a ticket of the other format). Lifts that one block or lock and says so; any bad link gets one plain answer. When the tenant's blocked_account template has a `resultUrl`, the
 * browser goes there instead, with `success` and `message` as after the other emailed links (result-redirect.ts).
 */
import type { FastifyReply } from 'fastify';
import { htmlPage, redirect } from '../http/responses.js';
import { tenantTemplate } from '../messaging/email-templates.js';
import { liftLockByTicket } from '../mfa/lock-notice.js';
import { openUnblockTicket, UNBLOCK_PATH } from '../protection/block-notice.js';
import type { App, Services } from '../services.js';
import type { Tenant } from '../store/tenants.js';
import { INVALID_LINK, PAGE_TAGS, TICKET_QUERY } from './documentation.js';
import { sendHostedPage } from './hosted-page.js';
import { renderErrorPage, renderMessagePage } from './pages/message.js';
import { redirectToResult, RESULT_MESSAGES } from './result-redirect.js';

/** GET /u/unblock?ticket=…: the notice's link. Lifts that one block and says so; any bad link gets one plain answer. */
export function registerUnblockPage(app: App, services: Services): void {
  const invalid = (reply: FastifyReply, tenant: Tenant, requestId: string) =>
    sendHostedPage(
      reply,
      tenant,
      (context) =>
        renderErrorPage(context, {
          title: 'This link does not work',
          error: 'invalid_ticket',
          description: 'The unblock link is not valid, has already been used, or has expired. Log in again (the block may be lifted already), or ask the administrator of the application to lift it.',
          requestId,
        }),
      { status: 400 },
    );

  app.get(UNBLOCK_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: "The block notice's link: lifts that brute-force block, or that factor lock",
      ...TICKET_QUERY,
      response: {
        200: htmlPage('Unblocked'),
        302: redirect('When the blocked_account template has a resultUrl: to it, with success and message'),
        400: INVALID_LINK,
      },
    },
  }, async (request, reply) => {
    const { ticket } = request.query as { ticket?: unknown };
    const template = await tenantTemplate(services.store.db, request.tenant.id, 'blocked_account');
    const failed = () => redirectToResult(reply, template, { success: false, message: RESULT_MESSAGES.invalidUnblock }) ?? invalid(reply, request.tenant, request.id);
    const blockId = openUnblockTicket(services.sealer, request.tenant.id, ticket);
    const lifted = blockId ? (await services.attackProtection.liftBlocks(request.tenant.id, { id: blockId })).length > 0 : await liftLockByTicket(services, request.tenant.id, ticket);
    if (!lifted) return failed();
    return redirectToResult(reply, template, { success: true, message: RESULT_MESSAGES.unblocked }) ?? sendHostedPage(reply, request.tenant, (context) =>
      renderMessagePage(context, { title: 'Your account is unblocked', message: 'You can log in again. If you did not make the failed attempts, consider changing your password.' }),
    );
  });
}
