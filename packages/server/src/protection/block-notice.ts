/**
 * The brute-force block notice (shield `user_notification`): an email telling the user their account was
 * blocked from an IP, with a link that lifts that block. The link carries the block's id and expiry sealed with
 * the master key (bound to the tenant), so nothing new is stored; it works once, since lifting deletes the row,
 * and never after the block would have expired anyway.
 */
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { SealError, type Sealer } from '../crypto/sealing.js';
import { sendHostedPage } from '../login/hosted-page.js';
import { INVALID_LINK, PAGE_TAGS, TICKET_QUERY } from '../login/documentation.js';
import { htmlPage } from '../http/responses.js';
import { html } from '../login/pages/html.js';
import { renderErrorPage, renderMessagePage } from '../login/pages/message.js';
import { enqueueEmail, isDeliverableAddress } from '../messaging/email-outbox.js';
import { tenantUrl } from '../messaging/templates.js';
import type { App, Services } from '../services.js';
import type { Database } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';
import type { UserBlock } from '../store/users.js';

export const UNBLOCK_PATH = '/u/unblock';

/** `v1.<nonce 16>.<ciphertext>.<tag 22>` base64url: the sealer's format with a full 128-bit GCM tag. */
const TICKET_FORMAT = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{10,200}\.[A-Za-z0-9_-]{22}$/;

const ticketContext = (tenantId: string) => `unblock:${tenantId}`;

export function unblockTicket(sealer: Sealer, block: Pick<UserBlock, 'id' | 'tenant_id' | 'expires_at'>): string {
  return sealer.seal(JSON.stringify({ block: block.id, exp: block.expires_at }), ticketContext(block.tenant_id));
}

/** The block id a ticket lifts, when the ticket is this tenant's, untampered and unexpired. */
export function openUnblockTicket(sealer: Sealer, tenantId: string, ticket: unknown, now = Date.now()): string | undefined {
  if (typeof ticket !== 'string' || !TICKET_FORMAT.test(ticket)) return undefined;
  try {
    const { block, exp } = JSON.parse(sealer.unseal(ticket, ticketContext(tenantId))) as { block?: unknown; exp?: unknown };
    return typeof block === 'string' && typeof exp === 'number' && exp > now ? block : undefined;
  } catch (error) {
    if (error instanceof SealError || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

function noticeContent(tenant: Tenant, block: UserBlock, link: string): { subject: string; text: string; html: string } {
  const name = tenant.friendlyName || tenant.name;
  const from = block.ip ? ` from the IP address ${block.ip}` : '';
  const subject = `Your ${name} account has been blocked`;
  const lines = [
    `We blocked logins to your ${name} account${from} after several failed attempts in a row, in case someone is trying to guess your password.`,
    'If it was you, use the link below to unblock your account. If it was not, consider changing your password.',
  ];
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#30343b;line-height:1.6">
<h1 style="font-size:20px;color:#111418">${subject}</h1>
${lines.map((line) => html`<p>${line}</p>`)}
<p><a href="${link}">Unblock my account</a></p>
<p style="font-size:13px;color:#5b616b">Sent by ${name} · ${tenant.baseUrl}/</p>
</body></html>
`.value;
  const text = [subject, '', ...lines.flatMap((line) => [line, '']), `Unblock my account: ${link}`, '', `-- \n${name} · ${tenant.baseUrl}/`].join('\n');
  return { subject, text, html: body };
}

/** Queues the notice of `block` to `email` (skipped for an address the outbox cannot send to). */
export async function queueBlockNotice(db: Kysely<Database>, sealer: Sealer, tenant: Tenant, block: UserBlock, email: string): Promise<void> {
  if (!isDeliverableAddress(email)) return;
  const link = tenantUrl(tenant, UNBLOCK_PATH, { ticket: unblockTicket(sealer, block) });
  await enqueueEmail(db, sealer, { tenantId: tenant.id, to: email, ...noticeContent(tenant, block, link) });
}

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
      summary: "The block notice's link: lifts that brute-force block",
      ...TICKET_QUERY,
      response: { 200: htmlPage('Unblocked'), 400: INVALID_LINK },
    },
  }, async (request, reply) => {
    const { ticket } = request.query as { ticket?: unknown };
    const blockId = openUnblockTicket(services.sealer, request.tenant.id, ticket);
    if (!blockId) return invalid(reply, request.tenant, request.id);
    const lifted = await services.attackProtection.liftBlocks(request.tenant.id, { id: blockId });
    if (lifted.length === 0) return invalid(reply, request.tenant, request.id);
    return sendHostedPage(reply, request.tenant, (context) =>
      renderMessagePage(context, { title: 'Your account is unblocked', message: 'You can log in again. If you did not make the failed attempts, consider changing your password.' }),
    );
  });
}
