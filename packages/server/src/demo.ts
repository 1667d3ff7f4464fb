/**
 * GET /demo: the demo single-page app from examples/spa, for the tenant created at first start (its Default App
 * points there). Only the files present at start are served, with a CSP that allows nothing but this origin.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { NotFound } from './http/errors.js';
import { errorResponses, fileBody } from './http/responses.js';
import type { App, Services } from './services.js';
import { listClients } from './store/clients.js';
import { DATABASE_CONNECTION_NAME, EMAIL_CONNECTION_NAME } from './tenancy/bootstrap.js';

/** examples/spa, from packages/server/src or packages/server/dist alike. */
const DEMO_DIR = new URL('../../../examples/spa/', import.meta.url);
const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};
const CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function loadAssets(): Map<string, { body: Buffer; type: string }> {
  const assets = new Map<string, { body: Buffer; type: string }>();
  if (!existsSync(DEMO_DIR)) return assets;
  for (const name of readdirSync(DEMO_DIR)) {
    const type = CONTENT_TYPES[name.split('.').pop() ?? ''];
    if (type) assets.set(name, { body: readFileSync(new URL(name, DEMO_DIR)), type });
  }
  return assets;
}

export function registerDemo(app: App, services: Services): void {
  const assets = loadAssets();
  if (!assets.has('index.html')) return;
  // What the page needs to construct svc.WebAuth: the Default App's client id and the connections' names.
  const notHere = errorResponses('oauth', { 404: 'Not the default tenant, or the Default App was deleted' });
  app.get('/demo/config.json', {
    schema: {
      tags: ['demo'],
      summary: "What the demo needs to construct svc.WebAuth: the Default App's client id and the connections' names",
      response: {
        200: Type.Object({ clientID: Type.String(), databaseConnection: Type.String(), passwordlessConnection: Type.String() }, { additionalProperties: false }),
        ...notHere,
      },
    },
  }, async (request, reply) => {
    if (!request.tenant.isDefault) throw new NotFound('No demo app here');
    const demoApp = (await listClients(services.store.db, request.tenant.id)).find((c) => c.is_default_app);
    if (!demoApp) throw new NotFound('The Default App was deleted, so the demo has no client to sign in with');
    reply.header('cache-control', 'no-cache');
    return { clientID: demoApp.client_id, databaseConnection: DATABASE_CONNECTION_NAME, passwordlessConnection: EMAIL_CONNECTION_NAME };
  });
  const send = (reply: FastifyReply, isDefaultTenant: boolean, name: string) => {
    const asset = assets.get(name);
    if (!asset || !isDefaultTenant) throw new NotFound('No demo app here');
    // The demo opens a login popup (linking an account) and must keep its opener across the popup's trip
    // through the hosted pages: no same-origin opener policy here.
    return reply
      .type(asset.type)
      .header('content-security-policy', CSP)
      .header('cross-origin-opener-policy', 'unsafe-none')
      .header('cache-control', 'no-cache')
      .send(asset.body);
  };
  const page = { tags: ['demo'], summary: 'The demo single-page app', response: { 200: fileBody('The page', ['text/html']), ...notHere } };
  app.get('/demo', { schema: page }, (request, reply) => send(reply, request.tenant.isDefault, 'index.html'));
  app.get('/demo/', { schema: { ...page, summary: 'The demo single-page app (with a trailing slash)' } }, (request, reply) =>
    send(reply, request.tenant.isDefault, 'index.html'),
  );
  app.get(
    '/demo/:asset',
    {
      schema: {
        tags: ['demo'],
        summary: "The demo's scripts, styles and images",
        params: Type.Object({ asset: Type.String({ pattern: '^[A-Za-z0-9_-]+\\.[a-z]+$' }) }),
        response: { 200: fileBody('The file', [...new Set(Object.values(CONTENT_TYPES).map((type) => type.split(';')[0]!))]), ...notHere },
      },
    },
    (request, reply) => send(reply, request.tenant.isDefault, request.params.asset),
  );
}
