/**
 * NUL characters are refused in every body, query and path value, before any handler runs. SQLite would store
 * them and PostgreSQL would fail on them; refusing them here keeps both dialects' behaviour the same, and keeps
 * them out of logs and downstream systems.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInput, type RequestPart } from './errors.js';

function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((v) => containsNul(v, depth + 1));
  // for…in over own keys: Object.entries allocated an array of pairs for every body on every request.
  for (const key in value) {
    if (Object.hasOwn(value, key) && (key.includes('\u0000') || containsNul((value as Record<string, unknown>)[key], depth + 1))) return true;
  }
  return false;
}

export function registerInputGuards(app: FastifyInstance): void {
  // A callback hook: it awaits nothing, and runs before every handler.
  app.addHook('preValidation', (request, _reply, done) => {
    if (containsNul(request.params)) done(nulIn('params'));
    else if (containsNul(request.query)) done(nulIn('querystring'));
    else if (containsNul(request.body)) done(nulIn('body'));
    else done();
  });
}

function nulIn(part: RequestPart): InvalidInput {
  return new InvalidInput(part, `The ${part === 'querystring' ? 'query string' : part} contains a NUL character`);
}
