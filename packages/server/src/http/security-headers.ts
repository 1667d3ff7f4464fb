/**
 * Headers every response carries unless a route set its own (hosted pages set their CSP; the web_message page
 * sets frame-ancestors to the client's origins). The defaults suit JSON APIs: nothing may frame, sniff or refer.
 */
import type { FastifyInstance } from 'fastify';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
};

const DEFAULTS = Object.entries(SECURITY_HEADERS);

export function registerSecurityHeaders(app: FastifyInstance, options: { https: boolean }): void {
  // A callback hook, not an async one: it runs on every response and awaits nothing.
  app.addHook('onSend', (request, reply, payload, done) => {
    // A page that lists its framing origins in CSP frame-ancestors (web_message) must not get X-Frame-Options,
    // which cannot name origins and would forbid what the CSP allows.
    const csp = reply.getHeader('content-security-policy');
    const framable = csp !== undefined && !String(csp).includes("frame-ancestors 'none'");
    for (const [name, value] of DEFAULTS) {
      if (name === 'x-frame-options' && framable) continue;
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    if (options.https && !reply.hasHeader('strict-transport-security')) {
      reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    }
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
}
