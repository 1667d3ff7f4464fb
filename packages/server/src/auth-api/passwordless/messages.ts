/**
 * The texts a passwordless start sends: the code or the magic link, by email (text and HTML parts) or SMS.
 * An SMS connection's `template` may place the code with `@@password@@` (md_with_macros) or `{{ code }}`
 * (liquid), as the reference's templates do.
 */
import type { Connection } from '../../store/connections.js';
import type { Tenant } from '../../store/tenants.js';
import { CODE_LIFETIME_MS } from './codes.js';

const MINUTES = Math.round(CODE_LIFETIME_MS / 60_000);

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

function page(body: string): string {
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1f2933">${body}</body></html>`;
}

export function codeEmail(tenant: Tenant, code: string): EmailContent {
  const name = tenant.friendlyName || tenant.name;
  return {
    subject: `Your ${name} verification code`,
    text: `Your verification code is ${code}.\n\nIt expires in ${MINUTES} minutes and works once. If you did not ask to sign in to ${name}, ignore this email.\n`,
    html: page(
      `<p>Your verification code is</p><p style="font-size:28px;font-weight:bold;letter-spacing:4px">${escapeHtml(code)}</p>` +
        `<p>It expires in ${MINUTES} minutes and works once. If you did not ask to sign in to ${escapeHtml(name)}, ignore this email.</p>`,
    ),
  };
}

export function linkEmail(tenant: Tenant, link: string): EmailContent {
  const name = tenant.friendlyName || tenant.name;
  return {
    subject: `Sign in to ${name}`,
    text: `Open this link to sign in to ${name}:\n\n${link}\n\nIt expires in ${MINUTES} minutes and works once. If you did not ask to sign in, ignore this email.\n`,
    html: page(
      `<p><a href="${escapeHtml(link)}" style="font-size:18px">Sign in to ${escapeHtml(name)}</a></p>` +
        `<p>The link expires in ${MINUTES} minutes and works once. If you did not ask to sign in, ignore this email.</p>`,
    ),
  };
}

export function codeSms(connection: Connection, code: string): string {
  const template = (connection.options as { template?: unknown }).template;
  if (typeof template === 'string' && template.trim() !== '') {
    const text = template.replace(/@@password@@/g, code).replace(/\{\{\s*(code|password)\s*\}\}/g, code);
    // A template without the macro would send a message that cannot be used.
    return text.includes(code) ? text : `${text} ${code}`;
  }
  return `Your verification code is: ${code}`;
}
