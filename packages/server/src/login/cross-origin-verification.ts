/**
 * Sends the cross-origin verification page. Its CSP is the hosted pages' plus `frame-src` for exactly the app's
 * verification origin; form-action also allows the client's redirect URI, since Chromium checks form-action
 * along the redirects that follow the post to /co/verify.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { AuthorizationRequest } from '../auth-api/authorize/request.js';
import type { Client } from '../store/clients.js';
import type { Tenant } from '../store/tenants.js';
import { pageContext } from './hosted-page.js';
import { hostedPageCsp } from './pages/chrome.js';
import { renderCrossOriginVerification } from './pages/cross-origin-verification.js';

export const CO_VERIFY_PATH = '/co/verify';

export function sendCrossOriginVerificationPage(
  reply: FastifyReply,
  tenant: Tenant,
  client: Client,
  request: Pick<AuthorizationRequest, 'redirectUri' | 'responseMode'>,
  view: { coId: string; state: string; crossOriginLoc: string },
): FastifyReply {
  const appOrigin = new URL(view.crossOriginLoc).origin;
  // auth0-js posts its answer to the origin named in the fragment; without it the exchange cannot start.
  const frameUrl = `${view.crossOriginLoc.split('#')[0]}#origin=${encodeURIComponent(new URL(tenant.baseUrl).origin)}`;
  const nonce = randomBytes(18).toString('base64url');
  const framable = request.responseMode === 'web_message' && client.web_origins.length > 0;
  const csp = hostedPageCsp(nonce, { formAction: [request.redirectUri], ...(framable ? { frameAncestors: client.web_origins } : {}) });
  reply
    .code(200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', `${csp}; frame-src ${appOrigin}`);
  if (!framable) reply.header('x-frame-options', 'DENY');
  return reply.send(renderCrossOriginVerification(pageContext(tenant, nonce), { coId: view.coId, frameUrl, appOrigin, action: CO_VERIFY_PATH, state: view.state }));
}
