/**
 * User search queries within the length limit but of every complexity: many terms, deep nesting, wildcards,
 * ranges, field names of every kind. Too complex is a 400 in the Management shape; never a 5xx.
 */
import fc from 'fast-check';
import type { Family, FuzzRequest } from './family.js';
import { runRequest } from './openapi-operations.js';

const FIELDS = ['email', 'name', 'user_id', 'username', 'email_verified', 'logins_count', 'created_at', 'user_metadata.plan', 'app_metadata.tier', 'identities.connection', 'x'];

const term: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('a', 'a*', '*', '"a b"', 'a?', '\\*', 'true', '1'),
  fc.tuple(fc.constantFrom(...FIELDS), fc.constantFrom(':a', ':"a b"', ':a*', ':[1 TO 5]', ':{a TO *}', ':*', ':')).map(([f, v]) => `${f}${v}`),
);

const query: fc.Arbitrary<string> = fc.letrec<{ q: string }>((tie) => ({
  q: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    term,
    fc.tuple(tie('q'), fc.constantFrom(' AND ', ' OR ', ' ', ' NOT ', ' && ', ' || '), tie('q')).map(([a, op, b]) => `${a}${op}${b}`),
    tie('q').map((q) => `(${q})`),
    tie('q').map((q) => `NOT ${q}`),
  ),
})).q;

const wide: fc.Arbitrary<string> = fc.tuple(term, fc.integer({ min: 50, max: 1000 }), fc.constantFrom(' ', ' OR ', ' AND ')).map(([t, n, op]) => Array.from({ length: n }, () => t).join(op));
const deep: fc.Arbitrary<string> = fc.integer({ min: 10, max: 600 }).map((n) => `${'('.repeat(n)}a${')'.repeat(n)}`);

export const queryComplexity: Family<FuzzRequest> = {
  name: 'query-complexity',
  summary: 'GET /api/v2/users?q= of many terms, deep nesting and wildcards within 2,000 characters; sort and paging extremes',
  arbitrary: (context) =>
    fc
      .tuple(fc.oneof(query, wide, deep).map((q) => q.slice(0, 2000)), fc.option(fc.constantFrom('email:1', 'created_at:-1', 'name:1', 'x:1'), { nil: undefined }), fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined }))
      .map(([q, sort, page]) => ({
        method: 'GET',
        url: `/api/v2/users?${new URLSearchParams({ q, ...(sort && { sort }), ...(page !== undefined && { page: String(page), per_page: '50' }) })}`,
        headers: { authorization: `Bearer ${context.token}` },
      })),
  run: runRequest,
};
