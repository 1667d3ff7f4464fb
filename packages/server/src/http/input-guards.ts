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
  return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v, depth + 1));
}

export function registerInputGuards(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts: [RequestPart, unknown][] = [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ];
    for (const [part, value] of parts) {
      if (containsNul(value)) throw new InvalidInput(part, `The ${part === 'querystring' ? 'query string' : part} contains a NUL character`);
    }
  });
}
