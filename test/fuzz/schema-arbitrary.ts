/**
 * fast-check arbitraries from the JSON Schemas of an OpenAPI document: values that fit a schema (so that inputs
 * get past validation and reach the handlers), and values that break it on purpose, above all type confusion:
 * a number where a string belongs, a string for an array, `true` for an object, a number too large for any type.
 */
import fc from 'fast-check';

type Schema = Record<string, unknown>;

/** A JSON value of any type, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

/** Text that JSON.stringify cannot make: numbers beyond float range, deep nesting. Spliced in as raw JSON. */
export const RAW_JSON_VALUES = ['1e999999', '-1e999999', '123456789012345678901234567890', '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]', '"\\ud800"'];

/** A value of another JSON type than `type`: the heart of type confusion. */
export function confusedWith(type: string | undefined): fc.Arbitrary<unknown> {
  const others: fc.Arbitrary<unknown>[] = [];
  if (type !== 'string') others.push(fc.string({ maxLength: 12 }), fc.constant('12345'), fc.constant('true'));
  if (type !== 'integer' && type !== 'number') others.push(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(0));
  if (type !== 'boolean') others.push(fc.boolean());
  if (type !== 'array') others.push(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }), fc.constant([]));
  if (type !== 'object') others.push(fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 2 }), fc.constant({}));
  if (type !== 'null') others.push(fc.constant(null));
  return fc.oneof(...others);
}

export class SchemaArbitraries {
  constructor(private readonly document: { components?: { schemas?: Record<string, Schema> } }) {}

  private resolve(schema: Schema): Schema {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    const name = ref.split('/').pop()!;
    return this.document.components?.schemas?.[name] ?? {};
  }

  /** Values that fit `schema` (as far as a generator can: patterns with lookarounds fall back to any text). */
  valid(input: Schema, depth = 0): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    if (depth > 4) return fc.constant(null);
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (alternatives?.length) return fc.oneof(...alternatives.map((s) => this.valid(s, depth + 1)));
    const type = Array.isArray(schema.type) ? (schema.type[0] as string) : (schema.type as string | undefined);
    switch (type) {
      case 'string':
        return this.string(schema);
      case 'integer':
        return fc.integer({ min: (schema.minimum as number | undefined) ?? -1000, max: (schema.maximum as number | undefined) ?? 100_000 });
      case 'number':
        return fc.double({ min: (schema.minimum as number | undefined) ?? -1e6, max: (schema.maximum as number | undefined) ?? 1e6, noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.array(this.valid((schema.items as Schema | undefined) ?? {}, depth + 1), {
          minLength: Math.min((schema.minItems as number | undefined) ?? 0, 3),
          maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3),
        });
      case 'object':
        return this.object(schema, depth);
      default:
        return anyJson;
    }
  }

  private string(schema: Schema): fc.Arbitrary<string> {
    const minLength = (schema.minLength as number | undefined) ?? 0;
    const maxLength = Math.min((schema.maxLength as number | undefined) ?? 40, 60);
    if (schema.format === 'email') return fc.emailAddress();
    if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    if (schema.format === 'uri' || schema.format === 'uri-reference') return fc.webUrl();
    if (typeof schema.pattern === 'string' && !/\(\?[=!<]/.test(schema.pattern)) {
      try {
        return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= minLength && s.length <= Math.max(maxLength, minLength));
      } catch {
        // A pattern fast-check cannot generate from: any text of the right length.
      }
    }
    return fc.string({ minLength, maxLength: Math.max(maxLength, minLength), unit: fc.oneof(fc.constant('a'), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' })) });
  }

  private object(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(properties)) record[name] = this.valid(property, depth + 1);
    if (Object.keys(record).length === 0) return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 });
    return fc.record(record, { requiredKeys: [...required].filter((k) => k in record) });
  }

  /**
   * Values that break `schema` on purpose: type confusion (one property, or the whole value, of another type),
   * unknown properties, or valid values (a third of the time, so that the handlers see real requests).
   */
  hostile(input: Schema): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    const type = Array.isArray(schema.type) ? (schema.type[0] as string) : (schema.type as string | undefined);
    const properties = Object.keys((schema.properties as Record<string, Schema> | undefined) ?? {});
    const confusedProperty =
      type === 'object' && properties.length > 0
        ? fc
            .tuple(this.valid(schema) as fc.Arbitrary<Record<string, unknown>>, fc.constantFrom(...properties))
            .chain(([value, name]) => {
              const property = this.resolve(((schema.properties as Record<string, Schema>)[name] ?? {}) as Schema);
              const propertyType = Array.isArray(property.type) ? (property.type[0] as string) : (property.type as string | undefined);
              return confusedWith(propertyType).map((wrong) => ({ ...value, [name]: wrong }));
            })
        : undefined;
    return fc.oneof(
      { weight: 3, arbitrary: this.valid(schema) },
      { weight: 4, arbitrary: confusedProperty ?? confusedWith(type) },
      { weight: 1, arbitrary: confusedWith(type) },
      { weight: 1, arbitrary: fc.tuple(this.valid(schema), fc.string({ minLength: 1, maxLength: 10 })).map(([value, key]) => (value && typeof value === 'object' && !Array.isArray(value) ? { ...value, [`x-${key}`]: 1 } : value)) },
    );
  }
}
