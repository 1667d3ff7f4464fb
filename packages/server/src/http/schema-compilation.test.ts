/**
 * Route schemas are compiled on a route's first request (validators.ts), so a schema Ajv or fast-json-stringify
 * refuses would otherwise only show when that route is called. Compiling them all at start-up here proves that
 * every route's request and response schemas compile.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../services.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { schemaCompilation } from './validators.js';

describe('route schemas', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    schemaCompilation.atStartUp = false;
    await server?.close();
    server = undefined;
  });

  it('every route registered by a server compiles its request and response schemas', async () => {
    schemaCompilation.atStartUp = true;
    server = await startTestServer();
    expect((await fetch(`${server.url}/.well-known/openid-configuration`)).status).toBe(200);
  });

  it('a schema that does not compile stops such a start', async () => {
    schemaCompilation.atStartUp = true;
    const broken = (app: App) => {
      app.post('/oauth/_broken', { schema: { body: { type: 'object', properties: { n: { type: 'no-such-type' } } }, hide: true } }, async () => ({}));
    };
    await expect(startTestServer({ configure: broken })).rejects.toThrow(/no-such-type|schema/i);
  });
});
