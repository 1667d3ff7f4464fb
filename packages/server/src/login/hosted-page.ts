/**
 * Sending a hosted page: a fresh CSP nonce per response, the tenant's branding, never cached, never framed
 * (unless the caller widens frame-ancestors, as only the web_message page does).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Tenant } from '../store/tenants.js';
import { hostedPageCsp, safeFontUrl, type PageContext } from './pages/chrome.js';

/**
 * Every response of the sign-in flow (redirects included: browsers apply the opener policy at each hop) keeps
 * the window's opener, so that popup.authorize can hear back from the popup it opened.
 */
export function signInResponseHeaders(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('cross-origin-opener-policy', 'unsafe-none');
}

export function pageContext(tenant: Tenant, nonce: string): PageContext {
  const { branding } = tenant.settings;
  return {
    branding: {
      name: tenant.friendlyName || tenant.name,
      ...(branding?.logo_url ? { logoUrl: branding.logo_url } : {}),
      ...(branding?.primary_color ? { primaryColor: branding.primary_color } : {}),
      ...(branding?.page_background ? { pageBackground: branding.page_background } : {}),
      ...(branding?.favicon_url ? { faviconUrl: branding.favicon_url } : {}),
      ...(branding?.font_url ? { fontUrl: branding.font_url } : {}),
    },
    cspNonce: nonce,
  };
}

export function sendHostedPage(
  reply: FastifyReply,
  tenant: Tenant,
  render: (context: PageContext) => string,
  options: { status?: number; formAction?: string[]; frameAncestors?: string[]; language?: string } = {},
): FastifyReply {
  const nonce = randomBytes(18).toString('base64url');
  const context = { ...pageContext(tenant, nonce), ...(options.language && { language: options.language }) };
  const body = render(context);
  const font = safeFontUrl(context.branding.fontUrl);
  const framable = options.frameAncestors && options.frameAncestors.length > 0;
  reply
    .code(options.status ?? 200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', hostedPageCsp(nonce, { ...(options.formAction ? { formAction: options.formAction } : {}), ...(framable ? { frameAncestors: options.frameAncestors } : {}), ...(font && { fontSrc: font }) }));
  if (!framable) reply.header('x-frame-options', 'DENY');
  signInResponseHeaders(reply);
  return reply.send(body);
}
