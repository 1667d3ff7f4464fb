/**
 * Headers that say whom a request is for, who sends it, or how long its body is may appear once. Node keeps the
 * first of a repeated Host, Authorization or Content-Type and drops the rest, and a proxy in front may keep the
 * last: the tenant, the caller or the body's parser would then depend on which one wins. A repeat is a 400.
 * DPoP is one proof per request (RFC 9449 §4.3), and Node would join two into one comma-separated value.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInput } from './errors.js';

const SINGLE = new Map(['Host', 'Authorization', 'Proxy-Authorization', 'Content-Type', 'Content-Length', 'DPoP'].map((name) => [name.toLowerCase(), name]));

/** The first header `rawHeaders` names more than once among SINGLE, by its usual spelling. */
export function repeatedSingleHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLE.has(name)) continue;
    seen ??= new Set();
    if (seen.has(name)) return SINGLE.get(name);
    seen.add(name);
  }
  return undefined;
}

export function registerRepeatedHeaderGuard(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const repeated = repeatedSingleHeader(request.raw.rawHeaders);
    done(repeated ? new InvalidInput('headers', `The ${repeated} header is repeated; send it once`) : undefined);
  });
}
