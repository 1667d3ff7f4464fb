/**
 * application/x-www-form-urlencoded bodies (and query strings, which share the syntax): the fields a surface
 * expects with plausible or hostile values, fields left out, repeated or unknown, and broken percent-encoding.
 */
import fc from 'fast-check';
import { hostileText } from './text.js';

const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

/** One `name=value` pair as text; sometimes with raw, unencoded or broken escapes. */
function pair(name: string, value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: value.map((v) => `${encode(name)}=${encode(v)}`) },
    { weight: 1, arbitrary: value.map((v) => `${name}=${v.replace(/[&#]/g, '')}`) },
    { weight: 1, arbitrary: fc.constantFrom(`${name}`, `${name}=`, `${name}=%`, `${name}=%E0%A4%A`, `${name}[]=x`, `${name}[a]=x`) },
  );
}

/**
 * Form or query text for these fields: each field present (mostly), absent, or repeated, plus unknown fields,
 * in shuffled order.
 */
export function formText(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const parts = Object.entries(fields).map(([name, value]) =>
    fc.oneof({ weight: 6, arbitrary: pair(name, value).map((p) => [p]) }, { weight: 1, arbitrary: fc.constant([] as string[]) }, { weight: 1, arbitrary: fc.tuple(pair(name, value), pair(name, value)).map(([a, b]) => [a, b]) }),
  );
  const unknown = fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), hostileText).chain(([name, value]) => pair(`x${name}`, fc.constant(value))), { maxLength: 2 });
  return fc.tuple(fc.tuple(...parts), unknown).chain(([groups, extra]) => fc.shuffledSubarray([...groups.flat(), ...extra], { minLength: groups.flat().length + extra.length }).map((all) => all.join('&')));
}

/** A value that is mostly one of `plausible`, otherwise hostile text. */
export function field(...plausible: string[]): fc.Arbitrary<string> {
  return plausible.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...plausible) }, { weight: 1, arbitrary: hostileText }) : hostileText;
}
