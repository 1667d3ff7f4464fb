/**
 * Delivering an authorization response (success or error) to the client in the request's response mode:
 * a redirect with the parameters in the query or the fragment, an auto-submitted form (form_post), or a page
 * that posts them to the framing app (web_message). Every response carries `iss` (RFC 9207), and `state`
 * exactly as sent; values are percent-encoded with encodeURIComponent, so a `+` never appears raw.
 */
import type { FastifyReply } from 'fastify';
import { renderFormPost } from '../../login/pages/form-post.js';
import { renderWebMessage } from '../../login/pages/web-message.js';
import { sendHostedPage } from '../../login/hosted-page.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import type { AuthorizationRequest } from './request.js';

export type ResponseParameters = Record<string, string | number | undefined>;

function encode(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

export function sendAuthorizationResponse(
  reply: FastifyReply,
  tenant: Tenant,
  client: Client,
  request: Pick<AuthorizationRequest, 'redirectUri' | 'responseMode' | 'state'>,
  parameters: ResponseParameters,
  options: { afterPost?: boolean } = {},
): FastifyReply {
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(parameters)) if (v !== undefined) fields[k] = String(v);
  if (request.state !== undefined) fields.state = request.state;
  fields.iss = tenant.issuer;
  reply.header('cache-control', 'no-store');

  switch (request.responseMode) {
    case 'form_post':
      return sendHostedPage(reply, tenant, () => renderFormPost({ action: request.redirectUri, fields }), { formAction: [request.redirectUri] });
    case 'web_message':
      return sendHostedPage(reply, tenant, () => renderWebMessage({ targetOrigin: new URL(request.redirectUri).origin, response: fields }), {
        frameAncestors: client.web_origins,
      });
    case 'fragment':
    case 'query': {
      const separator = request.responseMode === 'fragment' ? '#' : request.redirectUri.includes('?') ? '&' : '?';
      const base = request.responseMode === 'fragment' ? request.redirectUri.split('#')[0] : request.redirectUri;
      // 303 after a POST so the browser does not re-send the form body to the client (RFC 9700 §4.12).
      return reply.redirect(`${base}${separator}${encode(fields)}`, options.afterPost ? 303 : 302);
    }
  }
}
