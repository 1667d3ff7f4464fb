/**
 * Requests this process has received and not yet finished answering (or lost to a closed connection). Background
 * work that shares the event loop and, on SQLite, the one database connection (the job runner) gives way while
 * any are waiting: a login that queues behind an import batch at every query it makes would take as many batches.
 */
import type { Server } from 'node:http';

let inFlight = 0;
let received = 0;

/** Requests being answered right now, in this process. */
export function requestsInFlight(): number {
  return inFlight;
}

/** Requests received since this process started (a difference of two readings is the traffic in between). */
export function requestsReceived(): number {
  return received;
}

/** Counts the requests of `server` from arrival until their response is finished or their connection closes. */
export function countRequestsInFlight(server: Server): void {
  server.on('request', (_request, response) => {
    inFlight += 1;
    received += 1;
    response.once('close', () => {
      inFlight -= 1;
    });
  });
}
