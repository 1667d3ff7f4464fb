/** Text the grammars mix into every surface: the ordinary, the long, the encoded and the hostile. */
import fc from 'fast-check';

export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 24, unit: 'grapheme' }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', 'undefined', 'true', '0', '-1', '1e999999', 'NaN', '[]', '{}', '%', '%zz', '%00', '\u0000', '\r\n', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --", '${7*7}', '{{7*7}}', 'ｕｓｅｒ@example.com', 'a'.repeat(5000)) },
  { weight: 1, arbitrary: fc.string({ minLength: 200, maxLength: 5000 }) },
);
