/**
 * Holds real responses to an OpenAPI document: the operation that the method and path match, the status among
 * its documented responses, the media type among the documented ones (or no body where none is documented),
 * the body valid against the documented schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses), and every header
 * documented as required present. Used by http/openapi.test.ts and by the fuzzing campaign (test/fuzz/).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  description?: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, { required?: boolean }>;
}
export interface OperationObject {
  responses?: Record<string, ResponseObject>;
  security?: Record<string, string[]>[];
  summary?: string;
  tags?: string[];
  [key: string]: unknown;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ObservedResponse {
  method: string;
  /** The request path, without the query. */
  path: string;
  status: number;
  headers: Headers;
  body: string;
}

export interface MatchedOperation {
  /** The document's path template, e.g. /api/v2/roles/{id}. */
  template: string;
  method: string;
  operation: OperationObject;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `{id}` → `:id`, for the router. */
const routerPath = (template: string) => template.replace(/\{([^}]+)\}/g, ':$1');
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly router = FindMyWay({ ignoreTrailingSlash: false, maxParamLength: 2000 });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly id: string;

  constructor(
    readonly document: OpenApiDocument,
    name = 'openapi',
  ) {
    addFormats.default(this.ajv);
    this.id = `${name}.json`;
    this.ajv.addSchema(document as object, this.id);
    for (const [template, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        if (item[method]) this.router.on(method.toUpperCase() as HTTPMethod, routerPath(template), () => undefined, { template, method });
      }
    }
  }

  /** The documented operation a request meets (HEAD is its GET), if any. */
  match(method: string, path: string): MatchedOperation | undefined {
    const verb = (method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase()) as HTTPMethod;
    let found;
    try {
      found = this.router.find(verb, path);
    } catch {
      return undefined;
    }
    if (!found) return undefined;
    const { template, method: lower } = found.store as { template: string; method: string };
    return { template, method: lower.toUpperCase(), operation: this.document.paths[template]![lower]! };
  }

  /** Every documented (operation, status) pair, as `METHOD template status`. */
  documentedStatuses(): string[] {
    return Object.entries(this.document.paths).flatMap(([template, item]) =>
      METHODS.flatMap((method) => Object.keys(item[method]?.responses ?? {}).map((status) => `${method.toUpperCase()} ${template} ${status}`)),
    );
  }

  private validator(template: string, method: string, status: string, mediaType: string): ValidateFunction {
    const ref = `${this.id}#/${pointer('paths', template, method, 'responses', status, 'content', mediaType, 'schema')}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate;
  }

  /**
   * Why the document refuses `body` as the JSON request body of `method` on `path` (Ajv's text), or undefined when
   * it accepts it or documents no JSON body. Ajv runs here without coercion, as the server reads JSON bodies.
   */
  requestBodyRefusal(method: string, path: string, body: unknown): string | undefined {
    const matched = this.match(method, path);
    const content = (matched?.operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
    if (!matched || !content?.['application/json']) return undefined;
    const ref = `${this.id}#/${pointer('paths', matched.template, matched.method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema')}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate(body) ? undefined : this.ajv.errorsText(validate.errors);
  }

  /** What is wrong with a response, measured against its documented operation; empty when it conforms. */
  check(response: ObservedResponse): string[] {
    const where = `${response.method} ${response.path} → ${response.status}`;
    const matched = this.match(response.method, response.path);
    if (!matched) return [`${where}: no documented operation for this method and path`];
    const { template, operation } = matched;
    const method = matched.method.toLowerCase();
    const documented = operation.responses ?? {};
    const statusKey = String(response.status) in documented ? String(response.status) : `${String(response.status)[0]}XX` in documented ? `${String(response.status)[0]}XX` : 'default';
    const spec = documented[statusKey];
    if (!spec) return [`${where}: status ${response.status} is not documented for ${matched.method} ${template} (documented: ${Object.keys(documented).join(', ')})`];
    const problems: string[] = [];
    for (const [name, header] of Object.entries(spec.headers ?? {})) {
      if (header.required && !response.headers.has(name)) problems.push(`${where}: the required header ${name} is missing`);
    }
    const isHead = response.method.toUpperCase() === 'HEAD';
    if (!spec.content) {
      if (response.body.length > 0 && !isHead) problems.push(`${where}: documented without a body, but one was sent (${response.body.slice(0, 80)})`);
      return problems;
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(mediaType in spec.content)) {
      if (response.body.length === 0 && (isHead || response.status === 304)) return problems;
      problems.push(`${where}: media type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(spec.content).join(', ')})`);
      return problems;
    }
    if (isHead || !mediaType.includes('json')) return problems;
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      problems.push(`${where}: the body is not JSON: ${response.body.slice(0, 80)}`);
      return problems;
    }
    const validate = this.validator(template, method, statusKey, mediaType);
    if (!validate(body)) {
      problems.push(`${where}: the body does not match the documented schema: ${this.ajv.errorsText(validate.errors)}; body: ${response.body.slice(0, 300)}`);
    }
    return problems;
  }
}
