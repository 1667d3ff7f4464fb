/**
 * GET /: what this server is and where to go next, for a person who opens the base URL in a browser (#19: it
 * used to be a JSON 404). The same links as JSON for `Accept: application/json`, for scripts and health probes.
 * Development-only links (demo, dev mailbox) appear only where those routes answer: the default tenant, and for
 * the mailbox only when it is on.
 */
import type { FastifyRequest } from 'fastify';
import { errorResponses, fileBody } from '../http/responses.js';
import { DEV_MAILBOX_PATH } from '../messaging/dev-mailbox.js';
import type { App, Services } from '../services.js';
import { sendHostedPage } from './hosted-page.js';
import { html, renderDocument } from './pages/chrome.js';

export interface LandingLinks {
  name: string;
  issuer: string;
  discovery: string;
  documentation: string;
  openapi: string;
  management_openapi: string;
  /** The admin console (#15), on every tenant's host. */
  console: string;
  demo?: string;
  dev_mailbox?: string;
}

function landingLinks(services: Services, request: FastifyRequest): LandingLinks {
  const { tenant } = request;
  const base = tenant.baseUrl;
  return {
    name: tenant.friendlyName || tenant.name,
    issuer: tenant.issuer,
    discovery: `${base}/.well-known/openid-configuration`,
    documentation: `${base}/docs`,
    openapi: `${base}/openapi.json`,
    management_openapi: `${base}/api/v2/openapi.json`,
    console: `${base}/console/`,
    ...(tenant.isDefault && { demo: `${base}/demo` }),
    ...(tenant.isDefault && services.config.devMailbox && { dev_mailbox: `${base}${DEV_MAILBOX_PATH}` }),
  };
}

/** JSON only when it is asked for and HTML is not: a browser's Accept lists text/html. */
function wantsJson(accept: string | undefined): boolean {
  const value = (accept ?? '').toLowerCase();
  return value.includes('application/json') && !value.includes('text/html');
}

export function registerLandingPage(app: App, services: Services): void {
  app.get('/', {
    schema: {
      tags: ['hosted pages'],
      summary: "What this server is, with links to discovery, the admin console, the API documentation and (on a development server) the demo and dev mailbox; JSON for Accept: application/json",
      response: {
        200: fileBody('The landing page, or its links as JSON', ['text/html', 'application/json'], {}),
        ...errorResponses('oauth', { 404: 'No tenant answers on this host name' }),
      },
    },
    handler: (request, reply) => {
      const links = landingLinks(services, request);
      if (wantsJson(request.headers.accept)) {
        return reply.header('cache-control', 'no-cache').header('vary', 'Accept').type('application/json; charset=utf-8').send(JSON.stringify(links));
      }
      reply.header('vary', 'Accept');
      return sendHostedPage(reply, request.tenant, (context) =>
        renderDocument(context, {
          title: links.name,
          wide: true,
          content: html`<h1>${links.name}</h1>
<p class="lead">This is a Gatehouse identity service: OpenID Connect and OAuth 2.0 sign-in, hosted login pages, and a Management API for its users, applications and settings.</p>
<dl class="details" aria-label="Where to go next">
<div><dt>Issuer</dt><dd>${links.issuer}</dd></div>
<div><dt>Discovery</dt><dd><a href="${links.discovery}">${links.discovery}</a></dd></div>
<div><dt>Admin console</dt><dd><a href="${links.console}">${links.console}</a></dd></div>
<div><dt>API docs</dt><dd><a href="${links.documentation}">${links.documentation}</a></dd></div>
${links.demo ? html`<div><dt>Demo application</dt><dd><a href="${links.demo}">${links.demo}</a></dd></div>` : ''}
${links.dev_mailbox ? html`<div><dt>Dev mailbox</dt><dd><a href="${links.dev_mailbox}">${links.dev_mailbox}</a> (emails kept instead of sent, readable from this machine only)</dd></div>` : ''}
</dl>`,
        }),
      );
    },
  });
}
