/**
 * Connection timeouts of the HTTP(S) server. Node closes an idle keep-alive connection after 5 s by default,
 * shorter than the pause many clients make between two requests of one job (auth0-deploy-cli validating a large
 * configuration, a pool behind a load balancer that keeps connections 60 s): the client then writes its next
 * request into a socket the server is closing and gets a reset. The server keeps idle connections longer than
 * those clients (GATEHOUSE_KEEP_ALIVE_TIMEOUT, 65 s by default), so closing is always the client's move.
 *
 * When the server does close an idle connection, it first reads what has already arrived on it. A client whose
 * event loop was busy past the timeout (auth0-deploy-cli compiles its whole schema synchronously, tens of seconds
 * on a loaded machine) writes its next requests the moment it resumes, before its pool has seen any close; a
 * server that is late to its timer for the same reason (the same busy process, or just a busy server) finds
 * those requests waiting. Closing a socket with unread data makes the kernel answer with a reset (ECONNRESET
 * for every request in flight on it), so a connection that received anything since it went idle is served
 * instead, and its keep-alive timer starts again after that response.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

/** Node's own limit for a whole request; kept unless the header timeout needs more room above it. */
const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

/**
 * The server's 'timeout' listener (Node then leaves the socket to it): close unless bytes arrived. The check
 * waits for the event loop's poll phase, which reads what the kernel holds for this socket.
 */
function closeUnlessRequestArrived(socket: Socket): void {
  const readAtTimeout = socket.bytesRead;
  setImmediate(() => {
    if (socket.bytesRead === readAtTimeout) socket.destroy();
  });
}

export function applyConnectionTimeouts(server: http.Server, keepAliveTimeoutMs: number): http.Server {
  server.keepAliveTimeout = keepAliveTimeoutMs;
  // A client reusing a connection just before the keep-alive timeout must still get its headers read: the
  // headers timeout runs from the first byte of a request and has to be longer than the keep-alive one, or Node
  // drops a request that arrived on time.
  server.headersTimeout = keepAliveTimeoutMs + 1000;
  // Node requires requestTimeout above headersTimeout (when set at all).
  server.requestTimeout = Math.max(DEFAULT_REQUEST_TIMEOUT_MS, server.headersTimeout + 1000);
  server.on('timeout', closeUnlessRequestArrived);
  return server;
}
