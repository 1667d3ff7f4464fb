/**
 * The hosted pages' static CSS and JS, served from 'self' under content-hashed names so they can be cached
 * forever: a changed file gets a new URL. Tenant-independent, so served whatever the Host.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Type } from '@fastify/type-provider-typebox';
import { NotFound } from '../http/errors.js';
import { errorResponses, fileBody } from '../http/responses.js';
import type { App } from '../services.js';
import { CROSS_ORIGIN_VERIFICATION_SCRIPT, FORM_POST_SCRIPT, WEB_MESSAGE_SCRIPT, WEBAUTHN_SCRIPT } from './pages/scripts.js';
import { STYLESHEET } from './pages/styles.js';

interface Asset {
  url: string;
  body: string;
  type: string;
}

const ASSET_PREFIX = '/login/assets/';

function asset(name: string, ext: 'css' | 'js', body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const type = ext === 'css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
  return { url: `${ASSET_PREFIX}${name}.${hash}.${ext}`, body, type };
}

/**
 * @simplewebauthn/browser's own browser bundle (it sets `window.SimpleWebAuthnBrowser`), served from our origin
 * like the rest: no CDN, and the CSP's script-src stays 'self'.
 */
function webauthnBrowserBundle(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@simplewebauthn/browser');
  // The package's main is script/index.js; its UMD bundle sits in dist/bundle beside script/.
  return readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

const ASSETS = {
  stylesheet: asset('login', 'css', STYLESHEET),
  formPost: asset('form-post', 'js', FORM_POST_SCRIPT),
  webMessage: asset('web-message', 'js', WEB_MESSAGE_SCRIPT),
  crossOriginVerification: asset('cross-origin-verification', 'js', CROSS_ORIGIN_VERIFICATION_SCRIPT),
  webauthnBrowser: asset('simplewebauthn-browser', 'js', webauthnBrowserBundle()),
  webauthn: asset('webauthn', 'js', WEBAUTHN_SCRIPT),
};

export const ASSET_URLS: { stylesheet: string; formPost: string; webMessage: string; crossOriginVerification: string; webauthnBrowser: string; webauthn: string } = {
  stylesheet: ASSETS.stylesheet.url,
  formPost: ASSETS.formPost.url,
  webMessage: ASSETS.webMessage.url,
  crossOriginVerification: ASSETS.crossOriginVerification.url,
  webauthnBrowser: ASSETS.webauthnBrowser.url,
  webauthn: ASSETS.webauthn.url,
};

const BY_FILE = new Map(Object.values(ASSETS).map((entry) => [entry.url.slice(ASSET_PREFIX.length), entry]));

export function registerLoginAssets(app: App): void {
  app.get(
    `${ASSET_PREFIX}:file`,
    {
      schema: {
        tags: ['hosted pages'],
        summary: "The hosted pages' stylesheet and scripts, under content-hashed names (cached for a year)",
        params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
        response: { 200: fileBody('The file', ['text/css', 'text/javascript']), ...errorResponses('oauth', { 404: 'No such asset (old hashes are not kept)' }) },
      },
      config: { tenantless: true },
    },
    (request, reply) => {
      const entry = BY_FILE.get(request.params.file);
      // Old hashes are not kept: a page always links the current one.
      if (!entry) throw new NotFound('No such asset');
      return reply.type(entry.type).header('cache-control', 'public, max-age=31536000, immutable').send(entry.body);
    },
  );
}
