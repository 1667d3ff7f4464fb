/**
 * What every response must satisfy, whatever was sent: never a 5xx (but a documented 501 for what we do not
 * offer); a 4xx in its family's shape (or, where the documents say so, a page or plain text); never a stack
 * trace or a secret; and, for a documented operation, exactly what the OpenAPI document describes (status, media type, body, required headers).
 */
import { familyOf } from '../../packages/server/src/http/errors.js';
import type { Conformance } from '../../packages/server/src/test-support/openapi-conformance.js';

export interface Exchange {
  method: string;
  /** Path and query, as sent. */
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

export interface InvariantContext {
  conformance: Conformance;
  secrets: Record<string, string>;
}

const FAMILY_FIELDS = {
  oauth: { error: 'string', error_description: 'string' },
  dbconnections: { name: 'string', code: 'string', statusCode: 'number' },
  management: { statusCode: 'number', error: 'string', message: 'string', errorCode: 'string' },
} as const;

const STACK_TRACE = [/\n\s+at [^\n]*:\d+:\d+/, /node_modules\//, /\/(src|dist)\/[\w/.-]+\.(ts|js)\b/, /\bat (async )?[\w.<>]+ \(/];

/** Secrets are checked in these forms too: a body may carry them JSON- or URL-encoded. */
function forms(secret: string): string[] {
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])];
}

export function familyShapeProblems(path: string, status: number, body: string): string[] {
  const family = familyOf(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [`${status} is not JSON in the ${family} shape: ${body.slice(0, 120)}`];
  }
  const fields = FAMILY_FIELDS[family];
  const object = (parsed ?? {}) as Record<string, unknown>;
  const wrong = Object.entries(fields).filter(([name, type]) => typeof object[name] !== type);
  if (family === 'dbconnections' && typeof object.description !== 'string' && typeof object.description !== 'object') wrong.push(['description', 'string']);
  return wrong.length > 0 ? [`${status} is not in the ${family} shape (${wrong.map(([n]) => n).join(', ')}): ${body.slice(0, 160)}`] : [];
}

export function checkExchange(exchange: Exchange, context: InvariantContext): string[] {
  const path = exchange.url.split('?')[0]!;
  const problems: string[] = [];
  for (const pattern of STACK_TRACE) {
    if (pattern.test(exchange.body)) problems.push(`a stack trace or source path in the body (${pattern}): ${exchange.body.slice(0, 200)}`);
  }
  const headerText: string[] = [];
  exchange.headers.forEach((value, name) => headerText.push(`${name}: ${value}`));
  for (const [name, secret] of Object.entries(context.secrets)) {
    // A token with read:client_keys may read every client's secret, the admin client's too (as the reference's
    // Management API allows); the fuzzer's token has every scope.
    if (name === 'admin client secret' && path.startsWith('/api/v2/clients')) continue;
    if (secret.length >= 8 && forms(secret).some((form) => exchange.body.includes(form) || headerText.some((h) => h.includes(form)))) problems.push(`the ${name} is in the response`);
  }
  const mediaType = (exchange.headers.get('content-type') ?? '').split(';')[0]!.trim();
  // 431 is the HTTP server's answer before any route is met: its family's shape, like a 404 or 405.
  const beforeRouting = exchange.status === 431;
  // Methods are case-sensitive (RFC 9110 §9.1): `Get` is not GET, and meets no documented operation.
  const standard = exchange.method === exchange.method.toUpperCase();
  const matched = exchange.method === 'HEAD' || beforeRouting || !standard ? undefined : context.conformance.match(exchange.method, path);
  // A 501 is an honest answer for a feature we do not offer, where the document says so (checked just below);
  // any other 5xx, and a 501 anywhere else, is a defect.
  if (exchange.status >= 500 && !(exchange.status === 501 && matched)) problems.push(`a ${exchange.status}: ${exchange.body.slice(0, 200)}`);
  if (matched) {
    problems.push(...context.conformance.check({ method: exchange.method, path, status: exchange.status, headers: exchange.headers, body: exchange.body }));
  } else if (exchange.status >= 400 && exchange.method !== 'HEAD') {
    // No documented operation (an unknown path or method): the answer is still its family's JSON.
    problems.push(...familyShapeProblems(path, exchange.status, exchange.body));
  }
  if (matched && exchange.status >= 400 && mediaType.endsWith('json')) problems.push(...familyShapeProblems(path, exchange.status, exchange.body));
  return problems;
}
