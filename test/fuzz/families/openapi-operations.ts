/**
 * Requests generated from an OpenAPI document's operations: a documented operation, its path parameters (real
 * ids or hostile text), its query parameters and its JSON body, each valid or broken on purpose (type
 * confusion on every body, unknown properties, wrong types in the query). Used by the management,
 * authentication and dbconnections families, each with its own operations.
 */
import fc from 'fast-check';
import type { OperationObject } from '../../../packages/server/src/test-support/openapi-conformance.js';
import { hostileText } from '../grammars/index.js';
import { RAW_JSON_VALUES } from '../schema-arbitrary.js';
import { send, type FuzzContext, type FuzzRequest } from './family.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

export interface DocumentedOperation {
  method: string;
  template: string;
  operation: OperationObject;
}

export function operationsOf(context: FuzzContext, keep: (template: string, method: string) => boolean): DocumentedOperation[] {
  return Object.entries(context.document.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => keep(template, method.toUpperCase()))
      .map(([method, operation]) => ({ method: method.toUpperCase(), template, operation })),
  );
}

function pathValue(context: FuzzContext, name: string): fc.Arbitrary<string> {
  const known = context.ids[name] ?? [];
  return known.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: hostileText.filter((s) => s.length > 0) }) : hostileText.filter((s) => s.length > 0);
}

/** A query value as text: what the schema wants, or anything. */
function queryValue(context: FuzzContext, schema: Record<string, unknown> | undefined): fc.Arbitrary<string> {
  const valid = context.schemas.valid(schema ?? {}).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: hostileText });
}

export function requestFor(context: FuzzContext, { method, template, operation }: DocumentedOperation, headers: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  const parameters = ((operation.parameters ?? []) as Parameter[]).filter((p) => p.in === 'path' || p.in === 'query');
  const pathParameters = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const path = fc.tuple(...pathParameters.map((name) => pathValue(context, name))).map((values) => {
    let i = 0;
    return template.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[i++]!));
  });
  const query = fc
    .tuple(...parameters.filter((p) => p.in === 'query').map((p) => fc.option(queryValue(context, p.schema).map((v) => [p.name, v] as const), { nil: undefined, freq: p.required ? 10 : 2 })))
    .map((pairs) => new URLSearchParams(pairs.filter((p): p is readonly [string, string] => p !== undefined).map(([k, v]) => [k, v])).toString());
  const content = (operation.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined)?.content;
  const jsonSchema = content?.['application/json']?.schema;
  const body: fc.Arbitrary<string | undefined> = jsonSchema
    ? fc.oneof(
        { weight: 12, arbitrary: context.schemas.hostile(jsonSchema).map((v) => JSON.stringify(v)) },
        // Numbers and nesting JSON.stringify cannot write, spliced in where a value goes.
        { weight: 1, arbitrary: fc.tuple(context.schemas.valid(jsonSchema), fc.constantFrom(...RAW_JSON_VALUES)).map(([v, raw]) => spliceRaw(v, raw)) },
        { weight: 1, arbitrary: fc.constantFrom('', '{', 'null', '[]', '"text"', '{"a":1,"a":2}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}') },
      )
    : fc.constant(undefined);
  return fc.tuple(path, query, body).map(([p, q, b]) => ({
    method,
    url: q ? `${p}?${q}` : p,
    headers: { ...headers, ...(b !== undefined && { 'content-type': 'application/json' }) },
    ...(b !== undefined && { body: b }),
  }));
}

/** The JSON of `value` with its first property value (or the whole value) replaced by raw JSON text. */
function spliceRaw(value: unknown, raw: string): string {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const [first] = Object.keys(value);
    if (first !== undefined) return JSON.stringify({ ...value, [first]: '__RAW__' }).replace('"__RAW__"', raw);
  }
  return raw;
}

/**
 * Puts real values into some generated JSON bodies (`client_id`, `connection`, …), half the time, so that the
 * handlers past the lookups are reached too.
 */
export function withRealValues(request: fc.Arbitrary<FuzzRequest>, values: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(request, fc.boolean()).map(([r, real]) => {
    if (!real || !r.body?.startsWith('{')) return r;
    try {
      const body = JSON.parse(r.body) as Record<string, unknown>;
      if (!body || typeof body !== 'object' || Array.isArray(body)) return r;
      return { ...r, body: JSON.stringify({ ...body, ...values }) };
    } catch {
      return r;
    }
  });
}

/**
 * Every invariant of `send`, and one of its own: a JSON body the document refuses (a number where a string
 * belongs, a string where an array does) is never accepted, as it would be if the server coerced it.
 */
export async function runRequest(context: FuzzContext, request: FuzzRequest): Promise<string[]> {
  const { exchange, problems } = await send(context, request);
  if (exchange.status < 300 && request.body !== undefined && request.headers?.['content-type'] === 'application/json') {
    let body: unknown;
    try {
      body = JSON.parse(request.body);
    } catch {
      return [...problems, `${request.method} ${request.url.split('?')[0]}: a body that is not JSON was accepted (${exchange.status})`];
    }
    const refusal = context.conformance.requestBodyRefusal(request.method, request.url.split('?')[0]!, body);
    if (refusal) problems.push(`${request.method} ${request.url.split('?')[0]}: a body the document refuses was accepted (${exchange.status}): ${refusal}`);
  }
  return problems;
}
