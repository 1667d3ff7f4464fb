/**
 * The text of a schema validation error, as the reference words it: the rule that failed, in quotes, and the
 * property it failed on, e.g. `Payload validation error: 'Expected type string but found type integer' on
 * property name.` The first error only (Ajv runs with allErrors off): what to fix first.
 */
import type { FastifyRequest } from 'fastify';
import type { RequestPart } from './errors.js';

interface AjvError {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
}

const LABELS: Record<RequestPart, string> = {
  body: 'Payload validation error',
  querystring: 'Query validation error',
  params: 'Path validation error',
  headers: 'Header validation error',
};

/** The JSON type of a value in the words of JSON Schema (an integral number is an integer). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function segments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `/scopes/0/value` → `scopes[0].value`. */
function propertyName(parts: string[]): string {
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function valueAt(data: unknown, parts: string[]): unknown {
  let at = data;
  for (const part of parts) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function dataOf(request: FastifyRequest, part: RequestPart): unknown {
  switch (part) {
    case 'body':
      return request.body;
    case 'querystring':
      return request.query;
    case 'params':
      return request.params;
    case 'headers':
      return request.headers;
  }
}

export function validationMessage(errors: readonly AjvError[], part: RequestPart, request: FastifyRequest, fallback: string): string {
  const first = errors[0];
  if (!first) return `${LABELS[part]}: ${fallback}`;
  const path = segments(first.instancePath ?? '');
  const params = first.params ?? {};
  let rule: string;
  const property = propertyName(path);
  switch (first.keyword) {
    case 'type': {
      const value = valueAt(dataOf(request, part), path);
      // A query or path value that failed is text that does not spell the type: say which (when short and plain).
      const text = typeof value === 'string' && part !== 'body' && /^[\w .+-]{0,40}$/.test(value) ? ` "${value}"` : '';
      const found = value === undefined ? 'undefined' : `${jsonType(value)}${text}`;
      rule = `Expected type ${String(params.type)} but found type ${found}`;
      break;
    }
    case 'required':
      rule = `Missing required property: ${String(params.missingProperty)}`;
      break;
    case 'additionalProperties':
      rule = `Additional properties not allowed: ${String(params.additionalProperty).slice(0, 100)}`;
      break;
    default:
      rule = (first.message ?? 'is invalid').replace(/^must /, 'Must ');
  }
  return property ? `${LABELS[part]}: '${rule}' on property ${property}.` : `${LABELS[part]}: '${rule}'.`;
}
