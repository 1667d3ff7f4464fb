/**
 * Development-only routes (the dev mailbox, with every reset link and one-time code in it) answer only requests
 * from this machine: the client address is a loopback address, whatever the Host header says (issue #19: a
 * request from another machine with `Host: localhost:3000` read the mailbox). The client address is request.ip,
 * which is the socket's unless a trusted proxy forwarded the request (then it is the client the proxy names);
 * a forwarded request through a proxy that is not trusted is refused, since its real client is unknown.
 */
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { NotFound } from './errors.js';

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}

/**
 * A preHandler: a 404 (the route is not revealed) unless the request comes from this machine. With trusted
 * proxies (GATEHOUSE_TRUSTED_PROXIES), Fastify has already read the client from X-Forwarded-For into request.ip.
 */
export function loopbackPeersOnly(proxiesTrusted: boolean): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const forwarded = request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined;
    if (!isLoopbackAddress(request.ip) || (forwarded && !proxiesTrusted)) {
      throw new NotFound(`No route for ${request.method} ${request.url.split('?')[0]}`);
    }
  };
}
