/** Cookie headers: the server's own cookie names with forged values, malformed pairs, repeats and sizes. */
import fc from 'fast-check';
import { hostileText } from './text.js';

/** Header values travel as bytes: text beyond Latin-1 goes as its UTF-8 bytes, as a browser would send it. */
const latin1 = (text: string) =>
  [...Buffer.from(text, 'utf8').toString('latin1')].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f).join('');

const NAMES = ['gh_session', 'gh_tx', 'gh_co', 'did', 'auth0', 'x'];

export const cookieHeader: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...NAMES), fc.oneof(fc.string({ maxLength: 64, unit: fc.constantFrom(...'0123456789abcdef') }), fc.base64String({ maxLength: 64 }), hostileText)).map(([n, v]) => `${n}=${latin1(v.replace(/[;\r\n]/g, ''))}`) },
      { weight: 1, arbitrary: fc.constantFrom('=', ';', 'gh_session', 'gh_session==', '"gh_session"="x"', `gh_session=${'a'.repeat(4096)}`) },
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((pairs) => pairs.join('; '));
