/**
 * Connection timeouts of the HTTP(S) server. Node closes an idle keep-alive connection after 5 s by default,
 * shorter than the pause many clients make between two requests of one job (auth0-deploy-cli validating a large
 * configuration, a pool behind a load balancer that keeps connections 60 s): the client then writes its next
 * request into a socket the server is closing and gets a reset. The server keeps idle connections longer than
 * those clients (GATEHOUSE_KEEP_ALIVE_TIMEOUT, 65 s by default), so closing is always the client's move.
 */
import type http from 'node:http';

/** Node's own limit for a whole request; kept unless the header timeout needs more room above it. */
const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

export function applyConnectionTimeouts(server: http.Server, keepAliveTimeoutMs: number): http.Server {
  server.keepAliveTimeout = keepAliveTimeoutMs;
  // A client reusing a connection just before the keep-alive timeout must still get its headers read: the
  // headers timeout runs from the first byte of a request and has to be longer than the keep-alive one, or Node
  // drops a request that arrived on time.
  server.headersTimeout = keepAliveTimeoutMs + 1000;
  // Node requires requestTimeout above headersTimeout (when set at all).
  server.requestTimeout = Math.max(DEFAULT_REQUEST_TIMEOUT_MS, server.headersTimeout + 1000);
  return server;
}
