/**
 * GET /docs: both OpenAPI documents in a browser, through Swagger UI (swagger-ui-dist, from npm; served from
 * here, so it works offline and nothing is fetched from elsewhere). A selector at the top switches between
 * `/openapi.json` (every route) and `/api/v2/openapi.json` (the Management API); `?urls.primaryName=Management%20API`
 * opens the second. "Authorize" gets a Management API token from /oauth/token with client credentials.
 *
 * The page keeps the strict CSP of every other page (scripts from 'self' only, no inline script); what Swagger
 * UI needs beyond it, and only here: the hash of the one <style> element it writes, data: images (the icons in
 * its stylesheet), and fetching the documents (connect-src 'self').
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Type } from '@fastify/type-provider-typebox';
import { NotFound } from './http/errors.js';
import { errorResponses, fileBody, htmlPage } from './http/responses.js';
import type { App } from './services.js';

export const DOCS_PATH = '/docs';

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // The one <style> Swagger UI writes itself: the colours of its logo's inline SVG (swagger-ui-dist 5). A new
  // version that changes it shows as a CSP violation in api-docs.test.ts.
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Our own start-up script: the two documents, no online validator, deep links. */
const INIT_SCRIPT = `window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    urls: [
      { url: '/openapi.json', name: 'All routes' },
      { url: '/api/v2/openapi.json', name: 'Management API' }
    ],
    'urls.primaryName': new URLSearchParams(window.location.search).get('urls.primaryName') || 'All routes',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout'
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API documentation</title>
<link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
<link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/swagger-ui-standalone-preset.js"></script>
<script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer | string, type: string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return { body: bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
}

/** swagger-ui-dist's files, read once; its main module is not imported (it would load the browser bundle). */
function loadAssets(): Map<string, Asset> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const read = (name: string) => readFileSync(path.join(dist, name));
  return new Map([
    ['swagger-ui.css', asset(read('swagger-ui.css'), 'text/css; charset=utf-8')],
    ['swagger-ui-bundle.js', asset(read('swagger-ui-bundle.js'), 'text/javascript; charset=utf-8')],
    ['swagger-ui-standalone-preset.js', asset(read('swagger-ui-standalone-preset.js'), 'text/javascript; charset=utf-8')],
    ['favicon-32x32.png', asset(read('favicon-32x32.png'), 'image/png')],
    ['init.js', asset(INIT_SCRIPT, 'text/javascript; charset=utf-8')],
  ]);
}

export function registerApiDocs(app: App): void {
  const assets = loadAssets();
  const page = asset(PAGE, 'text/html; charset=utf-8');
  const config = { tenantless: true };
  const tags = ['documentation'];

  app.get(DOCS_PATH, {
    config,
    schema: { tags, summary: 'Both OpenAPI documents in a browser (Swagger UI)', response: { 200: htmlPage('The documentation viewer') } },
    handler: (_request, reply) =>
      reply.type(page.type).header('content-security-policy', CSP).header('cache-control', 'no-cache').header('etag', page.etag).send(page.body),
  });

  app.get(`${DOCS_PATH}/:file`, {
    config,
    schema: {
      tags,
      summary: "The viewer's scripts, stylesheet and icon (Swagger UI, bundled from npm)",
      params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
      response: {
        200: fileBody('The file', ['text/javascript', 'text/css', 'image/png']),
        ...errorResponses('oauth', { 404: 'No such file' }),
      },
    },
    handler: (request, reply) => {
      const file = assets.get(request.params.file);
      if (!file) throw new NotFound('No such file');
      return reply.type(file.type).header('etag', file.etag).header('cache-control', 'public, max-age=86400').send(file.body);
    },
  });
}
