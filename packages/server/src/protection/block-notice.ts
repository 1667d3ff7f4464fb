/**
 * The brute-force block notice (shield `user_notification`): an email telling the user their account was
 * blocked from an IP, with a link that lifts that block. The link carries the block's id and expiry sealed with
 * the master key (bound to the tenant), so nothing new is stored; it works once, since lifting deletes the row,
 * and never after the block would have expired anyway. The tenant's blocked_account template, when saved,
 * gives the words (its `url` is the link) or, disabled, stops the notice. The link's page is
 * login/unblock-page.ts.
 */
import type { Kysely } from 'kysely';
import { SealError, type Sealer } from '../crypto/sealing.js';
import { html } from '../login/pages/html.js';
import { enqueueEmail, isDeliverableAddress } from '../messaging/email-outbox.js';
import { composeEmail, templateVariables, tenantTemplate } from '../messaging/email-templates.js';
import { tenantUrl } from '../messaging/templates.js';
import type { Database } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';
import { findUser, type UserBlock } from '../store/users.js';

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

/** Queues the notice of `block` to `email` (skipped for an address the outbox cannot send to, or while the template is disabled). */
export async function queueBlockNotice(db: Kysely<Database>, sealer: Sealer, tenant: Tenant, block: UserBlock, email: string): Promise<void> {
  if (!isDeliverableAddress(email)) return;
  const template = await tenantTemplate(db, tenant.id, 'blocked_account');
  if (template && !template.enabled) return;
  const link = tenantUrl(tenant, UNBLOCK_PATH, { ticket: unblockTicket(sealer, block) });
  const builtIn = noticeContent(tenant, block, link);
  const user = template && block.user_id ? await findUser(db, tenant.id, block.user_id) : undefined;
  const content = user ? await composeEmail(template, templateVariables(tenant, user, link), builtIn) : builtIn;
  await enqueueEmail(db, sealer, { tenantId: tenant.id, to: email, ...content });
}
