/**
 * GET /dev/mailbox: the emails kept when no SMTP server is configured, newest first, with their links clickable,
 * so a newcomer running `npm start` can follow a verification or reset link. Registered only when the dev
 * mailbox is on (config.ts: without SMTP, for a loopback public URL or GATEHOUSE_DEV_MAILBOX=1), and shown for
 * the default tenant only. GET /dev/mailbox/:id shows one message's HTML part, sandboxed.
 */
import { Type } from '@fastify/type-provider-typebox';
import { NotFound } from '../http/errors.js';
import { loopbackPeersOnly } from '../http/loopback-only.js';
import { sendHostedPage } from '../login/hosted-page.js';
import { errorResponses, htmlPage } from '../http/responses.js';
import { html, renderDocument, type SafeHtml } from '../login/pages/chrome.js';
import type { App, Services } from '../services.js';
import { findKeptEmail, listKeptEmails, openBody, type MailboxEntry } from './email-outbox.js';

export const DEV_MAILBOX_PATH = '/dev/mailbox';
const SHOWN = 50;
const LINK = /https?:\/\/[^\s<>"]+/g;

/** Plain text with its URLs as links (everything escaped by `html`). */
function linkify(text: string): SafeHtml {
  const parts: (string | SafeHtml)[] = [];
  let at = 0;
  for (const match of text.matchAll(LINK)) {
    parts.push(text.slice(at, match.index));
    parts.push(html`<a href="${match[0]}">${match[0]}</a>`);
    at = match.index + match[0].length;
  }
  parts.push(text.slice(at));
  return html`${parts}`;
}

function renderMailbox(services: Services, entries: MailboxEntry[], nonce: string): SafeHtml {
  const style = html`<style nonce="${nonce}">.mail{border-top:1px solid #e5e7eb;padding:16px 0}.mail h2{font-size:16px;margin:0 0 4px}.mail .meta{font-size:13px;color:#5b616b;margin:0 0 8px}.mail pre{white-space:pre-wrap;word-break:break-word;font:13px/1.5 ui-monospace,monospace;background:#f6f7f9;padding:12px;border-radius:8px;margin:0}</style>`;
  if (entries.length === 0) return html`${style}<h1>Dev mailbox</h1><p class="lead">No emails yet. Emails the server sends (verification, password reset) appear here while no SMTP server is configured.</p>`;
  const items = entries.map((entry) => {
    let body: SafeHtml;
    try {
      const content = openBody(services.sealer, entry);
      body = content ? linkify(content.text) : html`(no body)`;
    } catch {
      body = html`(this message was sealed with another master key)`;
    }
    return html`<article class="mail">
<h2>${entry.subject}</h2>
<p class="meta">To ${entry.recipient} · ${new Date(entry.created_at).toISOString()} · <a href="${DEV_MAILBOX_PATH}/${entry.id}">HTML version</a></p>
<pre>${body}</pre>
</article>`;
  });
  return html`${style}<h1>Dev mailbox</h1><p class="lead">The last ${SHOWN} emails kept instead of sent (no GATEHOUSE_SMTP_URL). Newest first.</p>${items}`;
}

export function registerDevMailbox(app: App, services: Services): void {
  if (!services.config.devMailbox) return;

  const tags = ['development'];
  const thisMachineOnly = loopbackPeersOnly(services.config.trustedProxies.length > 0);
  app.get(DEV_MAILBOX_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    preHandler: thisMachineOnly,
    schema: {
      tags,
      summary: 'The dev mailbox: emails kept instead of sent (no SMTP, localhost public URL)',
      response: { 200: htmlPage('The newest emails'), ...errorResponses('oauth', { 404: 'Not the default tenant, or not a request from this machine (loopback)' }) },
    },
  }, async (request, reply) => {
    if (!request.tenant.isDefault) throw new NotFound(`No route for GET ${DEV_MAILBOX_PATH}`);
    const entries = await listKeptEmails(services.store.db, request.tenant.id, SHOWN);
    return sendHostedPage(reply, request.tenant, (context) =>
      renderDocument(context, { title: 'Dev mailbox', wide: true, content: renderMailbox(services, entries, context.cspNonce) }),
    );
  });

  app.get(
    `${DEV_MAILBOX_PATH}/:id`,
    {
      config: { rateLimit: { bucket: 'authorize' } },
      preHandler: thisMachineOnly,
      schema: {
        tags,
        summary: "One kept email's HTML part",
        params: Type.Object({ id: Type.String({ pattern: '^eml_[A-Za-z0-9]{22}$' }) }),
        response: { 200: htmlPage("The email's HTML, sandboxed"), ...errorResponses('oauth', { 404: 'No such email, not the default tenant, or not a request from this machine (loopback)' }) },
      },
    },
    async (request, reply) => {
      if (!request.tenant.isDefault) throw new NotFound(`No route for GET ${DEV_MAILBOX_PATH}/:id`);
      const entry = await findKeptEmail(services.store.db, request.tenant.id, request.params.id);
      const content = entry && openBody(services.sealer, entry);
      if (!content) throw new NotFound('No such message in the dev mailbox');
      // The email's own HTML, as a mail client would show it: no scripts, no framing, links work.
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', "default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox allow-top-navigation-by-user-activation")
        .header('x-frame-options', 'DENY')
        .send(content.html);
    },
  );
}
