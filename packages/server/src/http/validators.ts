/**
 * How request parts are validated. JSON bodies carry their own types, so they are never coerced: a number where
 * a string belongs is a 400, as the reference answers (issue #19: `{"name":12345}` used to become "12345").
 * Query strings, path parameters, headers and form bodies are text, so their values are read as the schema's
 * type, strictly: an integer is decimal digits (not `0x10`, ` 5` or `1e3`), a number a plain decimal, a boolean
 * `true` or `false`. Ajv (through @fastify/ajv-compiler, as Fastify does by default) does the validation; this
 * chooses the coercing or the strict compiler per request part, and per body by how it was sent.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;
type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
type Schema = Record<string, unknown>;

/** Bodies parsed from application/x-www-form-urlencoded (error-handler.ts parseFormBody): text to be read as typed. */
const FORM_BODIES = new WeakSet<object>();

export function markFormBody<T extends object>(body: T): T {
  FORM_BODIES.add(body);
  return body;
}

/** What text a value of each scalar type must be before it is read as that type. */
const TEXT_FORMS: Record<string, RegExp> = {
  integer: /^-?(0|[1-9]\d{0,15})$/,
  number: /^-?(0|[1-9]\d*)(\.\d+)?$/,
  boolean: /^(true|false)$/,
};

interface TextCheck {
  property: string;
  type: string;
}

/** The top-level properties of an object schema whose type is a scalar that text must spell strictly. */
function textChecks(schema: Schema | undefined): TextCheck[] {
  const properties = (schema?.properties ?? {}) as Record<string, Schema>;
  return Object.entries(properties).flatMap(([property, sub]) => {
    const type = sub.type;
    return typeof type === 'string' && TEXT_FORMS[type] ? [{ property, type }] : [];
  });
}

/** Refuses text that Ajv would coerce loosely (`0x10` → 16, ` 5` → 5, `1e3` → 1000), then lets Ajv read it. */
function strictText(checks: TextCheck[], coercing: Validate): Validate {
  if (checks.length === 0) return coercing;
  const validate: Validate = (data) => {
    if (data && typeof data === 'object') {
      for (const { property, type } of checks) {
        const value = (data as Record<string, unknown>)[property];
        if (typeof value === 'string' && !TEXT_FORMS[type]!.test(value)) {
          validate.errors = [{ instancePath: `/${property}`, schemaPath: `#/properties/${property}/type`, keyword: 'type', params: { type }, message: `must be ${type}` }];
          return false;
        }
      }
    }
    const valid = coercing(data);
    validate.errors = coercing.errors ?? null;
    return valid;
  };
  return validate;
}

interface Route {
  schema: unknown;
  httpPart?: string;
}

/**
 * One pool of Ajv instances for the process, keyed (by @fastify/ajv-compiler) on the external schemas and the
 * options, as Fastify's own default keeps one per server. Fastify asks for a compiler once per plugin context
 * (about twenty per server): a pool per call built two fresh Ajv instances each time, about a third of a
 * start-up's CPU. A second server in the same process (tests boot several) also reuses what Ajv compiled for
 * the routes' shared schema objects, and starts in a fifth of the time.
 */
const ajvPool = AjvCompiler();

/** When route schemas are compiled: set by schema-compilation.test.ts, which proves that every one compiles. */
export const schemaCompilation = { atStartUp: false };

/**
 * A validator compiled on its first request instead of at start-up. Compiling every route's schemas with Ajv was
 * about 70% of `gatehouse start`'s CPU before it answered (3 of 4.2 s), for a thousand routes of which a process
 * serves a few; a route now pays its own compilation (a few milliseconds) once, on its first request. A schema
 * Ajv refuses shows on that request instead of at start-up: openapi.test.ts sends every documented route a
 * request that reaches its validator, and schema-compilation.test.ts compiles every route's schemas at start-up.
 */
function lazy(compile: () => Validate): Validate {
  if (schemaCompilation.atStartUp) return compile();
  let compiled: Validate | undefined;
  const validate: Validate = (data) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors ?? null;
    return valid;
  };
  return validate;
}

function build(externalSchemas: unknown, options: unknown): (route: Route) => Validate {
  const factory = ajvPool;
  const ajv = (options ?? {}) as { customOptions?: Record<string, unknown> };
  const coercing = factory(externalSchemas as never, { ...ajv, customOptions: { ...ajv.customOptions, coerceTypes: 'array' } } as never);
  const strict = factory(externalSchemas as never, { ...ajv, customOptions: { ...ajv.customOptions, coerceTypes: false } } as never);
  return (route) => {
    const schema = route.schema as Schema;
    if (route.httpPart !== 'body') return strictText(textChecks(schema), lazy(() => coercing(route as never) as Validate));
    const json = lazy(() => strict(route as never) as Validate);
    const form = strictText(textChecks(schema), lazy(() => coercing(route as never) as Validate));
    const validate: Validate = (data) => {
      const chosen = data !== null && typeof data === 'object' && FORM_BODIES.has(data) ? form : json;
      const valid = chosen(data);
      validate.errors = chosen.errors ?? null;
      return valid;
    };
    return validate;
  };
}

/** Fastify's type wants Ajv's own function objects; Fastify itself calls them and reads `errors`, no more. */
export const buildValidator = build as unknown as ValidatorFactory;
