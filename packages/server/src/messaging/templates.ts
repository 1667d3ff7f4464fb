/**
 * The emails the server writes: a simple branded HTML part (inline styles and a table layout, which is what mail
 * clients render reliably) and a plain-text part with the same words and links. Every link is absolute, built
 * from the tenant's base URL, since a mail client has no page to resolve a relative one against.
 */
import { brandPalette, safeImageUrl } from '../login/pages/chrome.js';
import { html, type SafeHtml } from '../login/pages/html.js';
import type { Tenant } from '../store/tenants.js';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

interface Layout {
  subject: string;
  heading: string;
  /** Paragraphs before the button. */
  intro: string[];
  action: { label: string; url: string };
  /** Paragraphs after it (expiry, "ignore this if…"). */
  outro: string[];
}

function tenantName(tenant: Tenant): string {
  return tenant.friendlyName || tenant.name;
}

/** `path` (with its query) under the tenant's base URL. */
export function tenantUrl(tenant: Tenant, path: string, query: Record<string, string> = {}): string {
  const url = new URL(path, `${tenant.baseUrl}/`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.href;
}

function render(tenant: Tenant, layout: Layout): EmailContent {
  const name = tenantName(tenant);
  const { brand, onBrand, ink } = brandPalette(tenant.settings.branding?.primary_color);
  const logo = safeImageUrl(tenant.settings.branding?.logo_url);
  const paragraph = (text: string): SafeHtml => html`<p style="margin:0 0 16px;font-size:15px;line-height:1.6;color:#30343b">${text}</p>`;
  const header = logo
    ? html`<img src="${logo}" alt="${name}" style="max-height:40px;max-width:200px;border:0">`
    : html`<span style="display:inline-block;font-size:18px;font-weight:700;color:#111418">${name}</span>`;
  const body = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${layout.subject}</title></head>
<body style="margin:0;padding:0;background:#f3f4f6;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f3f4f6;padding:32px 12px">
<tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:520px;background:#ffffff;border-radius:12px;border-top:4px solid ${brand}">
<tr><td style="padding:28px 32px 8px">${header}</td></tr>
<tr><td style="padding:8px 32px 24px">
<h1 style="margin:0 0 16px;font-size:22px;line-height:1.3;color:#111418">${layout.heading}</h1>
${layout.intro.map(paragraph)}
<table role="presentation" cellpadding="0" cellspacing="0" style="margin:8px 0 24px"><tr><td style="border-radius:8px;background:${brand}">
<a href="${layout.action.url}" style="display:inline-block;padding:12px 24px;font-size:15px;font-weight:600;color:${onBrand};text-decoration:none;border-radius:8px">${layout.action.label}</a>
</td></tr></table>
<p style="margin:0 0 16px;font-size:13px;line-height:1.6;color:#5b616b">If the button does not work, copy this link into your browser:<br><a href="${layout.action.url}" style="color:${ink};word-break:break-all">${layout.action.url}</a></p>
${layout.outro.map(paragraph)}
</td></tr>
<tr><td style="padding:16px 32px 24px;border-top:1px solid #e5e7eb;font-size:12px;color:#6b7280">Sent by ${name} · <a href="${tenant.baseUrl}/" style="color:#6b7280">${tenant.baseUrl}</a></td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`.value;
  const text = [
    layout.heading,
    '',
    ...layout.intro.flatMap((p) => [p, '']),
    `${layout.action.label}: ${layout.action.url}`,
    '',
    ...layout.outro.flatMap((p) => [p, '']),
    `-- \n${name} · ${tenant.baseUrl}/`,
  ].join('\n');
  return { subject: layout.subject, text, html: body };
}

export function verificationEmail(tenant: Tenant, link: string): EmailContent {
  const name = tenantName(tenant);
  return render(tenant, {
    subject: `Verify your email address for ${name}`,
    heading: 'Verify your email address',
    intro: [`Thanks for signing up with ${name}. Please confirm that this is your email address.`],
    action: { label: 'Verify email address', url: link },
    outro: ['This link works once and expires in 5 days.', 'If you did not create an account, you can ignore this email.'],
  });
}

export function passwordResetEmail(tenant: Tenant, link: string): EmailContent {
  const name = tenantName(tenant);
  return render(tenant, {
    subject: `Reset your password for ${name}`,
    heading: 'Reset your password',
    intro: [`Someone asked to reset the password of your ${name} account. If it was you, choose a new password here.`],
    action: { label: 'Choose a new password', url: link },
    outro: [
      'This link works once and expires in 24 hours. Resetting your password signs you out everywhere.',
      'If you did not ask for this, you can ignore this email: your password stays as it is.',
    ],
  });
}

export function mfaEnrollmentEmail(tenant: Tenant, link: string): EmailContent {
  const name = tenantName(tenant);
  return render(tenant, {
    subject: `Set up multi-factor authentication for ${name}`,
    heading: 'Secure your account',
    intro: [`${name} asks you to add a second step to your log-in: an authenticator app on your phone. This link sets it up.`],
    action: { label: 'Set up my authenticator app', url: link },
    outro: ['This link works once and expires in 5 days. It does not log you in.', 'If you did not expect this email, you can ignore it.'],
  });
}

/** The notice of a factor lock (mfa/lock-notice.ts): the blocked_account email, in the words of a second factor. */
export function mfaLockNoticeEmail(tenant: Tenant, link: string): EmailContent {
  const name = tenantName(tenant);
  return render(tenant, {
    subject: `Your ${name} account has been blocked`,
    heading: 'Your account has been blocked',
    intro: [
      `We locked the second step of logging in to your ${name} account after 10 wrong codes in a row: someone who knows your password may be trying to guess them.`,
      'If it was you, use the link below to unblock your account. If it was not, change your password now.',
    ],
    action: { label: 'Unblock my account', url: link },
    outro: ['This link works once.'],
  });
}
