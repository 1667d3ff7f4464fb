/**
 * What the layers of one request learn for its log event, noted as they learn it: client authentication
 * notes the client, a password login the user and connection. The route that writes the event (the token
 * endpoint, say) reads them at the end, so no layer has to pass log fields through its return values.
 * `outcomeLogged` says a deeper layer already wrote the event of this outcome (a wrong password is `fp`, not also
 * `fepft`).
 */
import type { FastifyRequest } from 'fastify';
import type { LogFacts } from './log-event.js';

export type LogNotes = Omit<Partial<LogFacts>, 'type'> & { outcomeLogged?: boolean };

const notes = new WeakMap<FastifyRequest, LogNotes>();

export function noteForLog(request: FastifyRequest, facts: LogNotes): void {
  notes.set(request, { ...notes.get(request), ...facts });
}

export function notesForLog(request: FastifyRequest): LogNotes {
  return notes.get(request) ?? {};
}
