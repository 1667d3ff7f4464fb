/**
 * GET /console: the admin console (packages/console, built to its dist/), on every tenant's host, and
 * /console/config.json, what it needs to sign in to the tenant it is served by. The console is static files
 * read at start; its CSP allows scripts, styles and connections to this origin only (no inline script, no CDN).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { NotFound } from '../http/errors.js';
import { errorResponses, fileBody, redirect } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { listClients } from '../store/clients.js';
import { managementAudience } from '../tenancy/bootstrap.js';
import { CONSOLE_PATH } from './bootstrap.js';

/** packages/console/dist, from packages/server/src/console or packages/server/dist/console alike. */
const CONSOLE_DIR = new URL('../../../console/dist/', import.meta.url);
const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};
/** The console's file names: one flat name each (no folders), as Vite's config in packages/console lays dist/ out. */
export const CONSOLE_ASSET_NAME = '^[A-Za-z0-9_-]+\\.[a-z]+$';

/**
 * Same origin only. frame-src 'self' is the silent sign-in's hidden /authorize frame (prompt=none, web_message);
 * img-src allows https: for the tenant's and applications' logos.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

function loadAssets(): Map<string, { body: Buffer; type: string }> {
  const assets = new Map<string, { body: Buffer; type: string }>();
  if (!existsSync(CONSOLE_DIR)) return assets;
  for (const name of readdirSync(CONSOLE_DIR)) {
    const type = CONTENT_TYPES[name.split('.').pop() ?? ''];
    if (type) assets.set(name, { body: readFileSync(new URL(name, CONSOLE_DIR)), type });
  }
  return assets;
}

export function registerConsoleAssets(app: App, services: Services): void {
  const assets = loadAssets();
  const notHere = errorResponses('oauth', { 404: 'The console is not built (npm run build), or this tenant has no console client yet (it is made at start)' });
  app.get(`${CONSOLE_PATH}/config.json`, {
    schema: {
      tags: ['console'],
      summary: "What the console needs to sign in to this tenant: the base URL, its client's id and the Management API's audience",
      response: {
        200: Type.Object(
          { domain: Type.String(), clientId: Type.String(), audience: Type.String(), issuer: Type.String(), tenantName: Type.String() },
          { additionalProperties: false },
        ),
        ...notHere,
      },
    },
  }, async (request, reply) => {
    const { tenant } = request;
    const client = (await listClients(services.store.db, tenant.id)).find((c) => c.is_console);
    if (!client) throw new NotFound('This tenant has no console client; it is made when the server starts');
    reply.header('cache-control', 'no-cache');
    return { domain: tenant.baseUrl, clientId: client.client_id, audience: managementAudience(tenant), issuer: tenant.issuer, tenantName: tenant.friendlyName || tenant.name };
  });
  const send = (reply: FastifyReply, name: string) => {
    const asset = assets.get(name);
    if (!asset) throw new NotFound(assets.size === 0 ? 'The console is not built: run npm run build' : 'No such console file');
    return reply
      .type(asset.type)
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-frame-options', 'DENY')
      // The file names do not change between builds: revalidate each time rather than serve a stale console.
      .header('cache-control', 'no-cache')
      .send(asset.body);
  };
  const page = { tags: ['console'], summary: 'The admin console', response: { 200: fileBody('The page', ['text/html']), ...notHere } };
  // The console's own address is /console/ (its callback); /console leads there so relative URLs resolve.
  app.get(CONSOLE_PATH, { schema: { ...page, summary: 'The admin console: redirects to /console/', response: { 302: redirect('To /console/') } } }, (_request, reply) =>
    reply.redirect(`${CONSOLE_PATH}/`, 302),
  );
  app.get(`${CONSOLE_PATH}/`, { schema: page }, (_request, reply) => send(reply, 'index.html'));
  app.get(
    `${CONSOLE_PATH}/:asset`,
    {
      schema: {
        tags: ['console'],
        summary: "The console's scripts, styles and images",
        params: Type.Object({ asset: Type.String({ pattern: CONSOLE_ASSET_NAME }) }),
        response: { 200: fileBody('The file', [...new Set(Object.values(CONTENT_TYPES).map((type) => type.split(';')[0]!))]), ...notHere },
      },
    },
    (request, reply) => send(reply, request.params.asset),
  );
}
