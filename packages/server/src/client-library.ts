/**
 * GET /lib/svc.js (the UMD/IIFE bundle defining the global `svc`) and /lib/svc.mjs (the ES module), built from
 * packages/client. The plain names are cached for a day; the versioned names (/lib/10.0.0/svc.js) never change
 * and are cached for a year. CORS is open: apps load the library from their own origins.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { NotFound } from './http/errors.js';
import { errorResponses, fileBody, noContent } from './http/responses.js';
import type { App } from './services.js';

/** packages/client/dist, from packages/server/src or packages/server/dist alike. */
const CLIENT_DIST = new URL('../../client/dist/', import.meta.url);
const FILES = { 'svc.js': 'text/javascript; charset=utf-8', 'svc.mjs': 'text/javascript; charset=utf-8' } as const;

interface LibraryFile {
  body: Buffer;
  type: string;
  etag: string;
}

function load(): { version: string; files: Map<string, LibraryFile> } {
  const files = new Map<string, LibraryFile>();
  let version = '';
  const pkg = new URL('../package.json', CLIENT_DIST);
  if (existsSync(pkg)) version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  for (const [name, type] of Object.entries(FILES)) {
    const file = new URL(name, CLIENT_DIST);
    if (!existsSync(file)) continue;
    const body = readFileSync(file);
    files.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  return { version, files };
}

export function registerClientLibrary(app: App): void {
  const { version, files } = load();
  const send = (name: string) => {
    const file = files.get(name);
    if (!file) throw new NotFound('The browser library is not built (npm run build)');
    return file;
  };
  const config = { tenantless: true, cors: { kind: 'public' as const } };
  const tags = ['client library'];
  const notBuilt = errorResponses('oauth', { 404: 'The browser library is not built (npm run build)' });
  for (const name of Object.keys(FILES)) {
    const kind = name.endsWith('.mjs') ? 'the ES module' : 'the UMD bundle (global `svc`)';
    app.get(`/lib/${name}`, {
      config,
      schema: {
        tags,
        summary: `The browser library svc v${version}: ${kind}; cached for a day`,
        response: { 200: fileBody('The script', ['text/javascript']), 304: noContent('Not modified (If-None-Match matched the ETag)'), ...notBuilt },
      },
    }, (request, reply) => {
      const file = send(name);
      reply.type(file.type).header('etag', file.etag).header('cache-control', 'public, max-age=86400');
      return request.headers['if-none-match'] === file.etag ? reply.code(304).send() : reply.send(file.body);
    });
    if (version) {
      app.get(`/lib/${version}/${name}`, {
        config,
        schema: { tags, summary: `The browser library svc v${version}: ${kind}, under its version (cached for a year)`, response: { 200: fileBody('The script', ['text/javascript']), ...notBuilt } },
      }, (_request, reply) => {
        const file = send(name);
        return reply.type(file.type).header('etag', file.etag).header('cache-control', 'public, max-age=31536000, immutable').send(file.body);
      });
    }
  }
}
